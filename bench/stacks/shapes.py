"""The stack shapes people push, as cases on the bench's own repositories (`shapes_run.py` runs them).

Each case gets its own bare repository sharing the snapshot's objects (objects/info/alternates) and
holding its refs (refs/heads/main, refs/pull/N/head); a built case writes its commits there with git's
plumbing (merge-tree, commit-tree, a temporary index), so the snapshot is never written. Found cases
are real PRs of the snapshot that have the shape (`scan`); built ones put the shape on a real stack of
stacks.tsv:

- combined (found, built): a PR that collects others' commits. Built: from the first stack top's fork
  point, `merge --no-ff` of that top, then of the next stack's top (a merge queue's branch), as a new PR.
- merged-main (built): the top merged a later main commit, then a commit of its own removed a line that
  main's commits brought in (an import where one is); the dropped build is the merge (the edit left out).
- fixup (built): the top with a commit changing a line of base text in one of its files and a fix-up
  restoring it (the net diff unchanged); the dropped build is the tree of the first (the fix-up dropped).
- deleted, moved (found, built): a file a lower PR added, deleted (or moved into a `moved/` folder) by a
  later commit of the top. The dropped build: the file back (deleted), the moved file gone (moved).
- lacking-blobs (built clone): a clone whose promisor remote does not answer, lacking every version of
  one file of the stack; the other blobs the audit reads are there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from clones import mapped, share_objects, write_refs
from find import DEFAULT, Stack, mirror

SHAPES = ("combined", "merged-main", "fixup", "deleted", "moved", "lacking-blobs")
COMBINED = {  # real PRs holding other unmerged PRs' heads that are not each other's ancestors: top -> held
    "huggingface/trl": [(1610, (1219, 1339))],
    "pytorch/torchtune": [(2525, (2099, 2343, 2411, 2432))],
}
DELETED = {  # stacks of stacks.tsv whose top deletes (or moves) a file a lower PR added: top -> that file
    "huggingface/peft": [(1106, "src/peft/mixed_model.py"), (3446, "tests/test_kasa.py")],
    "huggingface/accelerate": [(2902, "examples/slurm/submit_multicpu.sh")],
    "pytorch/torchtune": [(2386, "torchtune/models/flux/_util.py"), (1543, "torchtune/modules/tied_linear.py"),
                          (1117, "torchtune/modules/transforms/_utils.py")],
}
_ID = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
       "GIT_AUTHOR_DATE": "2026-12-06T00:00:00+00:00", "GIT_COMMITTER_DATE": "2026-12-06T00:00:00+00:00"}
NOT_SHIPPED = {"tests", "test", "docs", "doc", "examples", "benchmarks", "scripts", ".github", "tutorials"}


@dataclass
class Case:
    """One case: the top PR and its stack as prstack reads them from `git`; the revision whose tree holds
    the whole stack (`head`); the dropped build (`drop`, a commit of `git`) and what it must show."""

    repo: str
    shape: str
    origin: str  # "found" or "built"
    stack: Stack
    git: Path
    what: str
    drop: str | None = None  # a commit whose tree is the build that lacks a change
    dropped_path: str = ""  # a hunk of this file must not be present in it
    earlier: str = ""  # the commit a hunk's note must name (fixup)
    unread: frozenset[str] = field(default_factory=frozenset)  # files whose blobs the clone lacks
    collected: tuple[int, ...] = ()  # PRs a combined PR holds

    @property
    def head(self) -> str:
        return self.stack.top_head


class Repo:
    """A bare repository for one case: the snapshot's objects shared, its refs copied."""

    def __init__(self, m: Path, path: Path, alternate: Path | None = None) -> None:
        self.m, self.path = m, path
        # (a clone sharing a blobless one's objects reads the snapshot's blobs while it is built)
        self.env = {} if alternate is None else {"GIT_ALTERNATE_OBJECT_DIRECTORIES": str(m / "objects")}
        subprocess.run(["git", "init", "-q", "--bare", "-b", DEFAULT, str(path)], check=True)
        share_objects(path, alternate or m)
        write_refs(path, mapped(m, f"refs/heads/{DEFAULT}", f"refs/heads/{DEFAULT}")
                   | mapped(m, "refs/pull/*/head", "refs/pull/*/head"))

    def git(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> str:
        done = subprocess.run(["git", "--git-dir", str(self.path), *args], input=stdin, capture_output=True,
                              text=True, errors="replace", env={**os.environ, **_ID, **self.env, **(env or {})})
        if check and done.returncode:
            raise subprocess.CalledProcessError(done.returncode, args, done.stdout, done.stderr)
        return done.stdout

    def commit(self, tree: str, parents: list[str], msg: str) -> str:
        return self.git("commit-tree", tree, *(x for p in parents for x in ("-p", p)), "-m", msg).strip()

    def merge(self, a: str, b: str, msg: str) -> str | None:
        """`git merge --no-ff b` on a: the merge commit, or None when it conflicts."""
        done = subprocess.run(["git", "--git-dir", str(self.path), "merge-tree", "--write-tree", "--no-messages",
                               a, b], capture_output=True, text=True, env={**os.environ, **self.env})
        if done.returncode:
            return None
        return self.commit(done.stdout.split()[0], [a, b], msg)

    def edit(self, parent: str, files: dict[str, str | None], msg: str) -> str:
        """A commit on `parent` writing (or, for None, deleting) `files`."""
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", parent, env=env)
            rows = []
            for path, text in files.items():
                blob = "0" * 40 if text is None else self.git("hash-object", "-w", "--stdin", stdin=text).strip()
                rows.append(f"{'0' if text is None else '100644'} {blob}\t{path}\n")  # mode 0: removed
            self.git("update-index", "--index-info", stdin="".join(rows), env=env)
            tree = self.git("write-tree", env=env).strip()
        return self.commit(tree, [parent], msg)

    def show(self, rev: str, path: str) -> str | None:
        done = subprocess.run(["git", "--git-dir", str(self.path), "show", f"{rev}:{path}"], capture_output=True,
                              text=True, errors="replace", env={**os.environ, **self.env})
        return done.stdout if done.returncode == 0 else None

    def revert_file(self, on: str, commit: str, path: str, msg: str) -> str | None:
        """A commit on `on` with `commit`'s change to `path` reverted; None when the reverse does not apply."""
        diff = self.git("diff", f"{commit}^", commit, "--", path)
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", on, env=env)
            if subprocess.run(["git", "--git-dir", str(self.path), "apply", "--cached", "-R", "-"], input=diff,
                              text=True, capture_output=True, env={**os.environ, **self.env, **env}).returncode:
                return None
            tree = self.git("write-tree", env=env).strip()
        return self.commit(tree, [on], msg)

    def point(self, number: int, sha: str) -> None:
        self.git("update-ref", f"refs/pull/{number}/head", sha)

    def new_number(self) -> int:
        """A PR number above every one of the snapshot."""
        numbers = [int(r.split("/")[2]) for r in self.git("for-each-ref", "--format=%(refname)", "refs/pull").split()]
        return max(numbers, default=0) + 1


def shipped_looking(path: str) -> bool:
    parts = path.split("/")
    return (path.endswith(".py") and not NOT_SHIPPED & set(parts[:-1])
            and not parts[-1].startswith("test_") and parts[-1] != "conftest.py")


def name_status(r: Repo, *args: str) -> list[tuple[str, str]]:
    out = []
    for line in r.git("diff", "--no-renames", "--name-status", *args).splitlines():
        st, _, path = line.partition("\t")
        out.append((st[:1], path))
    return out


def build(shape: str, repo: str, stacks: list[Stack], root: Path, limit: int) -> Iterator[Case | str]:
    """Cases of `shape` on `repo`: found ones first, then built on `stacks` (at most `limit` in all);
    a string is why a stack could not take the shape (a skip)."""
    m = mirror(repo)
    made = 0
    blobless = blobless_clone(m, root / "blobless.git") if shape == "lacking-blobs" else None
    for top, held in COMBINED.get(repo, [])[:limit] if shape == "combined" else []:
        made += 1
        yield _found_combined(m, repo, top, held, root / f"found-{top}")
    for top, path in DELETED.get(repo, []) if shape in ("deleted", "moved") else []:
        s = next((x for x in stacks if x.top == top), None)
        if s is not None and made < limit:
            case = _found_deleted(Repo(m, root / f"found-{top}"), s, path)
            if case.shape == shape:
                made += 1
                yield case
    for i, s in enumerate(stacks):
        if made >= limit:
            return
        r = Repo(m, root / f"{shape}-{s.top}.git", blobless)
        try:
            case = BUILDERS[shape](r, s, stacks[i + 1:])
        except subprocess.CalledProcessError as e:
            case = f"#{s.top}: git failed ({(e.stderr or '').strip()[:120]})"
        if isinstance(case, Case):
            made += 1
        yield case


def _found_combined(m: Path, repo: str, top: int, held: tuple[int, ...], path: Path) -> Case:
    r = Repo(m, path)
    heads = tuple(r.git("rev-parse", f"refs/pull/{n}/head").strip() for n in held)
    head = r.git("rev-parse", f"refs/pull/{top}/head").strip()
    return Case(repo, "combined", "found", Stack(repo, top, head, held, heads), r.path,
                f"#{top} holds the commits of {', '.join(f'#{n}' for n in held)}", collected=held)


def _found_deleted(r: Repo, s: Stack, path: str) -> Case:
    """The top's commit that deletes `path`; where it moves the file (git's rename detection), the
    dropped build lacks the moved file, else it holds the file again."""
    gone = r.git("log", "--format=%H", "--diff-filter=D", "--no-renames", "-1", s.top_head, f"^{DEFAULT}", "--",
                 path).strip()
    renamed = [x.split("\t") for x in r.git("show", "-M", "--name-status", "--format=", gone, check=False).splitlines()
               if x.startswith("R") and x.split("\t")[1] == path]
    if renamed:
        new = renamed[0][2]
        lost = r.edit(s.top_head, {new: None}, f"(the build without {new})")
        return Case(s.repo, "moved", "found", s, r.path, f"#{s.top}'s {gone[:10]} moves {path}, which a lower PR "
                    f"added, to {new}", drop=lost, dropped_path=new)
    back = r.edit(s.top_head, {path: r.show(f"{gone}^", path) or ""}, f"(the build holding {path} again)")
    return Case(s.repo, "deleted", "found", s, r.path, f"#{s.top}'s {gone[:10]} deletes {path}, which a lower PR added",
                drop=back, dropped_path=path)


def combined(r: Repo, s: Stack, later: list[Stack]) -> Case | str:
    """From s's fork point, merges of s's top and of the next stack's top whose PRs are other ones."""
    start = r.git("merge-base", DEFAULT, s.top_head).strip()
    first = r.commit(r.git("rev-parse", f"{s.top_head}^{{tree}}").strip(), [start, s.top_head],
                     f"Merge pull request #{s.top}")
    both = other = None
    for other in [t for t in later if not {t.top, *t.parents} & {s.top, *s.parents}][:5]:
        both = r.merge(first, other.top_head, f"Merge pull request #{other.top}")
        if both is not None:
            break
    if both is None or other is None:
        return f"#{s.top}: no other stack's top merges cleanly onto it"
    n = r.new_number()
    r.point(n, both)
    held = (*s.parents, s.top, *other.parents, other.top)
    heads = (*s.parent_heads, s.top_head, *other.parent_heads, other.top_head)
    return Case(s.repo, "combined", "built", Stack(s.repo, n, both, held, heads), r.path,
                f"#{n} merges #{s.top} ({len(s.parents)} below) and #{other.top} ({len(other.parents)} below)",
                collected=held)


def merged_main(r: Repo, s: Stack, _: list[Stack]) -> Case | str:
    """s's top merges a later main commit that adds lines to a shipped file the stack leaves alone, then
    removes one of those lines (an import where one is)."""
    base = r.git("merge-base", DEFAULT, s.top_head).strip()
    ours = {p for _, p in name_status(r, base, s.top_head)}
    later = r.git("rev-list", "--first-parent", "--reverse", DEFAULT, f"^{base}").split()[:40]
    for main in later:
        for st, path in name_status(r, base, main):
            if st != "M" or path in ours or not shipped_looking(path):
                continue
            line = _a_line_main_added(r, base, main, path)
            if line is None:
                continue
            merge = r.merge(s.top_head, main, f"Merge branch '{DEFAULT}' into pr-{s.top}")
            if merge is None:
                break  # this main commit conflicts with the stack: try a later one
            text = r.show(merge, path)
            if text is None or text.splitlines().count(line) != 1:
                continue
            rows = text.splitlines(keepends=True)
            rows = [x for x in rows if x.rstrip("\n") != line]
            edit = r.edit(merge, {path: "".join(rows)}, f"Drop an unused line of {path}")
            r.point(s.top, edit)
            return Case(s.repo, "merged-main", "built", Stack(s.repo, s.top, edit, s.parents, s.parent_heads),
                        r.path, f"#{s.top} merged main at {main[:10]}, then removed `{line.strip()[:50]}` "
                        f"from {path}", drop=merge, dropped_path=path)
    return f"#{s.top}: no later main commit adds a line it could remove"


def _a_line_main_added(r: Repo, base: str, main: str, path: str) -> str | None:
    added = [x[1:] for x in r.git("diff", "-U0", base, main, "--", path).splitlines()
             if x.startswith("+") and not x.startswith("+++") and x[1:].strip() and not x[1:].strip().startswith("#")]
    imports = [x for x in added if x.lstrip().startswith(("import ", "from "))]
    return (imports or added or [None])[0]


def fixup(r: Repo, s: Stack, _: list[Stack]) -> Case | str:
    """s's top, then a commit removing a line of base text from one of its shipped files, far from its
    hunks, then a fix-up putting it back."""
    base = r.git("merge-base", DEFAULT, s.top_head).strip()
    for st, path in name_status(r, base, s.top_head):
        if st != "M" or not shipped_looking(path):
            continue
        text = r.show(s.top_head, path)
        if text is None:
            continue
        touched = set()
        for x in r.git("diff", "-U0", base, s.top_head, "--", path).splitlines():
            if x.startswith("@@"):
                start = int(x.split("+")[1].split(",")[0].split()[0])
                touched.update(range(start - 8, start + 30))
        rows = text.splitlines(keepends=True)
        pick = next((i for i, x in enumerate(rows) if i + 1 not in touched and len(x.strip()) > 12
                     and rows.count(x) == 1 and not x.strip().startswith(("#", '"', "'"))), None)
        if pick is None:
            continue
        slip = r.edit(s.top_head, {path: "".join(rows[:pick] + rows[pick + 1:])}, f"Tidy {path}")
        back = r.edit(slip, {path: text}, f"fix-up: put line {pick + 1} of {path} back")
        r.point(s.top, back)
        return Case(s.repo, "fixup", "built", Stack(s.repo, s.top, back, s.parents, s.parent_heads),
                    r.path, f"#{s.top}, then {slip[:10]} removes line {pick + 1} of {path} and {back[:10]} "
                    "puts it back", drop=slip, dropped_path=path, earlier=slip)
    return f"#{s.top}: no shipped file it modifies with a line of base text far from its hunks"


def _added_below(r: Repo, s: Stack) -> list[str]:
    """Files a lower PR of s adds that s's top still holds (three lines or more), shipped-looking .py
    first."""
    added: list[str] = []
    for h in s.parent_heads:
        for st, path in name_status(r, r.git("merge-base", DEFAULT, h).strip(), h):
            if st == "A" and path not in added and len((r.show(s.top_head, path) or "").strip().splitlines()) > 2:
                added.append(path)
    return sorted(added, key=lambda p: (not shipped_looking(p), not p.endswith(".py"), p))


def deleted(r: Repo, s: Stack, _: list[Stack]) -> Case | str:
    """A later commit of s's top deletes a file a lower PR added; the dropped build holds it again."""
    added = _added_below(r, s)
    if not added:
        return f"#{s.top}: no lower PR adds a file the top holds"
    gone = r.edit(s.top_head, {added[0]: None}, f"Remove {added[0]}")
    r.point(s.top, gone)
    return Case(s.repo, "deleted", "built", Stack(s.repo, s.top, gone, s.parents, s.parent_heads), r.path,
                f"#{s.top} deletes {added[0]}, which a lower PR added", drop=s.top_head, dropped_path=added[0])


def moved(r: Repo, s: Stack, _: list[Stack]) -> Case | str:
    """A later commit of s's top moves a file a lower PR added into a `moved/` folder beside it; the
    dropped build lacks the moved file."""
    added = _added_below(r, s)
    if not added:
        return f"#{s.top}: no lower PR adds a file the top holds"
    old = added[0]
    new = str(Path(old).parent / "moved" / Path(old).name) if "/" in old else f"moved/{old}"
    move = r.edit(s.top_head, {old: None, new: r.show(s.top_head, old) or ""}, f"Move {old} to {new}")
    r.point(s.top, move)
    lost = r.edit(move, {new: None}, f"(the build without {new})")
    return Case(s.repo, "moved", "built", Stack(s.repo, s.top, move, s.parents, s.parent_heads), r.path,
                f"#{s.top} moves {old} (a lower PR's) to {new}", drop=lost, dropped_path=new)


_UPLOAD_PACK = "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"


def blobless_clone(m: Path, path: Path) -> Path:
    """`git clone --bare --filter=blob:none` of the snapshot with its PR refs: commits and trees only."""
    subprocess.run(["git", "clone", "-q", "--bare", "--filter=blob:none", "--upload-pack", _UPLOAD_PACK,
                    f"file://{m.resolve()}", str(path)], check=True, capture_output=True)
    subprocess.run(["git", "--git-dir", str(path), "fetch", "-q", "--filter=blob:none", "--upload-pack", _UPLOAD_PACK,
                    "origin", "+refs/pull/*/head:refs/pull/*/head"], check=True, capture_output=True)
    return path


def lacking_blobs(r: Repo, s: Stack, _: list[Stack]) -> Case | str:
    """A partial clone (commits and trees shared with a blobless clone) holding the blobs of the stack's
    commits and its fork point's versions of the files they touch, but no version of one file the
    stack changes (shipped .py files first); its promisor remote is GitHub's URL, sent by
    `url.*.insteadOf` to a folder that is not there (offline).
    The dropped build reverts a commit's change to another file. Only stacks whose PRs all fork from
    main at one commit and merge nothing: the clone then holds every other blob the audit reads."""
    base = r.git("merge-base", DEFAULT, s.top_head).strip()
    if r.git("rev-list", "--merges", "--count", s.top_head, f"^{DEFAULT}").strip() != "0" or any(
            r.git("merge-base", DEFAULT, h).strip() != base for h in s.parent_heads):
        return f"#{s.top}: its branch merged main, or its PRs fork from main at other commits"
    files = sorted((p for st, p in name_status(r, base, s.top_head) if st in "AM"),
                   key=lambda p: (not shipped_looking(p), not p.endswith(".py"), p))
    drop = _a_revert(r, s, base)
    if drop is None:
        return f"#{s.top}: no commit of a shipped file whose reverse applies"
    commit, kept = drop
    listed = [x.split(" ", 1) for x in r.git("rev-list", "--objects", s.top_head, *s.parent_heads, f"^{DEFAULT}",
                                               "--missing=allow-any").splitlines()]
    touched = {p for _, p in name_status(r, base, s.top_head)} | {x[1] for x in listed if len(x) > 1}
    at_base = [x.split(None, 3) for x in r.git("ls-tree", "-r", base).splitlines()]
    at_base = [x for x in at_base if x[3] in touched]  # (the base files the audit may read)
    oids = {x[0] for x in listed} | {x[2] for x in at_base}
    for path in files:
        if path == kept:
            continue
        versions = {x[0] for x in listed if x[1:] == [path]} | {x[2] for x in at_base if x[3] == path}
        shared = {x[0] for x in listed if x[1:] != [path]} | {x[2] for x in at_base if x[3] != path}
        if not versions or versions & shared:
            continue  # a version another file also holds: it would be lacking too
        pack = subprocess.run(["git", "--git-dir", str(r.m), "pack-objects", "--stdout", "-q"],
                              input="".join(f"{o}\n" for o in sorted(oids - versions)).encode(), capture_output=True)
        if pack.returncode:
            return f"#{s.top}: the snapshot lacks blobs of the stack"
        subprocess.run(["git", "--git-dir", str(r.path), "index-pack", "--stdin"], input=pack.stdout,
                       check=True, capture_output=True)
        owner, name = s.repo.split("/")
        url = f"https://github.com/{owner}/{name}.git"
        for key, value in (("core.repositoryformatversion", "1"), ("extensions.partialclone", "origin"),
                           ("remote.origin.url", url), ("remote.origin.promisor", "true"),
                           ("remote.origin.partialclonefilter", "blob:none"),
                           (f"url.{r.path.parent / 'offline' / name}.insteadOf", url)):
            r.git("config", key, value)
        dropped = r.revert_file(s.top_head, commit, kept, f"(the build without {commit[:10]}'s change to {kept})")
        assert dropped is not None
        r.env = {}  # built: from now on the clone lacks the blobs
        return Case(s.repo, "lacking-blobs", "built", s, r.path, f"#{s.top}'s clone lacks every version of {path}",
                    drop=dropped, dropped_path=kept, unread=frozenset({path}))
    return f"#{s.top}: no second file of its own blobs"


def _a_revert(r: Repo, s: Stack, base: str) -> tuple[str, str] | None:
    """(commit, path): the first commit of the stack, bottom first, modifying a shipped .py file of the
    net diff whose reverse applies to the top and changes more than whitespace."""
    net = {p for st, p in name_status(r, base, s.top_head) if st == "M"}
    for c in r.git("rev-list", "--reverse", "--no-merges", s.top_head, f"^{DEFAULT}").split():
        for st, path in name_status(r, f"{c}^", c):
            if (st == "M" and path in net and shipped_looking(path)
                    and r.revert_file(s.top_head, c, path, "probe") is not None):
                return c, path
    return None


BUILDERS = {"lacking-blobs": lacking_blobs,
            "combined": combined, "merged-main": merged_main, "fixup": fixup, "deleted": deleted, "moved": moved}
