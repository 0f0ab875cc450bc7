"""Run prstack's oracles on the real stacks of stacks.tsv (find.py); print figures per repository.

    PRSTACK_STACKS_MIRRORS=/work/.mirror python bench/stacks/run.py --jobs 2             # every stack
    python bench/stacks/run.py --repo pytorch/ao --limit 5 --only top,drop --show-failures
    python bench/stacks/run.py --out /tmp/stacks.jsonl                                  # keep per-case details
    python bench/stacks/run.py --repo huggingface/trl --limit 20 --only top,drop --clone path-origin,shallow

Oracles, each `prstack audit ... --format json` in a fresh process (the installed entry point), on trees
made by `git archive`:
- top: the top PR against its head's tree: exit 0, every hunk present (applied/relocated; not-shipped and
  unverifiable allowed).
- drop: the top's tree with one commit's change to one shipped .py file reverted (the first commit of the
  top's own range, else of a parent, that modifies such a file and whose reverse applies cleanly; else
  skipped): exit 1, some hunk of that file not present, no other file's hunk turned from present to not.
  False present: every hunk of the file still present.
- parent: the direct parent P against P's head tree (exit 0, all present), then the top against P's tree:
  exit 1, every hunk of P and what P stacks on present, every hunk of the top's own not present.
- patch: each PR's diff as GitHub serves it (merge base with main .. head), bottom first, as
  `--patch N.diff ...` against the top's tree: every hunk present, except a lower patch's hunk that the
  tree lacks as that patch wrote it (`lowered`, by text alone: a run of its added lines is not in the file,
  whitespace, line breaks and a formatter's trailing commas aside; a pure deletion's removed lines still
  stand together). History took such a hunk back or
  rewrote it outside the patches (main's rewrite of a squash-merged parent, merged into the child), so
  "not present" is the truth from the diffs, and such a hunk called present without a rewrite the
  patches name (`superseded_by`) is a false present. A pure deletion whose context no longer stands
  together may be either. Exit 0, or exit 1 with only such hunks not present.
Per-case details go to --out (JSON lines, default $TMPDIR/prstack-stacks/results.jsonl).

--clone SHAPE (repeatable, or a comma list; default bare) runs the oracles with `--git` at a clone of the
snapshot in the shape users have it (clones.py), built once per repository in a temporary folder; the
trees, reverts and patches still come from the snapshot itself. One table per shape.

--target KIND (repeatable, or a comma list; default tree) runs the top and drop oracles against a target
built from the top's tree (and from the drop's reverted tree) as users install it: tree, wheel, site,
editable, image (targets.py). The parent and patch oracles run in the tree pass only. One table per clone
shape and target kind.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import unidiff

sys.path.insert(0, str(Path(__file__).parent))
from clones import SHAPES, make_clone
from find import DEFAULT, Stack, load, mirror

from targets import KINDS, NoTarget, target_args

PRSTACK = shutil.which("prstack") or str(Path(sys.executable).parent / "prstack")
TIMEOUT = 300
PRESENT = {"applied", "relocated"}
NEUTRAL = {"not-shipped", "unverifiable"}
ORACLES = ("top", "drop", "parent", "patch")
NOT_SHIPPED_DIRS = {"tests", "test", "docs", "doc", "examples", "benchmarks", "scripts", ".github", "tutorials"}
Hunk = dict[str, Any]


@dataclass
class Audit:
    cmd: list[str]
    rc: int | str  # exit code, or "timeout"
    seconds: float
    hunks: list[Hunk]
    stderr: str
    tree: str = ""  # how the target tree was made: the archived commit (and the reverted change)
    stderr_lines: int = 0  # non-empty lines on stderr (an error must be one line)

    @property
    def bad(self) -> list[Hunk]:
        return [h for h in self.hunks if h["status"] not in PRESENT | NEUTRAL]

    @property
    def counts(self) -> dict[str, int]:
        return dict(Counter(h["status"] for h in self.hunks))

    @property
    def null_pr(self) -> int:
        return sum(h.get("pr") is None for h in self.hunks)


@dataclass
class Result:
    repo: str
    top: int
    oracle: str
    ok: bool | None  # None: skipped
    why: str = ""
    audits: list[Audit] = field(default_factory=list)
    offending: list[Hunk] = field(default_factory=list)
    false_present: int = 0
    detail: dict[str, Any] = field(default_factory=dict)
    clone: str = "bare"  # the shape of the clone given to --git (clones.SHAPES)
    target: str = "tree"  # the kind of target built from the tree (targets.KINDS)

    def record(self) -> dict[str, Any]:
        return {"repo": self.repo, "clone": self.clone, "target": self.target, "top": self.top,
                "oracle": self.oracle, "ok": self.ok, "why": self.why,
                "false_present": self.false_present, "detail": self.detail,
                "audits": [{"cmd": " ".join(a.cmd), "rc": a.rc, "seconds": round(a.seconds, 3),
                            "stderr_lines": a.stderr_lines,
                            "tree": a.tree, "counts": a.counts, "null_pr": a.null_pr, "stderr": a.stderr}
                           for a in self.audits],
                "offending": [short(h) for h in self.offending]}


def short(h: Hunk) -> Hunk:
    keys = ("pr", "path", "status", "superseded_by", "commit", "old_start", "new_start", "note")
    return {k: h[k] for k in keys if k in h}


def git(m: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(m), *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def extract(m: Path, sha: str, dest: Path) -> int:
    """Write the tree of sha to dest (as `git archive | tar -x` would); the count of blobs the snapshot lacks.

    Snapshots may lack their largest blobs, on which `git archive` fails: those files are left out.
    """
    entries = []
    for rec in git(m, "ls-tree", "-r", "-z", "--full-tree", sha).split("\0"):
        if rec:
            meta, _, path = rec.partition("\t")
            mode, kind, blob = meta.split()
            if kind == "blob":
                entries.append((mode, blob, path))
    dest.mkdir(parents=True)
    cat = subprocess.run(["git", "--git-dir", str(m), "cat-file", "--batch"], check=True, capture_output=True,
                         input=b"".join(f"{b}\n".encode() for _, b, _ in entries)).stdout
    pos, lacking = 0, 0
    for mode, _, path in entries:
        nl = cat.index(b"\n", pos)
        header = cat[pos:nl].split()
        pos = nl + 1
        if header[-1] == b"missing":
            lacking += 1
            continue
        size = int(header[2])
        data, pos = cat[pos:pos + size], pos + size + 1
        f = dest / path
        f.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            f.symlink_to(data.decode())
        else:
            f.write_bytes(data)
            if mode == "100755":
                f.chmod(0o755)
    return lacking


def audit(args: list[str], tree: str) -> Audit:
    cmd = [PRSTACK, "audit", *args, "--format", "json"]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return Audit(cmd, "timeout", time.perf_counter() - t0, [], f"timed out after {TIMEOUT} s", tree)
    dt = time.perf_counter() - t0
    err = (r.stderr.strip().splitlines() or [""])[-1][:300]
    if "Traceback (most recent call last)" in r.stderr:
        err = f"traceback: {err}"
    try:
        hunks = json.loads(r.stdout)["hunks"] if r.stdout.strip() else []
    except (json.JSONDecodeError, KeyError, TypeError):
        hunks, err = [], err or "output is not an audit document"
    return Audit(cmd, r.returncode, dt, hunks, err, tree, sum(bool(x.strip()) for x in r.stderr.splitlines()))


def by_pr(g: Path, prs: list[int]) -> list[str]:
    """prstack's arguments for PRs read from the clone `g` (the snapshot itself, or a clone of it)."""
    return [*map(str, prs), "--git", str(g), "--offline"]


