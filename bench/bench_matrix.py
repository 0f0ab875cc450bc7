"""Times an audit of 10 targets in one run against an audit of one (the goal: at most twice as long).

    python bench/bench_matrix.py              # the demo's stack, 10 targets, median of 5
    python bench/bench_matrix.py --repeat 9

The demo's repository and build (prstack.demo) give the stack and the targets: its site-packages, its
wheel, its fork tree, and copies of the site-packages (each a target of its own), 10 in all. It times
`audit_stack` on the site-packages alone and `audit_targets` on the 10 (the stack read once, each
target opened and read, a target whose files hold the bytes of one judged before taking its verdicts),
CPU and wall medians, each run with a fresh clone source (GitClone), the two alternating. No network;
it puts `src/` on the path.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from prstack.audit import audit_stack, audit_targets
from prstack.demo.run import build
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets.base import TargetSpec


def timed(fn: object) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()  # type: ignore[operator]
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--targets", type=int, default=10)
    args = parser.parse_args()
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
        print(f"ratio (wall): {ratio:.2f} (goal <= 2)")


if __name__ == "__main__":
    main()
