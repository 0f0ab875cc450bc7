"""Bench: prstack's audit against per-PR `git apply --check -R`, per-hunk `patch -R --dry-run`
and grep, on a generated case whose every hunk has a known true status.

    python bench/bench_matcher.py            # large case: 2,000 modules, 60 PRs, ~2,400 hunks
    python bench/bench_matcher.py --small    # a few seconds

Prints per-status accuracy, false "applied" (a tool saying present when the change is not there),
median wall times over --repeat runs, prstack/peer time ratios and prstack's peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = Path(os.environ.get("PRSTACK_BENCH_SRC") or HERE.parent / "src")
"""The prstack source tree imported (a run with --ab times another one in its child processes)."""
sys.path[:0] = [str(HERE), str(SRC)]

from benchboiler import build_boilerplate  # noqa: E402
from benchgen import Case, HunkKey, Truth, build, key  # noqa: E402

from prstack.models import Hunk, HunkStatus  # noqa: E402

S = HunkStatus
CLASSES = [S.APPLIED, S.RELOCATED, S.MISSING, S.PARTIAL, S.DIVERGED, S.CONFLICT, S.FILE_MISSING]


def peak_rss_mb() -> float:
    """This process's peak resident memory. Linux's VmHWM belongs to the address space exec made;
    ru_maxrss there starts from the forking parent's peak (the bench itself, with the whole case
    in memory), so it is only the fallback elsewhere."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / MAXRSS_PER_MB


MAXRSS_PER_MB = 1024 * 1024 if sys.platform == "darwin" else 1024


def child(repo: str, tree: str, numbers: list[int], out: str) -> None:
    """Run prstack's library audit in this (fresh) process; write verdicts, time, peak memory."""
    from prstack.audit import audit_stack
    from prstack.targets.base import TargetSpec
    try:
        import prstack.match.jobs as jobs
        from prstack.sources.git.repo import GitClone
    except ModuleNotFoundError:  # --ab of a tree from before the layout of folders (match/, sources/git/)
        import prstack.matchjobs as jobs  # type: ignore[no-redef]

        from prstack.sources.git import GitClone  # type: ignore[no-redef]

    assert Path(jobs.__file__).is_relative_to(SRC.resolve()), jobs.__file__

    matching = 0.0

    # The pure matcher's share of this process's wall: a file's own verdicts and the look for its
    # blocks elsewhere (one `match_file` in a tree from before they were two steps).
    def timed(real: Any) -> Any:
        def matcher(*args: Any, **kwargs: Any) -> Any:
            nonlocal matching
            started = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                matching += time.perf_counter() - started
        return matcher

    for name in ("file_verdicts", "looked_up", "match_file"):
        if hasattr(jobs, name):
            setattr(jobs, name, timed(getattr(jobs, name)))
    started = time.perf_counter()
    report = audit_stack(GitClone(repo), numbers, TargetSpec("tree", path=tree))
    wall = time.perf_counter() - started
    rss = peak_rss_mb()
    # the largest process it waited for (a git)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / MAXRSS_PER_MB
    rows = [[r.hunk.pr, r.hunk.path, r.hunk.old_start, r.hunk.new_start, r.status.value]
            for r in report.results]
    Path(out).write_text(json.dumps({"wall": wall, "rss_mb": rss, "child_rss_mb": children, "results": rows,
                                     "matching": matching}))


def run_prstack(case: Case, src: Path = HERE.parent / "src"
                ) -> tuple[float, float, tuple[float, float], dict[HunkKey, HunkStatus]]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{HERE}", "PRSTACK_BENCH_SRC": str(src)}
        subprocess.run([sys.executable, __file__, "--child", str(case.repo), str(case.tree),
                        ",".join(map(str, case.numbers)), out.name], check=True, env=env)
        data = json.loads(Path(out.name).read_text())
    verdicts = {(pr, path, o, n): S(st) for pr, path, o, n, st in data["results"]}
    return data["wall"], data["matching"], (data["rss_mb"], data["child_rss_mb"]), verdicts


def present(case: Case, h: Hunk, yes: bool) -> HunkStatus:
    """A peer's yes/no, as a status: it cannot tell anything but present or absent."""
    if yes:
        return S.APPLIED
    return S.FILE_MISSING if not (case.tree / h.path).exists() else S.MISSING


def run_git_apply(case: Case) -> dict[HunkKey, HunkStatus]:
    by_pr: dict[int, list[Hunk]] = defaultdict(list)
    for h in case.hunks:
        by_pr[h.pr].append(h)
    out: dict[HunkKey, HunkStatus] = {}
    for n in case.numbers:
        diff = subprocess.run(["git", "-C", str(case.repo), "diff", "-M", "--full-index",
                               case.starts[n], case.heads[n], "--"], capture_output=True,
                              check=True).stdout
        ok = subprocess.run(["git", "apply", "--check", "-R", "-"], input=diff, cwd=case.tree,
                            capture_output=True).returncode == 0
        for h in by_pr[n]:
            out[key(h)] = present(case, h, ok)
    return out