def own_commits(m: Path, s: Stack) -> list[tuple[int, str]]:
    """(PR, commit) of the top's own range, oldest first, then each parent's own range, top-down."""
    heads = [*s.parent_heads, s.top_head]
    prs = [*s.parents, s.top]
    out: list[tuple[int, str]] = []
    for i in reversed(range(len(prs))):
        below = [f"^{h}" for h in heads[:i]]
        for c in git(m, "rev-list", "--reverse", "--no-merges", heads[i], *below, f"^{DEFAULT}").split():
            out.append((prs[i], c))
    return out


def shipped_looking(path: str) -> bool:
    parts = path.split("/")
    return (path.endswith(".py") and not NOT_SHIPPED_DIRS & set(parts[:-1])
            and not parts[-1].startswith("test_") and parts[-1] != "conftest.py")


HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


def ranges(diff: str, side: int) -> list[tuple[int, int]]:
    """[start, end] line ranges of a -U0 diff's hunks on one side (0 old, 1 new); a pure insertion or
    deletion is the empty range at its position."""
    out = []
    for mm in HUNK.finditer(diff):
        start, count = int(mm.group(1 + 2 * side)), int(mm.group(2 + 2 * side) or 1)
        out.append((start, start + count - 1) if count else (start, start))
    return out


