"""Find fork-style stacks of unmerged PRs by ancestry in the snapshots; write bench/stacks/stacks.tsv.

    PRSTACK_STACKS_MIRRORS=/work/.mirror python bench/stacks/find.py            # every repo, 50 tops each
    python bench/stacks/find.py --repo pytorch/ao --per-repo 80 --out /tmp/s.tsv

A PR's own range is `git rev-list HEAD ^main` (its head not in main). PR B stacks on PR A (A's head
differs from B's) when A's head is a commit of B's range: A is unmerged and B's branch holds it. A PR
whose head is in main's history is merged and never a parent. Kept: ranges of at most --max-commits
commits whose diff from the merge base touches a .py file. A top has a parent and is no other kept PR's
parent; parents are listed bottom first (smallest range first). One `git rev-list --parents` walk per
repository gives every range; PRs sharing a head are counted once (the smallest number).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
REPOS = ("huggingface/trl", "pytorch/ao", "huggingface/peft", "meta-llama/llama-stack",
         "pytorch/torchtitan", "huggingface/accelerate", "huggingface/lerobot", "pytorch/torchtune")
DEFAULT = "main"
COLUMNS = ("repo", "top", "top_head", "parents", "parent_heads")


def mirror(repo: str) -> Path:
    """The bare snapshot, under $PRSTACK_STACKS_MIRRORS/<owner>+<name>/repo."""
    return Path(os.environ.get("PRSTACK_STACKS_MIRRORS", "/work/.mirror")) / repo.replace("/", "+") / "repo"


def git(m: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", "--git-dir", str(m), *args], input=stdin, check=True, capture_output=True,
                          text=True, errors="replace").stdout


@dataclass(frozen=True)
class Stack:
    repo: str
    top: int
    top_head: str
    parents: tuple[int, ...]  # bottom first
    parent_heads: tuple[str, ...]

    def row(self) -> str:
        return "\t".join([self.repo, str(self.top), self.top_head, ",".join(map(str, self.parents)),
                          ",".join(self.parent_heads)])


def pr_heads(m: Path) -> dict[int, str]:
    """PR number -> head sha; PRs sharing a head keep the smallest number."""
    out: dict[int, str] = {}
    seen: set[str] = set()
    refs = []
    for line in git(m, "for-each-ref", "--format=%(objectname) %(refname)", "refs/pull").splitlines():
        sha, ref = line.split()
        mm = re.fullmatch(r"refs/pull/(\d+)/head", ref)
        if mm:
            refs.append((int(mm.group(1)), sha))
    for n, sha in sorted(refs):
        if sha not in seen:
            seen.add(sha)
            out[n] = sha
    return out


def ranges(m: Path, heads: dict[int, str], cap: int) -> dict[int, set[str]]:
    """PR -> its commits outside main (only PRs with 1..cap of them), from one rev-list walk."""
    parents: dict[str, list[str]] = {}
    walk = git(m, "rev-list", "--parents", "--stdin", "--not", DEFAULT, stdin="\n".join(heads.values()) + "\n")
    for line in walk.splitlines():
        sha, *ps = line.split()
        parents[sha] = ps
    out: dict[int, set[str]] = {}
    for n, head in heads.items():
        if head not in parents:
            continue  # in main's history: merged
        seen = {head}
        todo = [head]
        while todo and len(seen) <= cap:
            for p in parents[todo.pop()]:
                if p in parents and p not in seen:
                    seen.add(p)
                    todo.append(p)
        if len(seen) <= cap:
            out[n] = seen
    return out


def touches_py(m: Path, head: str) -> bool:
    base = git(m, "merge-base", DEFAULT, head).strip()
    return any(p.endswith(".py") for p in git(m, "diff", "--name-only", "--no-renames", base, head).splitlines())


def find(repo: str, cap: int, per_repo: int) -> tuple[list[Stack], int]:
    m = mirror(repo)
    heads = pr_heads(m)
    rng = ranges(m, heads, cap)
    by_head = {heads[n]: n for n in rng}
    stacked: dict[int, list[int]] = {}
    for b, commits in rng.items():
        ps = [by_head[c] for c in commits if c in by_head and by_head[c] != b]
        if ps:
            stacked[b] = sorted(ps, key=lambda a: (len(rng[a]), a))
    is_parent = {a for ps in stacked.values() for a in ps}
    tops = sorted((b for b in stacked if b not in is_parent), reverse=True)
    out: list[Stack] = []
    for b in tops:
        if len(out) >= per_repo:
            break
        if not touches_py(m, heads[b]):
            continue
        ps = stacked[b]
        out.append(Stack(repo, b, heads[b], tuple(ps), tuple(heads[a] for a in ps)))
    return out, len(tops)


def load(path: Path = HERE / "stacks.tsv") -> list[Stack]:
    rows = path.read_text().splitlines()
    out = []
    for line in rows[1:]:
        repo, top, head, ps, phs = line.split("\t")
        out.append(Stack(repo, int(top), head, tuple(int(x) for x in ps.split(",")), tuple(phs.split(","))))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", action="append", help="owner/name (repeatable; default: all of REPOS)")
    ap.add_argument("--max-commits", type=int, default=30)
    ap.add_argument("--per-repo", type=int, default=50, help="newest tops (by PR number) kept per repo")
    ap.add_argument("--out", type=Path, default=HERE / "stacks.tsv")
    a = ap.parse_args()
    found: list[Stack] = []
    for repo in a.repo or REPOS:
        if not mirror(repo).is_dir():
            print(f"{repo}: no snapshot at {mirror(repo)}", file=sys.stderr)
            continue
        stacks, tops = find(repo, a.max_commits, a.per_repo)
        depth = sum(len(s.parents) for s in stacks) / max(len(stacks), 1)
        print(f"{repo}: {tops} tops, {len(stacks)} kept (mean {depth:.1f} parents)", file=sys.stderr)
        found += stacks
    a.out.write_text("\t".join(COLUMNS) + "\n" + "".join(s.row() + "\n" for s in found))
    print(f"{len(found)} stacks -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
