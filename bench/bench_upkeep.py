"""Bench of `prstack upkeep` against its peers on a real repository's snapshot (data and scripts only).

1. PRs across releases: N squash-merged PRs of the clone (their refs/pull/N/head and their "(#N)"
   commit on main) since the 30th newest release, every third of the newest (what people carry),
   or with --spread evenly over those releases (the accuracy check: ancestry then names many of
   them), judged in every release tag by prstack, against the peer: `git tag --contains` of each
   PR's merge (squash) commit. Lists where
   prstack's first release (the earliest release holding every hunk at once) differs from
   ancestry's, and why: the commits that brought the hunks earlier (a backport), or for each hunk
   ancestry's release lacks, whether it was whole at the merge commit and which commit took it
   away before that release.
2. Patches against one candidate: the M newest PRs' diffs of src/ (fork point..head) as patch
   files, judged by prstack against the candidate tree (`git archive` of the newest tag), against
   the peer: `git apply --check` of each patch in that tree.
   The same patches audited as a series, as users run it: `prstack audit --patch FOLDER --tree TREE
   --format json` in a fresh process (and by --ab's prstack), against the same peer.

Each timing is the median of --repeat runs, prstack's and the peer's alternating (the machine's
load hits both); --ab SRC times another checkout's prstack (its src/) in the same alternation.

    PRSTACK_MIRRORS=/work/.mirror python bench/bench_upkeep.py [--repo huggingface+peft] [--prs 50] [--patches 300]
    mkdir -p /tmp/ab && git archive main src | tar -x -C /tmp/ab
    PRSTACK_MIRRORS=/work/.mirror python bench/bench_upkeep.py --repeat 3 --ab /tmp/ab/src
    PRSTACK_MIRRORS=/work/.mirror python bench/bench_upkeep.py --spread --patches 0   # the accuracy check

The snapshots are bare clones under $PRSTACK_MIRRORS/<owner>+<name>/repo.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from packaging.version import InvalidVersion, Version

from prstack.sources.git.repo import GitClone
from prstack.targets.base import TargetSpec

try:  # this code: the upkeep takes one typed request
    from prstack.upkeep.carrying import Carried, Upkeep, UpkeepRequest
    from prstack.upkeep.carrying import upkeep as _upkeep
    from prstack.upkeep.values import Item
except ImportError:  # an older prstack given to --ab: keyword arguments, modules named run and model
    from prstack.upkeep.model import Item  # type: ignore[no-redef]
    from prstack.upkeep.run import Carried, Upkeep  # type: ignore[no-redef]
    from prstack.upkeep.run import upkeep as _upkeep_kw
    UpkeepRequest = None


def upkeep(carried: Carried, git: GitClone | None, target: TargetSpec | None = None) -> Upkeep:
    """The upkeep of `carried`, through whichever interface the prstack imported has."""
    if UpkeepRequest is None:
        return _upkeep_kw(carried, git, target=target)
    return _upkeep(UpkeepRequest(carried, git, target=target))

HERE = Path(__file__).resolve().parent


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


def squashed_prs(repo: Path, since: str, count: int, spread: bool = False) -> dict[int, str]:
    """PR number -> its "(#N)" commit on main since `since`, for PRs whose head ref is there: every
    third of the newest (what is carried: recent PRs), or (`spread`) evenly over all of them."""
    refs = set(git(repo, "for-each-ref", "--format=%(refname)", "refs/pull").split())
    found: dict[int, str] = {}
    for line in git(repo, "log", "--first-parent", "--format=%H %s", f"{since}..main").splitlines():
        sha, _, subject = line.partition(" ")
        m = re.search(r"\(#(\d+)\)$", subject)
        if m and f"refs/pull/{m.group(1)}/head" in refs:
            found[int(m.group(1))] = sha
    numbers = sorted(found)
    if spread:
        picked = numbers[::max(len(numbers) // count, 1)][-count:]
    else:
        picked = numbers[-count * 3::3][:count] if len(numbers) >= count * 3 else numbers[-count:]
    return {n: found[n] for n in picked}


def timed(run: Callable[[], object], repeat: int, others: list[Callable[[], float]]) -> list[float]:
    """Medians of `run`'s time and each of `others`' (which time themselves), alternating."""
    times: list[list[float]] = [[] for _ in range(1 + len(others))]
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times[0].append(time.perf_counter() - started)
        for at, other in enumerate(others, 1):
            times[at].append(other())
    return [statistics.median(t) for t in times]


def ab_runner(src: str | None, args: list[str]) -> list[Callable[[], float]]:
    """A timing of the same work by the prstack in `src` (this script run there with --prstack-only)."""
    if src is None:
        return []

    def run() -> float:
        done = subprocess.run([sys.executable, __file__, *args, "--prstack-only"], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": src}, check=True)
        return float(json.loads(done.stdout.splitlines()[-1])["seconds"])

    return [run]


def bench_prs(repo: Path, count: int, repeat: int, ab: str | None, spread: bool) -> None:
    tags = versions(repo)
    prs = squashed_prs(repo, tags[max(len(tags) - 30, 0)], count, spread)
    done: list[Upkeep] = []
    ancestry: dict[int, str | None] = {}
    order = {name: i for i, name in enumerate(tags)}

    def peer() -> float:
        started = time.perf_counter()
        for number, sha in prs.items():
            holding = [t for t in git(repo, "tag", "--contains", sha).split() if t in order]
            ancestry[number] = min(holding, key=order.__getitem__) if holding else None
        return time.perf_counter() - started

    ours, theirs, *other = timed(lambda: done.append(upkeep(Carried(tuple(prs)), GitClone(repo))), repeat,
                                 [peer, *ab_runner(ab, ["--repo", repo.parent.name, "--prs", str(count),
                                                        "--patches", "0", *(["--spread"] if spread else [])])])
    report = done[-1].report
    picked = "spread over the releases" if spread else "every third of the newest"
    print(f"{repo.parent.name}: {len(prs)} PRs ({picked}) x {len(report.releases)} releases (median of {repeat})")
    print(f"  prstack upkeep: {ours:.2f} s ({done[-1].judgements} blob judgements)")
    if other:
        print(f"  prstack upkeep of {ab}: {other[0]:.2f} s")
    print(f"  peer, git tag --contains per merge commit: {theirs:.2f} s")
    differ = [(i, ancestry[i.number]) for i in report.items if i.number in ancestry
              and i.first_release != ancestry[i.number]]
    same = sum(1 for i in report.items if i.number in ancestry) - len(differ)
    shown = [(h, prs[i.number]) for i in report.items if i.number in prs for h in i.hunks
             if h.counted and h.result.status.present]
    present, brought = len(shown), sum(h.commit == squash for h, squash in shown)
    print(f"  evidence: {brought} of {present} hunks present in the candidate name the PR's squash commit")
    print(f"  first_release equals ancestry's for {same} PR(s); differs for {len(differ)}:")
    for item, tag in differ:
        assert item.number is not None
        print(f"    #{item.number}: prstack {item.first_release} ({item.landing_note or '-'}), ancestry {tag}")
        for line in why(repo, item, prs[item.number], tag, [r.name for r in report.releases]):
            print(f"      {line}")


def why(repo: Path, item: Item, merge: str, tag: str | None, tags: list[str]) -> list[str]:
    """Why prstack's first release (the earliest release holding every hunk at once) is not
    ancestry's `tag`: earlier, by the commits that brought the hunks (a backport or a copy); later
    or none, for each hunk that ancestry's release lacks: not whole at the merge commit, or whole
    there and rewritten before the release (by which commit), or neither (check by hand)."""
    from prstack.sources.git.prs import ClonePRs
    from prstack.upkeep.many_trees import TreeJudge, grouped
    from prstack.upkeep.trees import blob_ids, commits_touching

    src = GitClone(repo)
    lines: list[str] = []
    if item.first_release is not None and (tag is None or tags.index(item.first_release) < tags.index(tag)):
        found = sorted({h.commit for h in item.hunks if h.commit})
        subjects = [git(repo, "log", "-1", "--format=%h %s", c).strip() for c in found]
        return [f"earlier than its merge commit: brought by {'; '.join(subjects) or '?'} (a backport or a copy)"]
    assert tag is not None  # (both none: no difference)
    changes = ClonePRs(src, (item.pr.number,)).load().finish()
    judge = TreeJudge({p.number: p for p in changes.prs}, grouped(changes.hunks),
                      blob_ids=lambda names: blob_ids(src, names), read=src.objects.file_at,
                      prefetch=src.objects.prefetch_files, with_sides=True)
    until = src.resolve(tag)
    assert until is not None
    for h in item.hunks:
        if not h.counted or h.landing.present[tags.index(tag)]:
            continue
        hunk = h.result.hunk
        key = (hunk.pr, hunk.path)
        later = commits_touching(src, merge, until, [hunk.path]).get(hunk.path, [])
        held = judge.presence_at({key: [merge, *later]})[key]
        at = judge.index_in_group(hunk)
        where = f"{hunk.path}:{hunk.old_start} ({h.result.status.value} in the candidate)"
        if not held[merge][at]:
            lines.append(f"{where}: not whole at the merge commit {merge[:10]} (check by hand)")
            continue
        gone = next((c for c in later if not held[c][at]), None)
        lines.append(f"{where}: rewritten before {tag} by {git(repo, 'log', '-1', '--format=%h %s', gone).strip()}"
                     if gone else f"{where}: whole at the merge commit and at {tag}: check by hand")
    return lines


def patch_files(repo: Path, count: int, tmp: Path) -> tuple[list[str], Path]:
    """The `count` newest PRs that change src/, each's diff (fork point..head) as a patch file in
    `tmp`, and the candidate tree (the newest tag's) unpacked there."""
    folder, tree = tmp / "patches", tmp / "tree"
    folder.mkdir()
    tree.mkdir()
    subprocess.run(f"git --git-dir {repo} archive {versions(repo)[-1]} | tar -x -C {tree}", shell=True, check=True)
    numbers = sorted({int(r.rsplit("/", 2)[-2]) for r in
                      git(repo, "for-each-ref", "--format=%(refname)", "refs/pull").split()
                      if r.endswith("/head")}, reverse=True)
    names: list[str] = []
    for number in numbers:
        if len(names) == count:
            break
        head = f"refs/pull/{number}/head"
        found = subprocess.run(["git", "--git-dir", str(repo), "merge-base", "main", head], capture_output=True)
        base = found.stdout.decode().strip() if found.returncode == 0 else ""
        diff = git(repo, "diff", "--full-index", base, head, "--", "src/") if base else ""
        if diff:
            path = folder / f"{number}.patch"
            path.write_text(diff)
            names.append(str(path))
    return sorted(names), tree


def bench_patches(repo: Path, count: int, repeat: int, ab: str | None) -> None:
    candidate = versions(repo)[-1]
    with tempfile.TemporaryDirectory(prefix="prstack-bench-upkeep-") as tmp:
        names, tree = patch_files(repo, count, Path(tmp))
        applying: list[int] = []

        def apply_check() -> float:
            started = time.perf_counter()
            applying.append(sum(subprocess.run(["git", "apply", "--check", name], cwd=tree,
                                               capture_output=True).returncode == 0 for name in names))
            return time.perf_counter() - started

        series = [series_audit(src, Path(tmp) / "patches", tree) for src in (str(HERE.parent / "src"), ab) if src]
        # each code's upkeep in a fresh process (this one's caches would flatter runs after the first)
        upkeep_args = ["--repo", repo.parent.name, "--prs", "0", "--patches", str(count)]
        _, peer, ours, *other = timed(lambda: None, repeat, [
            apply_check, *ab_runner(str(HERE.parent / "src"), upkeep_args), *ab_runner(ab, upkeep_args), *series])
        done = upkeep(Carried(patches=tuple(names)), None, target=TargetSpec("tree", str(tree)))
        applies = applying[-1]
        other, audited = other[:len(other) - len(series)], other[len(other) - len(series):]
    verdicts: dict[str, int] = {}
    for item in done.report.items:
        verdicts[item.verdict.value] = verdicts.get(item.verdict.value, 0) + 1
    print(f"{repo.parent.name}: {len(names)} patches against the tree of {candidate} (median of {repeat})")
    print(f"  prstack upkeep (its work, a fresh process each run): {ours:.2f} s; verdicts {verdicts}")
    if other:
        print(f"  prstack upkeep of {ab}: {other[0]:.2f} s")
    print(f"  peer, git apply --check per patch: {peer:.2f} s; {applies} apply")
    for label, seconds in zip(("this code", ab), audited, strict=False):
        print(f"  prstack audit --patch (the series, a fresh process, json) of {label}: {seconds:.2f} s; "
              f"{seconds / peer:.2f} x the peer")


def series_audit(src: str, folder: Path, tree: Path) -> Callable[[], float]:
    """A timing of `prstack audit --patch FOLDER --tree TREE --format json` in a fresh process, by
    the prstack in `src`: the series audited as users run it."""

    def run() -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "prstack", "audit", "--patch", str(folder), "--tree", str(tree),
                        "--format", "json"], capture_output=True, env={**os.environ, "PYTHONPATH": src})
        return time.perf_counter() - started

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", default="huggingface+peft")
    parser.add_argument("--prs", type=int, default=50)
    parser.add_argument("--patches", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each timing (medians are printed)")
    parser.add_argument("--ab", metavar="SRC", help="also time the prstack of another checkout's src/")
    parser.add_argument("--spread", action="store_true", help="PRs spread over the releases (the accuracy check)")
    parser.add_argument("--prstack-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    repo = Path(os.environ.get("PRSTACK_MIRRORS", "/work/.mirror")) / args.repo / "repo"
    if not repo.is_dir():
        print(f"no snapshot at {repo}; set PRSTACK_MIRRORS", file=sys.stderr)
        return 2
    if args.prstack_only:
        print(json.dumps({"seconds": prstack_only(repo, args.prs, args.patches, args.spread)}))
        return 0
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if args.prs:
        bench_prs(repo, args.prs, args.repeat, args.ab, args.spread)
    if args.patches:
        bench_patches(repo, args.patches, args.repeat, args.ab)
    return 0


def prstack_only(repo: Path, prs: int, patches: int, spread: bool) -> float:
    """prstack's time on the same work as `bench_prs` (prs) or `bench_patches` (patches), alone."""
    if prs:
        tags = versions(repo)
        carried = Carried(tuple(squashed_prs(repo, tags[max(len(tags) - 30, 0)], prs, spread)))
        started = time.perf_counter()
        upkeep(carried, GitClone(repo))
        return time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix="prstack-bench-upkeep-") as tmp:
        names, tree = patch_files(repo, patches, Path(tmp))
        started = time.perf_counter()
        upkeep(Carried(patches=tuple(names)), None, target=TargetSpec("tree", str(tree)))
        return time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
