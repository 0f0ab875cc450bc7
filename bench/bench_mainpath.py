"""Bench of the path users run: `prstack audit --git REPO --site-packages DIR` from a cold process,
beside per-PR `git apply --check -R` and per-hunk `patch -R --dry-run` on the same diffs.

    python bench/bench_mainpath.py                  # 50 PRs; 20,000 files / 40 dists and twice that
    python bench/bench_mainpath.py --small          # a quick check of the bench itself
    python bench/bench_mainpath.py --keep /tmp/mp   # keep (and on later runs reuse) the case
    python bench/bench_mainpath.py --ab /tmp/ab/.venv/bin/python   # A/B: another install's prstack, alternating

Prints median wall times over --repeat runs, ratios, and each prstack process's peak memory.
"""

from __future__ import annotations

import argparse
import compileall
import functools
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from benchgen import git  # noqa: E402
from envgen import MainCase, build  # noqa: E402


def run(cmd: Sequence[str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB) and exit code of one process, its stdout read through a pipe."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(list(cmd), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    while proc.stdout.read(1 << 16):
        pass
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen does not wait again
    return time.perf_counter() - t0, usage.ru_maxrss / 1024, proc.returncode


class Timed:
    """A process run `repeat` times: median wall, max peak memory, exit codes seen."""

    def __init__(self, name: str, fn: Callable[[], tuple[float, float, int]], repeat: int) -> None:
        self.name, self.rss, self.codes = name, 0.0, set[int]()
        self.walls: list[float] = []
        for _ in range(repeat):
            self.once(fn)

    def once(self, fn: Callable[[], tuple[float, float, int]]) -> None:
        w, r, c = fn()
        self.walls.append(w)
        self.rss, self.codes = max(self.rss, r), self.codes | {c}

    @property
    def median(self) -> float:
        return float(statistics.median(self.walls))


def alternating(name: str, fns: Sequence[Callable[[], tuple[float, float, int]]], repeat: int) -> list[Timed]:
    """The same row for each of `fns` (this code, then the --ab code), their runs alternating so
    the machine's load hits each alike."""
    rows = [Timed(name if i == 0 else f"{name} (--ab)", fn, 0) for i, fn in enumerate(fns)]
    for _ in range(repeat):
        for row, fn in zip(rows, fns, strict=True):
            row.once(fn)
    return rows


def prstack(args: Sequence[str], python: str = sys.executable) -> list[str]:
    return [python, "-m", "prstack", *args]


def hunk_patches(diff: bytes) -> list[bytes]:
    """One single-hunk patch per hunk of a git diff (its file's --- / +++ header on each)."""
    out: list[bytes] = []
    header: list[bytes] = []
    current: list[bytes] | None = None
    for line in diff.splitlines(keepends=True):
        if line.startswith(b"diff --git "):
            if current:
                out.append(b"".join(header + current))
            header, current = [], None
        elif line.startswith(b"@@ "):
            if current:
                out.append(b"".join(header + current))
            current = [line]
        elif current is not None:
            current.append(line)
        elif line.startswith((b"--- ", b"+++ ")):
            header.append(line)
    if current:
        out.append(b"".join(header + current))
    return out


def peers(case: MainCase, site: Path) -> tuple[Callable[[], tuple[float, float, int]], ...]:
    """Per-PR `git apply --check -R` and per-hunk `patch -R --dry-run` (diffs made beforehand)."""
    diffs = [git(case.repo, "diff", case.starts[n], case.heads[n]) for n in case.numbers]
    hunks = [h for d in diffs for h in hunk_patches(d)]

    def each(cmd: list[str], inputs: list[bytes]) -> Callable[[], tuple[float, float, int]]:
        def go() -> tuple[float, float, int]:
            t0 = time.perf_counter()
            for data in inputs:
                subprocess.run(cmd, cwd=site, input=data, capture_output=True, check=False)
            return time.perf_counter() - t0, 0.0, 0
        return go

    return (each(["git", "apply", "--check", "-R", "-p2", "-"], diffs),
            each(["patch", "-R", "--dry-run", "-f", "-s", "-p2"], hunks))


def load_case(args: argparse.Namespace) -> MainCase:
    envs = [(2000, 8), (4000, 16)] if args.small else [(args.files, args.dists), (2 * args.files, 2 * args.dists)]
    prs = 8 if args.small else args.prs
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="prstack-mainpath-"))
    saved = root / "case.pickle"
    if args.keep and saved.exists():
        case: MainCase = pickle.loads(saved.read_bytes())
        return case
    t0 = time.perf_counter()
    case = build(root, envs, prs=prs, commits=args.commits)
    saved.write_bytes(pickle.dumps(case))
    print(f"case built in {time.perf_counter() - t0:.0f}s under {root}", file=sys.stderr)
    return case


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--small", action="store_true")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--files", type=int, default=20000)
    p.add_argument("--dists", type=int, default=40)
    p.add_argument("--prs", type=int, default=50)
    p.add_argument("--commits", type=int, default=4, help="commits per PR (each re-edits the PR's files)")
    p.add_argument("--keep", help="folder for the case (reused when it holds one)")
    p.add_argument("--ab", metavar="PYTHON", help="also time the prstack of this interpreter (another install)")
    args = p.parse_args()
    # users' installs hold bytecode (pip compiles it; an editable install writes it on first run):
    # compile ours once, or each cold run under PYTHONDONTWRITEBYTECODE=1 recompiles ~60 modules (~0.08 s)
    compileall.compile_dir(str(HERE.parent / "src" / "prstack"), quiet=1)
    case = load_case(args)
    top = str(case.numbers[-1])
    third = str(case.numbers[min(2, len(case.numbers) - 1)])
    rows: list[Timed] = []

    pythons = [sys.executable, *([args.ab] if args.ab else [])]

    def audit(site: Path, pr: str, fmt: str) -> list[Callable[[], tuple[float, float, int]]]:
        cmds = [prstack(["audit", pr, "--git", str(case.repo), "--site-packages", str(site), "--format", fmt], py)
                for py in pythons]
        return [functools.partial(run, cmd, case.repo) for cmd in cmds]

    small_site = case.sites[0]
    for site in case.sites:
        label = f"{site.files} files / {site.dists} dists"
        rows += alternating(f"prstack audit {top} PRs, json, {label}", audit(site.path, top, "json"), args.repeat)
    for fmt in ("table", "markdown"):
        rows += alternating(f"prstack audit {top} PRs, {fmt}", audit(small_site.path, top, fmt), args.repeat)
    rows += alternating(f"prstack audit {third} (3 PRs), json", audit(small_site.path, third, "json"), args.repeat)
    rows.append(Timed("prstack --help", lambda: run(prstack(["--help"]), case.repo), args.repeat))
    apply_fn, patch_fn = peers(case, small_site.path)
    rows.append(Timed("git apply --check -R, per PR", apply_fn, args.repeat))
    rows.append(Timed("patch -R --dry-run, per hunk", patch_fn, args.repeat))

    hunks = sum(len(hunk_patches(git(case.repo, "diff", case.starts[n], case.heads[n]))) for n in case.numbers)
    print(f"{len(case.numbers)} PRs, {args.commits} commits each, {hunks} hunks; environments: "
          + ", ".join(f"{s.files} files in {s.dists} distributions" for s in case.sites))
    width = max(len(r.name) for r in rows)
    for r in rows:
        mem = f"{r.rss:6.0f} MB" if r.rss else "         "
        print(f"{r.name:<{width}}  {r.median:7.2f}s median  {mem}  exit {sorted(r.codes)}  "
              f"runs {', '.join(f'{w:.2f}' for w in r.walls)}")
    main_run, doubled, apply_run, patch_run = rows[0], rows[len(pythons)], rows[-2], rows[-1]
    print(f"ratio prstack / git apply (per PR):   {main_run.median / apply_run.median:.2f}")
    print(f"ratio prstack / patch (per hunk):     {main_run.median / patch_run.median:.2f}")
    print(f"ratio doubled environment / base:     {doubled.median / main_run.median:.2f}")
    if args.ab:
        print(f"ratio --ab / this code, 50-PR json:  {rows[1].median / main_run.median:.2f} "
              f"(--ab / git apply: {rows[1].median / apply_run.median:.2f})")
    print(f"load average at the end:              {os.getloadavg()[0]:.1f} (2 cores shared)")
    print(f"peak memory of any prstack process:   {max(r.rss for r in rows):.0f} MB")
    if not args.keep:
        shutil.rmtree(case.repo.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