def run_patch(case: Case) -> dict[HunkKey, HunkStatus]:
    out: dict[HunkKey, HunkStatus] = {}
    for h in case.hunks:
        src = f"a/{h.old_path}" if h.old_path else "/dev/null"
        dst = "/dev/null" if h.change.value == "deleted" else f"b/{h.path}"
        text = f"--- {src}\n+++ {dst}\n{h.diff_text()}\n".encode("utf-8", "surrogateescape")
        ok = subprocess.run(["patch", "-R", "--dry-run", "-p1", "-s", "-f", "-d", str(case.tree)],
                            input=text, capture_output=True).returncode == 0
        out[key(h)] = present(case, h, ok)
    return out


def run_grep(case: Case) -> dict[HunkKey, HunkStatus]:
    out: dict[HunkKey, HunkStatus] = {}
    for h in case.hunks:
        added = [t.strip() for t in h.added if t.strip()]
        removed = [t.strip() for t in h.removed if t.strip()]
        needle = max(added or removed or [""], key=len)
        found = bool(needle) and subprocess.run(
            ["grep", "-rqF", "-e", needle, str(case.tree)], capture_output=True).returncode == 0
        out[key(h)] = present(case, h, found if added else not found)
    return out


def timed(fn: Callable[[], dict[HunkKey, HunkStatus]], repeat: int
          ) -> tuple[float, dict[HunkKey, HunkStatus]]:
    times, got = [], {}
    for _ in range(repeat):
        started = time.perf_counter()
        got = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), got


def score(truth: dict[HunkKey, Truth], got: dict[HunkKey, HunkStatus]) -> dict[str, object]:
    per: dict[HunkStatus, list[int]] = {c: [0, 0] for c in CLASSES}
    by_mut: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    false_applied = false_relocated = 0
    wrong: Counter[tuple[str, str, str]] = Counter()
    for k, t in truth.items():
        g = got.get(k)
        ok = g is t.status
        per[t.status][0] += ok
        per[t.status][1] += 1
        by_mut[t.mutation][0] += ok
        by_mut[t.mutation][1] += 1
        if g is not None and g.present and not t.status.present:
            false_applied += 1
            false_relocated += g is S.RELOCATED
        if not ok:
            wrong[(t.mutation, t.status.value, g.value if g else "none")] += 1
    total_ok = sum(v[0] for v in per.values())
    return {"per": per, "by_mut": dict(by_mut), "false_applied": false_applied, "false_relocated": false_relocated,
            "overall": total_ok / max(1, len(truth)), "wrong": wrong}