def drop_one(m: Path, s: Stack, tree: Path) -> tuple[int, str, str] | None:
    """Revert one commit's change to one shipped .py file in tree; (pr, commit, path) or None.

    Only when the revert touches a line of the stack's net change (the diff from the merge base of main and
    the top, new side, boundaries included): a commit whose change a later commit undid, or that main also
    holds (upstreamed, then merged back), is no hunk of the stack.
    """
    mb = git(m, "merge-base", DEFAULT, s.top_head).strip()
    net = set(git(m, "diff", "--name-only", "--no-renames", mb, s.top_head).splitlines())
    for pr, c in own_commits(m, s):
        for line in git(m, "diff-tree", "--no-commit-id", "-r", "--no-renames", "--name-status", c).splitlines():
            st, _, path = line.partition("\t")
            if st != "M" or path not in net or not shipped_looking(path):
                continue
            try:
                diff = git(m, "diff", f"{c}^", c, "--", path)
            except subprocess.CalledProcessError:
                continue  # a blob the snapshot lacks
            check = subprocess.run(["git", "apply", "-R", "--check", "-"], input=diff, cwd=tree, text=True,
                                   capture_output=True)
            if check.returncode:
                continue
            before = (tree / path).read_bytes()
            subprocess.run(["git", "apply", "-R", "-"], input=diff, cwd=tree, text=True, check=True,
                           capture_output=True)
            after = tree / path
            if _layout_only(before, after.read_bytes()):
                after.write_bytes(before)  # a formatting commit: the code is the same, no drop to find
                continue
            orig = tree.parent / "drop-orig"
            orig.write_bytes(before)
            ours = subprocess.run(["git", "diff", "--no-index", "-U0", str(orig), str(after)],
                                  capture_output=True).stdout.decode(errors="replace")
            stack = ranges(git(m, "diff", "-U0", mb, s.top_head, "--", path), 1)
            if any(a <= d and c0 <= b for a, b in ranges(ours, 0) for c0, d in [(x - 1, y + 1) for x, y in stack]):
                return pr, c, path
            after.write_bytes(before)  # the revert misses the stack's net change: undo it, try the next
    return None


def _layout_only(a: bytes, b: bytes) -> bool:
    """Whether two versions of a file differ only in whitespace and line breaks (a re-wrap, trailing
    spaces), or only in the order of the same lines (an import sorter's commit), which the matcher is
    meant to see through."""
    return (b"".join(a.split()) == b"".join(b.split())
            or sorted(line.strip() for line in a.splitlines()) == sorted(line.strip() for line in b.splitlines()))


def is_ancestor(m: Path, a: str, b: str) -> bool:
    return subprocess.run(["git", "--git-dir", str(m), "merge-base", "--is-ancestor", a, b]).returncode == 0


def lacks_blobs(a: Audit) -> bool:
    """The audit stopped on a blob the snapshot lacks (its case has no truth to offer), or, in a
    shallow clone, said in one line that the clone is too shallow (a right answer there)."""
    return a.rc == 2 and ("unable to read" in a.stderr or too_shallow(a))


def unread_only(a: Audit) -> bool:
    """Exit 1 where every hunk not present is a file prstack did not read because the clone lacks
    its blobs (unverifiable, not read): the rest of the stack judged present."""
    lacking = [h for h in a.hunks if h["status"] not in PRESENT and h.get("unverifiable") == "not-read"]
    return a.rc == 1 and bool(lacking) and not a.bad


def too_shallow(a: Audit) -> bool:
    return a.rc == 2 and a.stderr_lines == 1 and "is shallow" in a.stderr and "traceback" not in a.stderr


