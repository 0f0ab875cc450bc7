"""Run prstack on the stack shapes of shapes.py (found on the snapshots, or built on stacks.tsv's stacks).

    PRSTACK_STACKS_MIRRORS=/work/.mirror python bench/stacks/shapes_run.py --jobs 2 --show-failures
    python bench/stacks/shapes_run.py --repo huggingface/trl --shape combined,fixup --limit 2

Per case, each a `prstack audit TOP --git CASE_REPO --offline --tree TREE --format json` in a fresh process:
- top: the tree of the case's head: exit 0, every hunk present (applied/relocated; not-shipped allowed).
  lacking-blobs: exit 1, every hunk not present is of the file whose blobs the clone lacks, unverifiable
  and not read, and at least one is.
- drop: the tree of the case's dropped build: exit 1, a hunk of the dropped file not present (none present:
  a false present), no hunk of another file that was present in the top run now not present; fixup: a
  hunk of that file's note names the earlier commit the file matches. Combined cases have no dropped build
  of their own: run.py's drop (one commit of one held PR reverted in one shipped file).
- twice: hunks counted twice over the case's audits: the same change (path, lines, commit) under two
  PRs, or a hunk under a combined PR whose commit is in the history of a PR it holds.
- pr null: hunks whose `pr` is null.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from find import load, mirror
from run import NEUTRAL, PRESENT, Audit, Result, audit, by_pr, extract, is_ancestor, run_drop, run_top
from shapes import SHAPES, Case, build


def run_case(c: Case, work: Path) -> list[Result]:
    tree = work / "top"
    lacking = _archive(c, c.head, tree) if c.unread else extract(c.git, c.head, tree)
    if lacking:  # the snapshot lacks blobs of the stack: the bench cannot make its tree
        why = f"the snapshot lacks {lacking} blobs of the stack"
        return [Result(c.repo, c.stack.top, o, None, why, detail={"shape": c.shape, "origin": c.origin})
                for o in ("top", "drop")]
    base = audit([*by_pr(c.git, [c.stack.top]), "--tree", str(tree)], c.head)
    top = _top_lacking(c, base) if c.unread else run_top(c.stack, base, lacking)
    out = [top]
    if c.drop is None:
        out.append(run_drop(c.git, c.git, c.stack, tree, base))
    else:
        out.append(_drop(c, base, work / "drop"))
    audits = [x for r in out for x in r.audits]
    twice = _twice(c, audits)
    for r in out:
        r.detail |= {"shape": c.shape, "origin": c.origin, "what": c.what}
    out[0].detail["twice"] = twice
    if c.shape == "combined":
        mine = [h for h in base.hunks if h.get("pr") == c.stack.top]
        pr = next((p for p in _prs(base) if p.get("number") == c.stack.top), {})
        out[0].detail |= {"own_hunks": len(mine), "title": pr.get("title"), "title_source": pr.get("title_source")}
    return out


def _prs(a: Audit) -> list[dict[str, object]]:
    try:
        return list(json.loads(subprocess.run(a.cmd, capture_output=True, text=True).stdout)["prs"])
    except (json.JSONDecodeError, KeyError, TypeError):
        return []


def _archive(c: Case, rev: str, dest: Path) -> int:
    """The tree of `rev` from a clone lacking blobs, read with the snapshot's objects beside it."""
    dest.mkdir(parents=True)
    env = {**os.environ, "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(mirror(c.repo) / "objects")}
    tar = subprocess.run(["git", "--git-dir", str(c.git), "archive", rev], capture_output=True, check=True, env=env)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar.stdout, check=True)
    return 0


def _top_lacking(c: Case, a: Audit) -> Result:
    """Exit 1; the hunks not present are all of the unread files, unverifiable and not read."""
    r = Result(c.repo, c.stack.top, "top", None, audits=[a])
    unread = [h for h in a.hunks if h.get("unverifiable") == "not-read"]
    other = [h for h in a.hunks if h["status"] not in PRESENT and h not in unread]
    why = []
    if a.rc != 1:
        why.append(f"exit {a.rc}" + (f": {a.stderr}" if a.rc not in (0, 1) else ""))
    if not unread:
        why.append("no hunk unverifiable as not read")
    if any(h["path"] not in c.unread and h.get("old_path") not in c.unread for h in unread):
        why.append("a file not read whose blobs the clone holds")
    if other:
        why.append(f"{len(other)} other hunks not present")
        r.offending = other
    if a.stderr_lines > 1:
        why.append(f"{a.stderr_lines} lines on stderr")
    r.ok, r.why = not why, "; ".join(why)
    return r


def _drop(c: Case, base: Audit, tree: Path) -> Result:
    r = Result(c.repo, c.stack.top, "drop", None, detail={"path": c.dropped_path, "build": c.drop})
    assert c.drop is not None
    if c.unread:
        _archive(c, c.drop, tree)
    else:
        extract(c.git, c.drop, tree)
    a = audit([*by_pr(c.git, [c.stack.top]), "--tree", str(tree)], f"{c.drop} ({c.what})")
    r.audits = [a]
    paths = {c.dropped_path}
    of_f = [h for h in a.hunks if paths & {h["path"], h.get("old_path"), h.get("found_path")}]
    before = {(h["pr"], h["path"], h["old_start"], h["new_start"]) for h in base.hunks if h["status"] in PRESENT}
    turned = [h for h in a.bad if not paths & {h["path"], h.get("old_path")}
              and (h["pr"], h["path"], h["old_start"], h["new_start"]) in before]
    why = []
    if a.rc != 1:
        why.append(f"exit {a.rc}" + (f": {a.stderr}" if a.rc not in (0, 1) else ""))
    if not of_f:
        why.append(f"no hunk of {c.dropped_path}")
    elif all(h["status"] in PRESENT | NEUTRAL for h in of_f):
        r.false_present = 1
        why.append(f"every hunk of {c.dropped_path} still present")
        r.offending += of_f
    if c.earlier and not any(f"commit {c.earlier[:12]}" in (h.get("note") or "") for h in of_f):
        why.append(f"no note names {c.earlier[:10]}")
        r.offending += [h for h in of_f if h not in r.offending]
    if turned:
        why.append(f"{len(turned)} hunks of other files turned not present")
        r.offending += turned
    r.ok, r.why = not why, "; ".join(why)
    return r


