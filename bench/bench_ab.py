"""A/B of one prstack command: this tree's prstack and another source tree's, runs alternating (the
machine's load hits both), medians of the wall time and of the CPU time of the process with the git
processes it waited for (`wait4`), which a shared machine's load moves less than the wall.

    mkdir -p /tmp/old && git archive main src | tar -x -C /tmp/old
    python bench/bench_ab.py --ab /tmp/old/src --repeat 9 -- audit 50 --git REPO --site-packages SITE --format json

Output goes to /dev/null; exit codes are printed, so a failing command is seen.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(src: str, args: list[str]) -> tuple[float, float, int]:
    """(wall, CPU of the process and its reaped children, exit code) of `python -m prstack ARGS` from `src`."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "prstack", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": src})
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ab", required=True, metavar="SRC", help="the other source tree's src/")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("args", nargs=argparse.REMAINDER, help="prstack's arguments (after --)")
    options = parser.parse_args()
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    codes = {"this code": str(HERE.parent / "src"), options.ab: options.ab}
    for src in codes.values():
        run(src, args)  # (warm the disk cache)
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in codes}
    for i in range(options.repeat):
        for name in (list(codes) if i % 2 == 0 else list(reversed(codes))):
            runs[name].append(run(codes[name], args))
    print(f"prstack {' '.join(args)}")
    for name, rows in runs.items():
        wall, cpu = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
        codes_seen = sorted({r[2] for r in rows})
        print(f"  {name}: wall {wall:.3f} s, cpu {cpu:.3f} s (medians of {len(rows)}; exit {codes_seen})")
    print(f"  load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