def run_top(s: Stack, base: Audit, lacking: int) -> Result:
    """The top against its own tree. A snapshot lacking blobs the audit must read (it answers exit 2,
    "unable to read") has no truth to offer: the case is skipped, and counted (so are the drop and
    parent cases whose audits stop so); so is one whose audit reads no file whose blobs it lacks
    (exit 1, those files unverifiable and not read) and finds every other hunk present."""
    if too_shallow(base):
        return Result(s.repo, s.top, "top", None, f"the clone is too shallow: {base.stderr}", audits=[base])
    if lacking and lacks_blobs(base):
        return Result(s.repo, s.top, "top", None, f"the snapshot lacks {lacking} blobs of the stack",
                      audits=[base])
    if unread_only(base):
        return Result(s.repo, s.top, "top", None, "the snapshot lacks blobs of the stack: those files not read "
                      "(exit 1), every other hunk present", audits=[base])
    r = Result(s.repo, s.top, "top", base.rc == 0 and not base.bad, audits=[base], offending=base.bad)
    if not r.ok:
        r.why = f"exit {base.rc}" + (f": {base.stderr}" if base.rc not in (0, 1) else "")
    return r


def run_drop(m: Path, g: Path, s: Stack, tree: Path, base: Audit, kind: str = "tree") -> Result:
    r = Result(s.repo, s.top, "drop", None)
    dropped = drop_one(m, s, tree)
    if dropped is None:
        r.why = "no commit modifies a shipped .py file whose reverse applies cleanly"
        return r
    pr, c, path = dropped
    r.detail = {"pr": pr, "commit": c, "path": path}
    target = target_args(kind, s.repo, tree, tree.parent / "drop-target")
    a = audit([*by_pr(g, [s.top]), *target], f"{s.top_head} with {c} reverted on {path}")
    r.audits = [a]
    if lacks_blobs(a) or lacks_blobs(base):
        r.why = "the clone is too shallow" if too_shallow(a) or too_shallow(base) else \
            "the snapshot lacks blobs the audit must read"
        return r
    of_f = [h for h in a.hunks if h["path"] == path or h.get("old_path") == path]
    if kind != "tree" and of_f and all(h["status"] == "not-shipped" for h in of_f):
        r.why = f"{path} is not shipped in the {kind} target"  # outside the package: no drop to find there
        return r
    before = {(h["pr"], h["path"], h["old_start"], h["new_start"]) for h in base.hunks if h["status"] in PRESENT}
    turned = [h for h in a.bad if h["path"] != path and (h["pr"], h["path"], h["old_start"], h["new_start"]) in before]
    why = []
    if a.rc != 1:
        why.append(f"exit {a.rc}" + (f": {a.stderr}" if a.rc not in (0, 1) else ""))
    if not of_f:
        why.append(f"no hunk of {path}")
    elif all(h["status"] in PRESENT | NEUTRAL for h in of_f):
        r.false_present = 1
        why.append(f"every hunk of {path} still present")
        r.offending += of_f
    if turned:
        why.append(f"{len(turned)} hunks of other files turned not present")
        r.offending += turned
    r.ok, r.why = not why, "; ".join(why)
    return r


def run_parent(m: Path, g: Path, s: Stack, work: Path) -> Result:
    r = Result(s.repo, s.top, "parent", None)
    p, ph = s.parents[-1], s.parent_heads[-1]
    under = {n for n, h in zip(s.parents, s.parent_heads, strict=True) if h == ph or is_ancestor(m, h, ph)}
    pdir = work / "parent"
    r.detail = {"parent": p, "under": sorted(under), "blobs_lacking": extract(m, ph, pdir)}
    a1 = audit([*by_pr(g, [p]), "--tree", str(pdir)], ph)
    a2 = audit([*by_pr(g, [s.top]), "--tree", str(pdir)], ph)
    r.audits = [a1, a2]
    if lacks_blobs(a1) or lacks_blobs(a2):
        r.why = "the clone is too shallow" if too_shallow(a1) or too_shallow(a2) else \
            "the snapshot lacks blobs the audit must read"
        return r
    why = []
    if a1.rc != 0 or a1.bad:
        why.append(f"parent alone: exit {a1.rc}" + (f": {a1.stderr}" if a1.rc not in (0, 1) else ""))
        r.offending += a1.bad
    # the top's own: hunks of the top, or of a PR outside the parent's stack that the top carries
    # (its commit not in the parent's history, nor judged through a rewrite of the parent's stack;
    # a PR sharing the parent's head is the parent's)
    theirs = {c: c is not None and is_ancestor(m, c, ph) for c in {h.get("commit") for h in a2.hunks}}
    beyond = [h for h in a2.hunks if h.get("pr") == s.top or (
        h.get("pr") not in under and not theirs[h.get("commit")]
        and (h.get("superseded_by") or {}).get("pr") not in under)]
    top_own = [h for h in beyond if h["status"] not in NEUTRAL]
    r.detail["top_own_hunks"] = len(top_own)
    if a2.rc != (1 if top_own else 0):  # a top with no shipped hunk of its own (e.g. it only merges main): exit 0
        why.append(f"top on parent tree: exit {a2.rc}" + (f": {a2.stderr}" if a2.rc not in (0, 1) else ""))
    lower_bad = [h for h in a2.bad if h.get("pr") in under]
    if lower_bad:
        why.append(f"{len(lower_bad)} hunks of the parents not present")
        r.offending += lower_bad
    top_present = [h for h in beyond if h["status"] in PRESENT]
    if top_present:
        why.append(f"{len(top_present)} hunks of the top present in the parent's tree")
        r.offending += top_present
        r.false_present = len(top_present)
    r.ok, r.why = not why, "; ".join(why)
    return r