def _twice(c: Case, audits: list[Audit]) -> int:
    """Hunks counted twice in one audit: the same change under two PRs, or (combined) a hunk under the
    collecting PR whose commit is in a held PR's history."""
    n = 0
    for a in audits:
        keys = Counter((h["path"], h.get("old_path"), h["old_start"], h["old_lines"], h["new_start"], h["new_lines"],
                        h.get("commit")) for h in a.hunks)
        n += sum(k - 1 for k in keys.values())
        if c.collected:
            heads = c.stack.parent_heads
            n += sum(1 for h in a.hunks if h.get("pr") == c.stack.top and h.get("commit")
                     and any(is_ancestor(c.git, h["commit"], x) for x in heads))
    return n


def rate(rs: list[Result]) -> str:
    done = [r for r in rs if r.ok is not None]
    skipped = len(rs) - len(done)
    return (f"{sum(bool(r.ok) for r in done)}/{len(done)}" + (f" ({skipped} skip)" if skipped else "")) if rs else "-"


def table(rows: dict[tuple[str, str], list[Result]], built: dict[tuple[str, str], int]) -> None:
    print(f"{'shape':15}{'origin':>7}{'cases':>7}{'top':>16}{'drop':>16}{'false pres':>11}{'twice':>7}"
          f"{'pr null':>8}{'med s':>7}")
    allr = [r for rs in rows.values() for r in rs]
    for (shape, origin), rs in [*sorted(rows.items()), (("all", ""), allr)]:
        of = {o: [r for r in rs if r.oracle == o] for o in ("top", "drop")}
        secs = [x.seconds for r in rs for x in r.audits]
        med = f"{statistics.median(secs):.2f}" if secs else "-"
        n = built.get((shape, origin), 0) if shape != "all" else sum(built.values())
        print(f"{shape:15}{origin:>7}{n:>7}{rate(of['top']):>16}{rate(of['drop']):>16}"
              f"{sum(r.false_present for r in rs):>11}{sum(r.detail.get('twice', 0) for r in rs):>7}"
              f"{sum(x.null_pr for r in rs for x in r.audits):>8}{med:>7}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", action="append", default=[], help="only this owner/name (repeatable)")
    ap.add_argument("--shape", action="append", default=[], help="comma list of: " + ",".join(SHAPES))
    ap.add_argument("--limit", type=int, default=3, help="cases per shape and repository (found ones first)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "prstack-shapes" / "results.jsonl")
    ap.add_argument("--show-failures", action="store_true")
    a = ap.parse_args()
    shapes = [x for s in a.shape or [",".join(SHAPES)] for x in s.split(",") if x]
    if set(shapes) - set(SHAPES):
        ap.error(f"unknown shape: {sorted(set(shapes) - set(SHAPES))}")
    repos = a.repo or ["huggingface/peft", "huggingface/accelerate", "huggingface/trl", "pytorch/torchtune"]
    by_repo = defaultdict(list)
    for s in load():
        by_repo[s.repo].append(s)
    t0 = time.perf_counter()
    rows: dict[tuple[str, str], list[Result]] = defaultdict(list)
    built: Counter[tuple[str, str]] = Counter()
    skips: list[str] = []
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with a.out.open("w") as out, tempfile.TemporaryDirectory(prefix="prstack-shapes-") as tmp:
        for repo in repos:
            for shape in shapes:
                root = Path(tmp) / repo.replace("/", "+") / shape
                root.mkdir(parents=True)
                cases = []
                for c in build(shape, repo, by_repo[repo], root, a.limit):
                    if isinstance(c, str):
                        skips.append(f"{repo} {shape}: {c}")
                    else:
                        cases.append(c)
                        built[shape, c.origin] += 1

                def one(c: Case, root: Path = root) -> list[Result]:
                    with tempfile.TemporaryDirectory(dir=root) as w:
                        try:
                            return run_case(c, Path(w))
                        finally:
                            shutil.rmtree(c.git, ignore_errors=True)

                with ThreadPoolExecutor(a.jobs) as ex:
                    for c, rs in zip(cases, ex.map(one, cases), strict=True):
                        rows[shape, c.origin] += rs
                        for r in rs:
                            out.write(json.dumps(r.record()) + "\n")
                shutil.rmtree(root, ignore_errors=True)
                print(f"  {repo} {shape}: {len(cases)} cases, {time.perf_counter() - t0:.0f} s", flush=True)
    table(rows, built)
    print(f"wall {time.perf_counter() - t0:.0f} s; per-case details: {a.out}")
    if skips:
        print("not built: " + "; ".join(skips[:40]))
    if a.show_failures:
        for rs in rows.values():
            for r in rs:
                if r.ok is False:
                    print(f"\n{r.repo} #{r.top} {r.oracle} [{r.detail.get('shape')}, {r.detail.get('origin')}]: "
                          f"{r.why}\n  {r.detail.get('what')}")
                    for x in r.audits:
                        print(f"  tree {x.tree}\n  $ " + " ".join(x.cmd))
                    for h in r.offending[:10]:
                        print(f"    pr {h.get('pr')} {h['path']} {h['status']} {(h.get('commit') or '')[:10]} "
                              f"{h.get('note') or ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