def pct(ok: int, n: int) -> str:
    return f"{100 * ok / n:5.1f}%" if n else "    -"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", action="store_true", help="a small case that runs in seconds")
    ap.add_argument("--repeat", type=int, default=None,
                    help="timed runs per tool, median quoted (default 3; 1 with --small)")
    ap.add_argument("--big-mb", type=int, default=None, help="size of the one huge module")
    ap.add_argument("--keep", type=Path, help="build the case here and keep it")
    ap.add_argument("--prstack-only", action="store_true",
                    help="time and score prstack alone (no peers): for quick iteration")
    ap.add_argument("--case", choices=("old", "boilerplate", "both"), default="both",
                    help="which generated case: the old one, the boilerplate package, or both")
    ap.add_argument("--ab", type=Path, metavar="SRC",
                    help="also run prstack from this source tree (e.g. main's src/ unpacked with "
                         "`git archive main src | tar -x -C DIR`), alternating runs: an A/B in one run")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        repo, tree, numbers, out = args.child
        child(repo, tree, [int(n) for n in numbers.split(",")], out)
        return 0
    size = (dict(modules=60, units=13, prs=6, files_per_pr=4, edits_per_file=4, big_mb=2)
            if args.small else
            dict(modules=2000, units=13, prs=60, files_per_pr=8, edits_per_file=5, big_mb=50))
    args.repeat = args.repeat or (1 if args.small else 3)
    if args.big_mb is not None:
        size["big_mb"] = args.big_mb
    if args.keep and args.keep.exists():
        ap.error(f"--keep {args.keep}: already exists; give a new directory")
    root = args.keep or Path(tempfile.mkdtemp(prefix="prstack-matcher-bench-"))
    boiler = (dict(modules=60, units=8, prs=9, files_per_pr=3, edits_per_file=3) if args.small else
              dict(modules=1500, units=10, prs=90, files_per_pr=6, edits_per_file=4))
    try:
        code = 0
        if args.case in ("old", "both"):
            print("== the old case ==")
            case = build(root / "old", **size)
            code |= _bench(args, case, root / "old", f"the {size['big_mb']} MB module included")
        if args.case in ("boilerplate", "both"):
            print("\n== the boilerplate case ==")
            case = build_boilerplate(root / "boilerplate", **boiler)
            code |= _bench(args, case, root / "boilerplate", "no huge module")
        return code
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def _bench(args: argparse.Namespace, case: Case, root: Path, big: str) -> int:
    mutations = Counter(t.mutation for t in case.truth.values())
    print(f"case: {case.modules} modules, {case.lines_total:,} lines ({big}), "
          f"{len(case.numbers)} PRs, {len(case.hunks)} hunks; at {root}")
    print("mutations: " + ", ".join(f"{m} {n}" for m, n in sorted(mutations.items())))

    walls, matchings, rss, child_rss, got_prstack = [], [], 0.0, 0.0, {}
    ab_walls: list[float] = []
    got_ab: dict[HunkKey, HunkStatus] = {}
    for _ in range(args.repeat):
        wall, matching, (rss_mb, child_mb), got_prstack = run_prstack(case)
        walls.append(wall)
        matchings.append(matching)
        rss, child_rss = max(rss, rss_mb), max(child_rss, child_mb)
        if args.ab:
            ab_wall, _, _, got_ab = run_prstack(case, args.ab)
            ab_walls.append(ab_wall)
    tools: list[tuple[str, float, dict[HunkKey, HunkStatus]]] = [
        ("prstack audit", statistics.median(walls), got_prstack)]
    if args.ab:
        tools.append(("prstack (--ab)", statistics.median(ab_walls), got_ab))
    peers: tuple[tuple[str, Callable[[Case], dict[HunkKey, HunkStatus]]], ...] = (
        ("git apply -R/PR", run_git_apply), ("patch -R/hunk", run_patch), ("grep/hunk", run_grep))
    for name, fn in () if args.prstack_only else peers:
        t, got = timed(lambda fn=fn: fn(case), args.repeat)
        tools.append((name, t, got))
    scores = [(name, t, score(case.truth, got)) for name, t, got in tools]

    print()
    header = f"{'status (hunks)':24}" + "".join(f"{name:>20}" for name, _, _ in scores)
    print(header)
    print("-" * len(header))
    for c in CLASSES:
        n = scores[0][2]["per"][c][1]  # type: ignore[index]
        row = f"{c.value + f' ({n})':24}"
        for _, _, sc in scores:
            ok, tot = sc["per"][c]  # type: ignore[index]
            row += f"{pct(ok, tot):>20}"
        print(row)
    print("-" * len(header))
    print(f"{'overall':24}" + "".join(f"{100 * sc['overall']:19.1f}%" for _, _, sc in scores))  # type: ignore[operator]
    print(f"{'false present':24}" + "".join(f"{sc['false_applied']:>20}" for _, _, sc in scores))
    print(f"{'  of which relocated':24}" + "".join(f"{sc['false_relocated']:>20}" for _, _, sc in scores))
    print(f"{'wall time (median)':24}" + "".join(f"{t:19.2f}s" for _, t, _ in scores))
    base = scores[0][1]
    print(f"{'time / prstack':24}" + "".join(f"{t / base:19.1f}x" for _, t, _ in scores))
    print(f"prstack peak memory: {rss:.0f} MB in the audit process, {child_rss:.0f} MB in its largest "
          f"child (a git), {rss + child_rss:.0f} MB together at most")
    if args.ab:
        print(f"prstack (--ab {args.ab}) runs: {', '.join(f'{w:.2f}s' for w in ab_walls)}")
    print(f"prstack runs: {', '.join(f'{w:.2f}s' for w in walls)}; of which matching in the audit "
          f"process: {statistics.median(matchings):.2f}s median, the rest is git work (stack, diffs, "
          f"provenance) and reading the target")

    print("\nper mutation (" + " / ".join(name for name, _, _ in scores) + "):")
    for m in sorted(mutations):
        cells = []
        for _, _, sc in scores:
            ok, tot = sc["by_mut"].get(m, [0, 0])  # type: ignore[union-attr]
            cells.append(pct(ok, tot).strip())
        print(f"  {m:24} {mutations[m]:5}  " + " / ".join(cells))
    wrong = scores[0][2]["wrong"]
    if wrong:
        print("\nprstack's misses (mutation, truth, said): count")
        for (m, t, g), n in wrong.most_common(20):  # type: ignore[attr-defined]
            print(f"  {m}, {t}, {g}: {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