def run_patch(m: Path, s: Stack, tree: Path, work: Path) -> Result:
    r = Result(s.repo, s.top, "patch", None)
    files, diffs = [], {}
    (work / "patches").mkdir()
    for n, h in zip([*s.parents, s.top], [*s.parent_heads, s.top_head], strict=True):
        f = work / "patches" / f"{n}.diff"
        diffs[n] = git(m, "diff", git(m, "merge-base", DEFAULT, h).strip(), h)
        f.write_text(diffs[n])
        files += ["--patch", str(f)]
    a = audit([*files, "--tree", str(tree)], s.top_head)
    r.audits = [a]
    lower = {id(h): lowered(diffs[h["pr"]], h, tree) for h in a.hunks if h.get("pr") in diffs and h["pr"] != s.top}
    excused = [h for h in a.bad if lower.get(id(h)) in ("taken back", "unclear")]
    false = [h for h in a.hunks if lower.get(id(h)) == "taken back" and h["status"] in PRESENT
             and not h.get("superseded_by")]
    r.offending = [h for h in a.bad if h not in excused] + false
    r.false_present = len(false)
    r.detail["taken_back"] = sum(v == "taken back" for v in lower.values())
    r.detail["unclear"] = sum(v == "unclear" for v in lower.values())
    r.ok = a.rc in (0, 1) and not r.offending and (a.rc == 0 or bool(excused))
    if not r.ok:
        r.why = f"exit {a.rc}" + (f": {a.stderr}" if a.rc not in (0, 1) else "")
        r.why += f"; {len(false)} hunks present whose lines the tree lacks" if false else ""
    return r


def lowered(diff: str, h: Hunk, tree: Path) -> str:
    """What became of a lower patch's hunk in the top's tree, by its text alone:
    - "taken back": the tree lacks it as the patch wrote it. A run of its added lines is neither there
      line by line (whitespace aside) nor, with the lines beside it, as text (line breaks and a
      formatter's trailing commas aside); where whitespace is all it changes, an added line is not
      there; for a pure deletion, its removed lines, two or more, still stand together;
    - "unclear": a pure deletion whose context no longer stands together, or whose one line still
      stands somewhere;
    - else "kept".
    History took a "taken back" hunk back or rewrote it outside the patches (main's rewrite of a
    squash-merged parent, merged into the child; a later revert): the top's diff has no trace of it, so
    from the patches "not present" is the truth, and "present" needs a rewrite the patches name. A
    relocated hunk is looked for where it was found."""
    hunk = next((x for x in _hunks(diff, h["path"]) if x.target_start == h.get("new_start")
                 and x.source_start == h.get("old_start")), None)
    if hunk is None:
        return "kept"
    f = tree / (h.get("found_path") or h["path"])
    text = f.read_text(errors="replace") if f.is_file() and not f.is_symlink() else ""
    exact = [x.rstrip() for x in text.splitlines()]
    added = [x.value.rstrip() for x in hunk if x.is_added and x.value.strip()]
    removed = [x.value.rstrip() for x in hunk if x.is_removed and x.value.strip()]
    if added:
        if _squeeze(added) == _squeeze(removed):  # whitespace is all it changes
            return "taken back" if any(x not in exact for x in added) else "kept"
        lines = {_squeeze([x]) for x in exact}
        flat = _flat(text)
        return "taken back" if any(not ({_squeeze([x]) for x in run if x.strip()} <= lines
                                        or _flat("\n".join(beside)) in flat)
                                   for run, beside in _added_runs(list(hunk))) else "kept"
    if not removed:  # blank lines alone: the text cannot tell
        return "kept"
    if _block_in(removed, [x for x in exact if x.strip()]):  # one line may stand anywhere
        return "taken back" if len(removed) > 1 else "unclear"
    after = [x.value.rstrip() for x in hunk if x.is_context]
    return "kept" if _block_in(after, exact) else "unclear"


