"""Bench: stack detection for one PR in a clone holding 5,000 PR refs (goal: under 2 s).

    python bench/bench_stack.py [--prs 5000] [--runs 5] [--keep DIR]

Builds a repository with git fast-import: a default branch of 300 commits, 5,000 PRs of one to
three commits each forked from it, some stacked (ancestry), some rebased copies, and the measured
stack: #1 <- #2 (ancestry) <- #3 (rebased copy of #2's commits) on top. Prints the median time of
`load_changes` (graph and hunks) and of `read_graph` (graph only) for PR #3.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from prstack.sources.git.changes import load_changes, read_graph
from prstack.sources.git.repo import GitClone

ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
WHO = "Bench <bench@example.com> 1767225600 +0000"


class Stream:
    """A git fast-import stream with numbered marks."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.mark = 0

    def commit(self, ref: str, parent: int | None, message: str, files: dict[str, str]) -> int:
        self.mark += 1
        msg = message.encode()
        out = [
            f"commit {ref}\nmark :{self.mark}\ncommitter {WHO}\ndata {len(msg)}\n".encode(),
            msg,
            b"\n",
        ]
        if parent is not None:
            out.append(f"from :{parent}\n".encode())
        for path, text in files.items():
            data = text.encode()
            out.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
        self.parts.append(b"".join(out))
        return self.mark

    def reset(self, ref: str, mark: int) -> None:
        self.parts.append(f"reset {ref}\nfrom :{mark}\n\n".encode())


def module(i: int, change: str = "") -> str:
    return "".join(
        f"def f{j}():\n    return {j}{change if j == i % 40 else ''}\n\n" for j in range(40)
    )


def build(dest: Path, prs: int) -> Path:
    rnd = random.Random(4)
    subprocess.run(
        ["git", "init", "--quiet", "--initial-branch=main", str(dest)], check=True, env=ENV
    )
    s = Stream()
    main: list[int] = []
    for i in range(300):
        main.append(
            s.commit(
                "refs/heads/main",
                main[-1] if main else None,
                f"main {i}",
                {f"pkg/m{i % 50}.py": module(i, f" + {i}")},
            )
        )
    heads: list[int] = []
    for n in range(10, prs + 10):
        parent = main[rnd.randrange(len(main) - 1)]
        if heads and rnd.random() < 0.2:
            parent = heads[rnd.randrange(len(heads))]  # stacked on another PR
        mark = parent
        for k in range(rnd.randint(1, 3)):
            mark = s.commit(
                f"refs/pull/{n}/head",
                mark,
                f"PR {n} part {k}",
                {f"pkg/p{n % 400}.py": module(n + k, f" * {n}")},
            )
        s.reset(f"refs/pull/{n}/head", mark)
        heads.append(mark)
    # the measured stack, on the tip of main
    a1 = s.commit("refs/pull/1/head", main[-1], "Fix A", {"pkg/a.py": module(1, " - 1")})
    a2 = s.commit("refs/pull/1/head", a1, "Fix A more", {"pkg/a2.py": module(2, " - 2")})
    b1 = s.commit("refs/pull/2/head", a2, "Feature B", {"pkg/b.py": module(3, " - 3")})
    # #3 carries rebased copies of #1 and #2 (same patches, new SHAs) on an older main commit
    c = s.commit("refs/pull/3/head", main[-2], "Fix A\n\nrebased", {"pkg/a.py": module(1, " - 1")})
    c = s.commit("refs/pull/3/head", c, "Fix A more", {"pkg/a2.py": module(2, " - 2")})
    c = s.commit("refs/pull/3/head", c, "Feature B", {"pkg/b.py": module(3, " - 3")})
    c = s.commit(
        "refs/pull/3/head", c, "Feature C\n\nDepends on #2", {"pkg/c.py": module(4, " - 4")}
    )
    s.reset("refs/pull/1/head", a2)
    s.reset("refs/pull/2/head", b1)
    s.reset("refs/pull/3/head", c)
    s.reset("refs/heads/main", main[-1])
    subprocess.run(
        ["git", "-C", str(dest), "fast-import", "--quiet"],
        input=b"".join(s.parts),
        check=True,
        env=ENV,
    )
    subprocess.run(["git", "-C", str(dest), "gc", "--quiet"], check=True, env=ENV)
    return dest


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prs", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prstack-bench-") as tmp:
        repo = args.keep or Path(tmp) / "repo"
        if not (repo / ".git").exists():
            started = time.perf_counter()
            build(repo, args.prs)
            print(f"built {args.prs} PR refs in {time.perf_counter() - started:.1f} s: {repo}")
        runs: list[tuple[str, Callable[[], object]]] = [
            ("graph (read_graph)", lambda: read_graph(GitClone(repo), [3])),
            ("graph + hunks (load_changes)", lambda: load_changes(GitClone(repo), [3])),
        ]
        for name, run in runs:
            times = []
            for _ in range(args.runs):
                started = time.perf_counter()
                run()
                times.append(time.perf_counter() - started)
            median = statistics.median(times)
            print(f"{name}: median {median:.3f} s over {args.runs} runs (max {max(times):.3f} s)")
        graph = read_graph(GitClone(repo), [3])
        print(
            "stack of #3:",
            " <- ".join(f"#{n}" for n in graph.order),
            "|",
            "; ".join(f"#{e.parent}->#{e.child}: {', '.join(e.evidence)}" for e in graph.edges),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
