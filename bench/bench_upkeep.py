"""Bench of `prstack upkeep` against its peers on a real repository's snapshot (data and scripts only).

1. PRs across releases: N squash-merged PRs of the clone (their refs/pull/N/head and their "(#N)"
   commit on main) judged in every release tag by prstack, against the peer: `git tag --contains`
   of each PR's merge (squash) commit. Lists where prstack's first release differs from ancestry's.
2. Patches against one candidate: M PRs' diffs (fork point..head) as patch files, judged by prstack
   against the candidate tree (`git archive` of the newest tag), against the peer: `git apply --check`
   of each patch in that tree.

    PRSTACK_MIRRORS=/work/.mirror python bench/bench_upkeep.py [--repo huggingface+peft] [--prs 50] [--patches 300]

The snapshots are bare clones under $PRSTACK_MIRRORS/<owner>+<name>/repo.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from packaging.version import InvalidVersion, Version

from prstack.sources.git.repo import GitClone
from prstack.targets.base import TargetSpec
from prstack.upkeep.run import Carried, upkeep


def git(repo: Path, *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(["git", "--git-dir", str(repo), *args], input=data, capture_output=True, check=True)
    return done.stdout.decode("utf-8", "replace")


def versions(repo: Path) -> list[str]:
    tags = []
    for name in git(repo, "tag").split():
        try:
            tags.append((Version(name), name))
        except InvalidVersion:
            continue
    return [name for _, name in sorted(tags)]


def squashed_prs(repo: Path, since: str, count: int) -> dict[int, str]:
    """PR number -> its "(#N)" commit on main since `since`, for PRs whose head ref is there."""
    refs = set(git(repo, "for-each-ref", "--format=%(refname)", "refs/pull").split())
    found: dict[int, str] = {}
    for line in git(repo, "log", "--first-parent", "--format=%H %s", f"{since}..main").splitlines():
        sha, _, subject = line.partition(" ")
        m = re.search(r"\(#(\d+)\)$", subject)
        if m and f"refs/pull/{m.group(1)}/head" in refs:
            found[int(m.group(1))] = sha
    picked = sorted(found)[-count * 3::3][:count] if len(found) >= count * 3 else sorted(found)[-count:]
    return {n: found[n] for n in picked}


def bench_prs(repo: Path, count: int) -> None:
    tags = versions(repo)
    prs = squashed_prs(repo, tags[max(len(tags) - 30, 0)], count)
    started = time.perf_counter()
    done = upkeep(Carried(tuple(prs)), GitClone(repo))
    ours = time.perf_counter() - started
    started = time.perf_counter()
    ancestry: dict[int, str | None] = {}
    order = {name: i for i, name in enumerate(tags)}
    for number, sha in prs.items():
        holding = [t for t in git(repo, "tag", "--contains", sha).split() if t in order]
        ancestry[number] = min(holding, key=order.__getitem__) if holding else None
    peer = time.perf_counter() - started
    report = done.report
    print(f"{repo.parent.name}: {len(prs)} PRs x {len(report.releases)} releases")
    print(f"  prstack upkeep: {ours:.2f} s ({done.judgements} blob judgements)")
    print(f"  peer, git tag --contains per merge commit: {peer:.2f} s")
    differ = [(i, ancestry[i.number]) for i in report.items if i.number in ancestry
              and i.first_release != ancestry[i.number]]
    same = sum(1 for i in report.items if i.number in ancestry) - len(differ)
    print(f"  first_release equals ancestry's for {same} PR(s); differs for {len(differ)}:")
    for item, theirs in differ:
        hunks = ", ".join(f"{h.result.hunk.path}:{h.result.hunk.old_start} {h.result.status.value}"
                          f" landed {h.landing.landed_in}" for h in item.hunks if h.counted)[:300]
        print(f"    #{item.number}: prstack {item.first_release} ({item.landing_note or '-'}), ancestry {theirs}; "
              f"{hunks}")


def bench_patches(repo: Path, count: int) -> None:
    tags = versions(repo)
    candidate = tags[-1]
    numbers = sorted({int(r.rsplit("/", 2)[-2]) for r in
                      git(repo, "for-each-ref", "--format=%(refname)", "refs/pull").split()
                      if r.endswith("/head")})[-count:]
    with tempfile.TemporaryDirectory(prefix="prstack-bench-upkeep-") as tmp:
        folder, tree = Path(tmp) / "patches", Path(tmp) / "tree"
        folder.mkdir()
        tree.mkdir()
        subprocess.run(f"git --git-dir {repo} archive {candidate} | tar -x -C {tree}", shell=True, check=True)
        names = []
        for number in numbers:
            head = f"refs/pull/{number}/head"
            base = git(repo, "merge-base", "main", head).strip()
            diff = git(repo, "diff", "--full-index", base, head, "--", "src/")
            if diff:
                path = folder / f"{number}.patch"
                path.write_text(diff)
                names.append(str(path))
        started = time.perf_counter()
        done = upkeep(Carried(patches=tuple(names)), None, target=TargetSpec("tree", str(tree)))
        ours = time.perf_counter() - started
        started = time.perf_counter()
        applies = sum(subprocess.run(["git", "apply", "--check", name], cwd=tree, capture_output=True).returncode == 0
                      for name in names)
        peer = time.perf_counter() - started
    verdicts: dict[str, int] = {}
    for item in done.report.items:
        verdicts[item.verdict.value] = verdicts.get(item.verdict.value, 0) + 1
    print(f"{repo.parent.name}: {len(names)} patches against the tree of {candidate}")
    print(f"  prstack upkeep: {ours:.2f} s; verdicts {verdicts}")
    print(f"  peer, git apply --check per patch: {peer:.2f} s; {applies} apply")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", default="huggingface+peft")
    parser.add_argument("--prs", type=int, default=50)
    parser.add_argument("--patches", type=int, default=300)
    args = parser.parse_args()
    repo = Path(os.environ.get("PRSTACK_MIRRORS", "/work/.mirror")) / args.repo / "repo"
    if not repo.is_dir():
        print(f"no snapshot at {repo}; set PRSTACK_MIRRORS", file=sys.stderr)
        return 2
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if args.prs:
        bench_prs(repo, args.prs)
    if args.patches:
        bench_patches(repo, args.patches)
    return 0


if __name__ == "__main__":
    sys.exit(main())