def _hunks(diff: str, path: str) -> list[unidiff.Hunk]:
    return next((list(f) for f in unidiff.PatchSet(io.StringIO(diff)) if f.path == path), [])


def _added_runs(lines: list[unidiff.patch.Line]) -> list[tuple[list[str], list[str]]]:
    """Each run of added lines, alone and with the nearest non-blank line before and after it on the
    new side (a blank neighbour would let a shortened line pass inside its longer old self)."""
    new = [x.value.rstrip() for x in lines if not x.is_removed]
    added = [x.is_added for x in lines if not x.is_removed]
    runs, i = [], 0
    while i < len(new):
        j = i
        while j < len(new) and added[j]:
            j += 1
        if j > i:
            before = next((x for x in reversed(new[:i]) if x.strip()), "")
            after = next((x for x in new[j:] if x.strip()), "")
            runs.append((new[i:j], [before, *new[i:j], after]))
        i = j + 1
    return runs


def _flat(text: str) -> str:
    """Text without whitespace and without a comma before a closing bracket: a formatter's re-wrap."""
    return re.sub(r",([)\]}])", r"\1", "".join(text.split()))


def _squeeze(lines: list[str]) -> str:
    return "\n".join(" ".join(x.split()) for x in lines if x.strip())


def _block_in(block: list[str], lines: list[str]) -> bool:
    n = len(block)
    return bool(block) and any(lines[i:i + n] == block for i in range(len(lines) - n + 1))


def guarded(s: Stack, oracle: str, fn: Callable[[], Result]) -> Result:
    """The oracle's result; a failure of the bench's own git work (e.g. a blob the snapshot lacks) skips it."""
    try:
        return fn()
    except (subprocess.CalledProcessError, OSError, ValueError) as e:
        err = e.stderr if isinstance(e, subprocess.CalledProcessError) else ""
        err = err.decode(errors="replace") if isinstance(err, bytes) else (err or "")
        return Result(s.repo, s.top, oracle, None, f"bench error: {e} {err.strip()[:200]}")


def run_case(s: Stack, oracles: set[str], g: Path | None = None, shape: str = "bare",
             kind: str = "tree") -> list[Result]:
    """The oracles of one stack; prstack reads the PRs from `g` (default: the snapshot itself), the top
    and drop oracles audit a target of `kind` built from their tree."""
    out = _run_case(s, oracles, g or mirror(s.repo), kind)
    for r in out:
        r.clone, r.target = shape, kind
    return out


def _run_case(s: Stack, oracles: set[str], g: Path, kind: str) -> list[Result]:
    m = mirror(s.repo)
    out: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="prstack-stack-") as tmp:
        work = Path(tmp)
        tree = work / "top"
        try:
            lacking = extract(m, s.top_head, tree)
        except (subprocess.CalledProcessError, OSError, ValueError) as e:
            return [Result(s.repo, s.top, o, None, f"bench error: {e}") for o in sorted(oracles)]
        try:
            target = target_args(kind, s.repo, tree, work / "top-target") if oracles & {"top", "drop"} else []
        except (subprocess.CalledProcessError, OSError, ValueError) as e:
            why = str(e) if isinstance(e, NoTarget) else f"bench error: no {kind} target: {e}"
            return [Result(s.repo, s.top, o, None, why) for o in sorted(oracles)]
        base = audit([*by_pr(g, [s.top]), *target], s.top_head) if oracles & {"top", "drop"} else None
        if base is not None and "top" in oracles:
            out.append(run_top(s, base, lacking))
            out[-1].detail["blobs_lacking"] = lacking
        if "patch" in oracles:
            out.append(guarded(s, "patch", lambda: run_patch(m, s, tree, work)))
        if "parent" in oracles:
            out.append(guarded(s, "parent", lambda: run_parent(m, g, s, work)))
        if base is not None and "drop" in oracles:
            out.append(guarded(s, "drop", lambda: run_drop(m, g, s, tree, base, kind)))
    return out


