"""Times an audit of 10 targets in one run against an audit of one (the goal: at most 1.5 times as long).

    python bench/bench_matrix.py              # the demo's stack, 10 targets, median of 5
    python bench/bench_matrix.py --repeat 9
    python bench/bench_matrix.py --mainpath /tmp/mp   # the main-path bench's case (kept there, reused)

The demo's repository and build (prstack.demo) give the stack and the targets: its site-packages, its
wheel, its fork tree, and copies of the site-packages (each a target of its own), 10 in all. It times
`audit_stack` on the site-packages alone and `audit_targets` on the 10 (the stack read once, each
target opened and read, a target whose files hold the bytes of one judged before taking its verdicts),
CPU and wall medians, each run with a fresh clone source (GitClone), the two alternating. No network;
it puts `src/` on the path.

With `--mainpath DIR`: the main-path bench's case (`envgen`: 50 stacked PRs, a site-packages of 20,000
files in 40 distributions; built in DIR, or reused from `bench_mainpath.py --keep DIR`), and three
distinct builds of its package (each with another tenth of its files from an older build), each
installed in three environments of its own (hard-linked copies but for the package's files), plus one
more of the first: 10 targets, 3 distinct. `--ab SRC` times another checkout's `src/` in the same
alternation (a fresh process per run, so each code imports its own prstack).
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from prstack.audit import audit_stack, audit_targets
from prstack.demo.example import build
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets.base import TargetSpec

HERE = Path(__file__).resolve().parent


def timed(fn: object) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()  # type: ignore[operator]
    return time.perf_counter() - wall, time.process_time() - cpu


def _build(site: Path, copy: Path, package: dict[str, bytes], seed: int) -> None:
    """`site` hard-linked into `copy`, its package's files rewritten with another tenth from an
    older build (each unlinked first: the other environments keep theirs)."""
    from envgen import PACKAGE, write_dist

    shutil.copytree(site, copy, copy_function=os.link)
    installed = dict(package)
    for rel in random.Random(seed).sample(sorted(installed), len(installed) // 10):
        installed[rel] = installed[rel].replace(b"  # pr ", b"  # old pr ", 1)
    for rel in installed:
        (copy / rel).unlink(missing_ok=True)
    info = copy / f"{PACKAGE}-0.1.dist-info"
    for name in ("METADATA", "RECORD", "top_level.txt"):
        (info / name).unlink()
    write_dist(copy, PACKAGE, "0.1", installed)


def mainpath_case(root: Path) -> tuple[Path, int, list[Path]]:
    """The main-path case (reused when `root` holds one) and the 10 site-packages of the matrix."""
    from envgen import PACKAGE, MainCase, build

    saved = root / "case.pickle"
    if saved.exists():
        case: MainCase = pickle.loads(saved.read_bytes())
    else:
        case = build(root, [(20000, 40)])
        saved.write_bytes(pickle.dumps(case))
    site = case.sites[0].path
    matrix = root / "matrix"
    builds = [matrix / f"build{b}-env0" for b in range(3)]
    if not matrix.exists():
        def git(*args: str) -> bytes:
            return subprocess.run(["git", "-C", str(case.repo), *args], capture_output=True, check=True).stdout

        head = f"refs/pull/{case.numbers[-1]}/head"
        listed = git("ls-tree", "-r", "--name-only", head, "--", f"src/{PACKAGE}").decode().split()
        package = {rel.removeprefix("src/"): git("show", f"{head}:{rel}") for rel in listed}
        shutil.copytree(site, builds[0], copy_function=os.link)
        for b in (1, 2):
            _build(site, builds[b], package, seed=100 + b)
        for b, first in enumerate(builds):
            for env in (1, 2):
                shutil.copytree(first, matrix / f"build{b}-env{env}", copy_function=os.link)
        shutil.copytree(builds[0], matrix / "build0-env3", copy_function=os.link)
    sites = sorted(matrix.iterdir())
    return case.repo, case.numbers[-1], sites


TIMED = """
import sys, time
from prstack.audit import audit_stack, audit_targets
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets.base import TargetSpec
repo, top, sites = sys.argv[1], int(sys.argv[2]), sys.argv[4:]
specs = [TargetSpec("site-packages", s) for s in sites]
wall, cpu = time.perf_counter(), time.process_time()
if sys.argv[3] == "one":
    audit_stack(GitClone(repo), [top], specs[0])
