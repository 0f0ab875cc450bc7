"""A lean git layer for prstack's audit, as a measured proposal for `prstack.sources`: a handful of
git processes for the whole stack instead of several per PR and per file.

- stack and fork points: one `git log --boundary` over every PR head, the DAG walked in Python;
- every PR's own diff: one `git diff-tree --stdin -p` for all PRs;
- files at base and head: one `git cat-file --batch` process;
- then the library's own `prstack.audit.audit` (path mapping, matcher) unchanged.
What it leaves out: per-line commit attribution (`git blame`); each hunk gets its PR's commits.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from prstack.audit import audit
from prstack.hunks import parse_diff
from prstack.models import AuditReport, PullRequest
from prstack.targets.base import TargetSpec, open_target


class CatFile:
    """One `git cat-file --batch` process answering (rev, path) -> bytes or None."""

    def __init__(self, repo: str) -> None:
        self._proc = subprocess.Popen(["git", "-C", repo, "cat-file", "--batch"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def __call__(self, rev: str, path: str) -> bytes | None:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(f"{rev}:{path}\n".encode("utf-8", "surrogateescape"))
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            if len(header) == 3:  # a tree or commit: skip its body
                self._proc.stdout.read(int(header[2]) + 1)
            return None
        data = self._proc.stdout.read(int(header[2]))
        self._proc.stdout.read(1)
        return data

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait()


def git(repo: str, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], input=data, capture_output=True,
                          check=True).stdout


def lean_audit(repo: str, numbers: Sequence[int], tree: str, default: str = "main") -> AuditReport:
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/pull/").decode()
    head_of = {int(r.split("/")[2]): sha for r, sha in (line.split() for line in refs.splitlines())}
    heads = {n: head_of[n] for n in numbers}
    # the commits of every PR range with their parents; boundary commits (in main) start with '-'
    log = git(repo, "log", "--format=%m%H %P", "--boundary", "--topo-order",
              f"^{default}", *heads.values()).decode()
    parents: dict[str, list[str]] = {}
    boundary: set[str] = set()
    for line in log.splitlines():
        mark, sha, *ps = line[0], *line[1:].split()
        if mark == "-":
            boundary.add(sha)
        else:
            parents[sha] = ps
    pr_at = {sha: n for n, sha in head_of.items()}
    starts: dict[int, str] = {}
    todo = list(heads)
    while todo:
        n = todo.pop()
        sha, start = heads[n], None
        while start is None:  # first-parent walk: the nearest PR head below, or the fork point
            p = parents[sha][0]
            if p in boundary:
                start = p
            elif p in pr_at and pr_at[p] != n:
                start = p
                if pr_at[p] not in heads:  # a PR the asked ones stack on
                    heads[pr_at[p]] = p
                    todo.append(pr_at[p])
            else:
                sha = p
        starts[n] = start
    order = sorted(heads, key=lambda n: (_depth(n, starts, pr_at), n))
    # every PR's own diff in one process: "<head> <start>" asks for start -> head
    stdin = "".join(f"{heads[n]} {starts[n]}\n" for n in order).encode()
    out = git(repo, "-c", "core.quotepath=off", "diff-tree", "--stdin", "-p", "-M",
              "--full-index", "--src-prefix=a/", "--dst-prefix=b/", data=stdin)
    sections: dict[str, list[bytes]] = {}
    current: list[bytes] = []
    for line in out.splitlines(keepends=True):
        key = line.strip().decode("ascii", "replace")
        if key in pr_at and len(key) == 40:
            current = sections.setdefault(key, [])
            continue
        current.append(line)
    hunks = []
    for n in order:
        hunks += parse_diff(b"".join(sections.get(heads[n], [])), n)
    prs = [PullRequest(n, heads[n], starts[n], depends_on=(pr_at[starts[n]],)
                       if starts[n] in pr_at else ()) for n in order]
    base = starts[order[0]]
    repo_files = [p for p in git(repo, "ls-tree", "-r", "-z", "--name-only", base)
                  .decode("utf-8", "surrogateescape").split("\0") if p]
    repo_files = sorted(set(repo_files) | {h.path for h in hunks})
    target = open_target(TargetSpec("tree", path=tree), sorted({h.path for h in hunks}),
                         repo_files)
    cat = CatFile(repo)
    try:
        return audit(prs, hunks, target, repo_files, cat)
    finally:
        cat.close()


def _depth(n: int, starts: dict[int, str], pr_at: dict[str, int]) -> int:
    depth = 0
    while starts.get(n) in pr_at:
        n = pr_at[starts[n]]
        depth += 1
    return depth


if __name__ == "__main__":
    import sys
    report = lean_audit(sys.argv[1], [int(x) for x in sys.argv[3].split(",")], sys.argv[2])
    print(len(report.results), Path(sys.argv[2]))