def rate(rs: list[Result]) -> str:
    done = [r for r in rs if r.ok is not None]
    skipped = len(rs) - len(done)
    if not rs:
        return "-"
    return f"{sum(bool(r.ok) for r in done)}/{len(done)}" + (f" ({skipped} skip)" if skipped else "")


def table(per_repo: dict[str, list[Stack]], results: dict[str, list[Result]], wall: dict[str, float]) -> None:
    head = (f"{'repo':24}{'stacks':>7}{'top exit0':>19}{'drop':>19}{'parent':>17}{'patch':>17}"
            f"{'false pres':>11}{'pr null':>8}{'med s':>7}{'wall s':>8}")
    print(head)
    allr = [r for rs in results.values() for r in rs]
    for repo, rs in [*results.items(), ("all", allr)]:
        of = {o: [r for r in rs if r.oracle == o] for o in ORACLES}
        secs = [x.seconds for r in rs for x in r.audits]
        med = f"{statistics.median(secs):.2f}" if secs else "-"
        n = len(per_repo[repo]) if repo != "all" else sum(len(per_repo[r]) for r in results)
        w = wall[repo] if repo != "all" else sum(wall.values())
        print(f"{repo:24}{n:>7}{rate(of['top']):>19}{rate(of['drop']):>19}{rate(of['parent']):>17}"
              f"{rate(of['patch']):>17}{sum(r.false_present for r in rs):>11}"
              f"{sum(x.null_pr for r in rs for x in r.audits):>8}{med:>7}{w:>8.0f}")


def failures(rs: list[Result]) -> None:
    for r in rs:
        if r.ok is False:
            rcs = ",".join(str(x.rc) for x in r.audits)
            clone = "".join(f" [{x}]" for x, plain in ((r.clone, "bare"), (r.target, "tree")) if x != plain)
            detail = json.dumps(r.detail) if r.detail else ""
            print(f"\n{r.repo} #{r.top} {r.oracle}{clone} exit {rcs}: {r.why} {detail}")
            for x in r.audits:
                print(f"  tree {x.tree}\n  $ " + " ".join(x.cmd))
            for h in r.offending[:12]:
                print(f"    pr {h.get('pr')} {h['path']} {h['status']}"
                      f"{' superseded_by ' + str(h['superseded_by']) if h.get('superseded_by') else ''}"
                      f" {(h.get('commit') or '')[:10]}")
            if len(r.offending) > 12:
                print(f"    ... {len(r.offending) - 12} more")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", action="append", default=[], help="only this owner/name (repeatable)")
    ap.add_argument("--limit", type=int, default=0, help="at most this many stacks per repo (newest first)")
    ap.add_argument("--top", type=int, action="append", default=[], help="only the stack of this top PR (repeatable)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default=",".join(ORACLES), help="comma-separated oracles: " + ",".join(ORACLES))
    ap.add_argument("--clone", action="append", default=[],
                    help="the clone --git reads, by shape (repeatable or a comma list; default bare): "
                    + ",".join(SHAPES))
    ap.add_argument("--target", action="append", default=[],
                    help="the target the top and drop oracles audit, built from their tree (repeatable or a comma "
                    "list; default tree; parent and patch run with tree only): " + ",".join(KINDS))
    ap.add_argument("--keep-clones", type=Path, help="build the clones in this folder and keep them (default: a "
                    "temporary folder, removed after each repository)")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "prstack-stacks" / "results.jsonl")
    ap.add_argument("--stacks", type=Path, default=Path(__file__).parent / "stacks.tsv")
    ap.add_argument("--show-failures", action="store_true")
    a = ap.parse_args()
    oracles = set(a.only.split(","))
    if oracles - set(ORACLES):
        ap.error(f"unknown oracle: {sorted(oracles - set(ORACLES))}")
    shapes = list(dict.fromkeys(x for c in a.clone or ["bare"] for x in c.split(",") if x))
    if set(shapes) - set(SHAPES):
        ap.error(f"unknown clone shape: {sorted(set(shapes) - set(SHAPES))}; known: {', '.join(SHAPES)}")
    kinds = list(dict.fromkeys(x for t in a.target or ["tree"] for x in t.split(",") if x))
    if set(kinds) - set(KINDS):
        ap.error(f"unknown target kind: {sorted(set(kinds) - set(KINDS))}; known: {', '.join(KINDS)}")
    per_repo: dict[str, list[Stack]] = defaultdict(list)
    for s in load(a.stacks):
        wanted = (not a.repo or s.repo in a.repo) and (not a.top or s.top in a.top)
        if wanted and (not a.limit or len(per_repo[s.repo]) < a.limit):
            per_repo[s.repo].append(s)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    print(f"{sum(map(len, per_repo.values()))} stacks, {len(per_repo)} repos, oracles {','.join(sorted(oracles))}, "
          f"clones {','.join(shapes)}, targets {','.join(kinds)}, {a.jobs} jobs; {PRSTACK}", flush=True)
    by_shape: dict[tuple[str, str], tuple[dict[str, list[Result]], dict[str, float]]] = {}
    with a.out.open("w") as out:
        for shape in shapes:
            for kind in kinds:
                results: dict[str, list[Result]] = {}
                wall: dict[str, float] = {}
                for repo, stacks in per_repo.items():
                    rs, wall[repo] = run_repo(repo, stacks, oracles, shape, a.jobs, a.keep_clones, kind)
                    results[repo] = rs
                    for r in rs:
                        out.write(json.dumps(r.record()) + "\n")
                    out.flush()
                    print(f"  {repo} [{shape}, {kind}]: {len(stacks)} stacks in {wall[repo]:.0f} s", flush=True)
                by_shape[shape, kind] = results, wall
    for (shape, kind), (results, wall) in by_shape.items():
        print(f"\nclone: {shape}, target: {kind}")
        table(per_repo, results, wall)
        skipped = [r for rs in results.values() for r in rs if r.ok is None]
        skips = Counter(f"{r.oracle}: {r.why.split(':')[0][:60]}" for r in skipped)
        if skips:
            print("skipped: " + "; ".join(f"{n} {why}" for why, n in sorted(skips.items())))
    print(f"per-case details: {a.out}")
    if a.show_failures:
        for results, _ in by_shape.values():
            failures([r for rs in results.values() for r in rs])
    return 0