else:
    audit_targets(ClonePRs(GitClone(repo), [top]), specs)
print(time.perf_counter() - wall, time.process_time() - cpu)
"""


def mainpath(args: argparse.Namespace) -> None:
    repo, top, sites = mainpath_case(Path(args.mainpath))
    codes = {"this code": str(HERE.parent / "src"), **({"--ab": args.ab} if args.ab else {})}
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}

    def once(src: str, how: str) -> tuple[float, float]:
        out = subprocess.run([sys.executable, "-c", TIMED, str(repo), str(top), how, *map(str, sites)],
                             capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": src})
        wall, cpu = out.stdout.split()
        return float(wall), float(cpu)

    for src in codes.values():
        once(src, "one")  # (warm the disk cache)
    for _ in range(args.repeat):
        for name, src in codes.items():
            for how in ("one", "ten"):
                runs.setdefault((name, how), []).append(once(src, how))
    print(f"{len(sites)} site-packages of 20,000 files, 3 distinct builds of the audited package; "
          f"{top} PRs; medians of {args.repeat}, each code's runs alternating")
    for name in codes:
        one, ten = runs[(name, "one")], runs[(name, "ten")]
        for label, rows in (("1 target", one), (f"{len(sites)} targets", ten)):
            print(f"{name:>10} {label:>11}: wall {statistics.median(r[0] for r in rows):6.2f} s, "
                  f"cpu {statistics.median(r[1] for r in rows):6.2f} s")
        ratio = statistics.median(r[0] for r in ten) / statistics.median(r[0] for r in one)
        print(f"{name:>10} ratio (wall): {ratio:.2f} (goal <= 1.5)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--targets", type=int, default=10)
    parser.add_argument("--mainpath", metavar="DIR", help="the main-path case's matrix, built in (or reused from) DIR")
    parser.add_argument("--ab", metavar="SRC", help="with --mainpath: also time another checkout's src/")
    args = parser.parse_args()
    if args.mainpath:
        mainpath(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        demo = build(Path(tmp) / "demo")
        specs = [TargetSpec("site-packages", str(demo.site_packages)), TargetSpec("wheel", str(demo.wheel)),
                 TargetSpec("tree", str(demo.tree))]
        for i in range(args.targets - len(specs)):
            copy = Path(tmp) / f"site{i}"
            shutil.copytree(demo.site_packages, copy)
            specs.append(TargetSpec("site-packages", str(copy)))
        audit_stack(GitClone(demo.repo.path), [40898], specs[0])  # (warm the disk cache)
        one, many = [], []
        for _ in range(args.repeat):  # a fresh clone source each run (its caches would favour the second)
            one.append(timed(lambda: audit_stack(GitClone(demo.repo.path), [40898], specs[0])))
            many.append(timed(lambda: audit_targets(ClonePRs(GitClone(demo.repo.path), [40898]), specs)))
        for label, runs in (("1 target", one), (f"{len(specs)} targets", many)):
            print(f"{label:>11}: wall {statistics.median(r[0] for r in runs) * 1000:7.1f} ms, "
                  f"cpu {statistics.median(r[1] for r in runs) * 1000:7.1f} ms")
        ratio = statistics.median(r[0] for r in many) / statistics.median(r[0] for r in one)
        print(f"ratio (wall): {ratio:.2f} (goal <= 1.5)")


if __name__ == "__main__":
    main()