def run_repo(repo: str, stacks: list[Stack], oracles: set[str], shape: str, jobs: int,
             keep: Path | None, kind: str = "tree") -> tuple[list[Result], float]:
    """The oracles of a repository's stacks with `--git` at a clone of `shape`, built once for the
    repository and target kind (for shallow-prs, once per stack: the clone holds that stack's PRs only),
    on targets of `kind`; the building of both is in the wall time. The results and the wall time."""
    t0 = time.perf_counter()
    oracles = oracles if kind == "tree" else oracles & {"top", "drop"}
    root = Path(tempfile.mkdtemp(prefix="prstack-clone-")) if keep is None else keep / shape / kind
    try:
        shared = None if shape in ("bare", "shallow-prs") else clone_or_why(shape, repo, root, stacks)
        if isinstance(shared, str):
            return [Result(s.repo, s.top, o, None, shared, clone=shape, target=kind)
                    for s in stacks for o in sorted(oracles)], 0.0

        def case(s: Stack) -> list[Result]:
            g = shared
            if shape == "shallow-prs":
                g = clone_or_why(shape, repo, root / str(s.top), [s])
                if isinstance(g, str):
                    return [Result(s.repo, s.top, o, None, g, clone=shape, target=kind) for o in sorted(oracles)]
            return run_case(s, oracles, g, shape, kind)

        with ThreadPoolExecutor(jobs) as ex:
            rs = [r for found in ex.map(case, stacks) for r in found]
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return rs, time.perf_counter() - t0


def clone_or_why(shape: str, repo: str, root: Path, stacks: list[Stack]) -> Path | str:
    """The clone of `shape` built under `root`, or why it could not be (a skip's reason)."""
    try:
        return make_clone(shape, repo, mirror(repo), root, stacks)
    except (subprocess.CalledProcessError, OSError) as e:
        err = e.stderr if isinstance(e, subprocess.CalledProcessError) else ""
        err = err.decode(errors="replace") if isinstance(err, bytes) else (err or "")
        return f"bench error: no {shape} clone: {e} {err.strip()[:200]}"


if __name__ == "__main__":
    raise SystemExit(main())
