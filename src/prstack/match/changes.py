"""Judging every hunk of a PR source's changes against a target: a job per PR and file, the huge files' jobs
as they come, each block found elsewhere weighed against the package at the stack's base. No I/O of its own:
files at revisions come through the `Revisions` interface (the PR source), target files through
the Target interface."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, TypeGuard

from prstack import progress
from prstack.match.base_package import PackageAtBase
from prstack.match.compose import Composed, compose_stack
from prstack.match.explain import BaseText
from prstack.match.file import Elsewhere, Explainer, PackageIndex
from prstack.match.jobs import TEXT_SUFFIXES, FileJob, FileKey, KeptVerdicts, package_index, run_jobs
from prstack.match.package import INDEX_MAX_BYTES
from prstack.match.passes import AFTER_REWRITES, BEFORE_REWRITES, StackView, settled
from prstack.match.stack_shape import carried_pairs, cumulative_pairs, stacked_above
from prstack.models import (
    Changes,
    FileChange,
    Hunk,
    HunkResult,
    HunkStatus,
    MatchEvidence,
    PullRequest,
    Rewrite,
    TargetKind,
)
from prstack.placement.paths import PathMap, Placement
from prstack.targets.base import Target


class StillLoading(Protocol):
    """A stack still loading (a PR source's `Loading`): its huge files' hunks come with `finish`."""

    @property
    def can_finish(self) -> bool: ...
    def finish(self) -> Changes: ...


class Revisions(Protocol):
    """What judging reads from where the PRs come from (a PR source): files at revisions."""

    @property
    def with_files(self) -> bool:
        """Whether files before and after each PR are known (a patch gives neither)."""
        ...

    def file_at(self, rev: str, path: str) -> bytes | None:
        """A file at a revision ((blob id, "") names a blob); None where unknown."""
        ...

    def prefetch_files(self, keys: Iterable[FileKey]) -> None:
        """Files `file_at` will be asked for, to read them in one go."""
        ...

    def tree_blobs(self, rev: str) -> list[tuple[str, str, int]]:
        """(path, blob id, size) of every file at `rev`."""
        ...


@dataclass(frozen=True)
class TargetIndex:
    """What is made once per opened target: where each repository path lands in it, and the index
    of its package's text."""

    pathmap: PathMap
    package: PackageIndex

    @classmethod
    def of(cls, target: Target, repo_files: Iterable[str], left: Iterable[str] = ()) -> TargetIndex:
        """`left`: repository paths the audited changes move or delete (see PathMap)."""
        source_tree = target.info.kind is TargetKind.TREE
        return cls(PathMap(target.files(), repo_files, left, source_tree), package_index(target))


@dataclass(frozen=True)
class _JudgingTools:
    """What every file job of a stack is judged with."""

    target: Target
    revisions: Revisions
    elsewhere: Elsewhere
    kept: KeptVerdicts | None = None


_LOCATION_STATUS = {
    Placement.NOT_SHIPPED: HunkStatus.NOT_SHIPPED,
    Placement.UNVERIFIABLE: HunkStatus.UNVERIFIABLE,
}


_LACKED = ("the clone lacks this file's blobs: not read, so not present (the command that fetches them is under "
           "the table of PRs)")


def judge_changes(
    changes: Changes,
    target: Target,
    revisions: Revisions,
    index: TargetIndex,
    later: StillLoading | None = None,
    kept: KeptVerdicts | None = None,
) -> tuple[HunkResult, ...]:
    """Every hunk of `changes` (its PRs bottom first) judged against `target`, in stack order,
    reading the files at the PRs' revisions from `revisions` (told ahead of time, in order, which
    it will be asked for). `index`: the target's, made once. `later`, when given, is the stack
    `changes` came from, still loading: the files its `finish` adds (huge ones, diffed meanwhile)
    are judged once it can finish, in the report's order. Where the files are known, a block of a
    hunk found in another file is no move when the package at the stack's base held it (nor when
    another audited hunk put it there). `kept`: verdicts of files judged for an earlier target of
    the run (see KeptVerdicts)."""
    prs, pathmap = changes.prs, index.pathmap
    by_pr = {pr.number: pr for pr in prs}
    above = stacked_above(prs)
    groups = _grouped(changes.hunks)
    carried = carried_pairs(prs, changes.hunks)
    results: dict[tuple[int, str], list[HunkResult]] = {}
    job_keys: list[tuple[int, str]] = []
    hunks_at: dict[str, list[Hunk]] = {}
    at_base = base_packages(prs, revisions, index) if revisions.with_files else None
    bench = _JudgingTools(target, revisions, Elsewhere(index.package, Explainer(hunks_at, at_base)), kept)
    ups = _Above(above, carried)

    def jobs_for(todo: Mapping[tuple[int, str], list[Hunk]]) -> list[FileJob]:
        """Jobs for the files to match; the verdicts of files not shipped or unverifiable."""
        jobs = []
        for (number, path), file_hunks in todo.items():
            location = pathmap.locate(path)
            if location.placement in _LOCATION_STATUS:
                status = _LOCATION_STATUS[location.placement]
                results[(number, path)] = [HunkResult(h, status) for h in file_hunks]
                continue
            assert location.installed_path is not None
            if any(h.unread for h in file_hunks):  # the source lacks the file's blobs
                results[(number, path)] = [HunkResult(h, HunkStatus.UNVERIFIABLE, location.installed_path,
                                                      unread=True, evidence=MatchEvidence(note=_LACKED))
                                           for h in file_hunks]
                continue
            hunks_at.setdefault(location.installed_path, []).extend(file_hunks)
            base_key, head_key = file_sides(by_pr[number], file_hunks[0])
            tops = tuple((pr.number, (pr.head_sha, path)) for pr in ups.heads(number))
            blobs = tuple((pr.number, blob) for pr in ups.carrying(number)
                          for blob in _named_blob(groups.get((pr.number, path), ())))
            jobs.append(FileJob(tuple(file_hunks), location.installed_path,
                                location.placement is Placement.SHIPPED, base_key, head_key, tops, blobs))
            job_keys.append((number, path))
        return jobs

    def late_jobs() -> list[FileJob]:
        nonlocal groups
        assert later is not None
        every = _grouped(later.finish().hunks)
        added = {key: group for key, group in every.items() if groups.get(key) != group}
        groups = every
        return jobs_for(added)

    late = None
    if later is not None:
        loading = later
        late = _LateJobs(lambda: loading.can_finish, late_jobs)
    judged = _judge(jobs_for(groups), bench, late)
    results.update(zip(job_keys, judged, strict=True))
    stack = StackView(prs, cumulative_pairs(prs, changes.hunks), pathmap, target.files())
    direct = settled(BEFORE_REWRITES, stack, [r for key in groups for r in results[key]])
    return tuple(settled(AFTER_REWRITES, stack, _through_rewrites(prs, direct, pathmap, bench)))


class _Above:
    """Per PR, the PRs stacked above it (top first) that a file job of it reads: those naming their
    heads, and those carrying its change (patches; see `carried_pairs`). Worked out once per PR, not
    per file, walking only the pairs carried (a series' PRs each have hundreds above them)."""

    def __init__(self, above: Mapping[int, Sequence[PullRequest]], carried: frozenset[tuple[int, int]]) -> None:
        self._above = above
        self._ups: defaultdict[int, set[int]] = defaultdict(set)
        for low, up in carried:
            self._ups[low].add(up)
        self._heads: dict[int, tuple[PullRequest, ...]] = {}
        self._carrying: dict[int, tuple[PullRequest, ...]] = {}

    def heads(self, number: int) -> tuple[PullRequest, ...]:
        got = self._heads.get(number)
        if got is None:
            got = self._heads[number] = tuple(pr for pr in self._above[number] if pr.head_sha)
        return got

    def carrying(self, number: int) -> tuple[PullRequest, ...]:
        got = self._carrying.get(number)
        if got is None:
            ups = self._ups.get(number, ())
            got = self._carrying[number] = tuple(pr for pr in self._above[number] if pr.number in ups) if ups else ()
        return got


def _named_blob(hunks: Sequence[Hunk]) -> tuple[str | None, ...]:
    """The file's blob after a PR's diff of it, where the diff names it: (blob id,), or (None,) for
    a deletion; () when the diff does not change the file or names no blob."""
    if not hunks:
        return ()
    if any(h.change is FileChange.DELETED for h in hunks):
        return (None,)
    blob = hunks[0].new_blob
    return (blob,) if blob and len(blob) >= 7 and blob.strip("0") else ()


def _through_rewrites(prs: Sequence[PullRequest], direct: Sequence[HunkResult], pathmap: PathMap,
                      bench: _JudgingTools) -> list[HunkResult]:
    """The stack judged as one composed change: a hunk whose lines a later PR of the stack
    rewrote names that rewrite (`superseded_by`), and when its own image is not in the target,
    is judged as the stack leaves its lines (see prstack.match.compose): present when they are."""
    composed = compose_stack(prs, [r.hunk for r in direct])
    if not composed:
        return list(direct)
    by_pr = {pr.number: pr for pr in prs}
    out = [replace(r, superseded_by=composed[i].by) if i in composed else r for i, r in enumerate(direct)]
    levels: dict[int, list[tuple[Composed, FileJob]]] = {}
    for i, last in composed.items():
        r = out[i]
        if r.status.present or not r.status.shipped:
            continue
        base, _ = file_sides(by_pr[r.hunk.pr], r.hunk)
        for c in (last, *reversed(last.earlier)):  # the whole stack first, then less of it
            location = pathmap.locate(c.hunk.path)
            if location.placement in _LOCATION_STATUS or location.installed_path is None:
                continue
            levels.setdefault(i, []).append((c, FileJob((c.hunk,), location.installed_path,
                                                        location.placement is Placement.SHIPPED,
                                                        base, (c.head, c.hunk.path))))
    # a level at a time, each hunk's first first: a hunk found present there is not judged again
    # with less of the stack
    depth = 0
    while todo := [(i, each[depth]) for i, each in levels.items() if depth < len(each)]:
        judged = _judge([job for _, (_, job) in todo], bench)
        for (i, (c, _)), (verdict,) in zip(todo, judged, strict=True):
            if verdict.status.present:
                del levels[i]
                out[i] = replace(verdict, hunk=out[i].hunk, superseded_by=composed[i].by,
                                 evidence=replace(verdict.evidence, note=_rewritten(c.by)))
        depth += 1
    return out


def _rewritten(rewrite: Rewrite) -> str:
    commit = f" (commit {rewrite.commit[:12]})" if rewrite.commit else ""
    return f"present as rewritten later by #{rewrite.pr}{commit}"


def _grouped(hunks: Iterable[Hunk]) -> dict[tuple[int, str], list[Hunk]]:
    """Hunks by (PR, path), in the order they first occur."""
    groups: defaultdict[tuple[int, str], list[Hunk]] = defaultdict(list)
    for hunk in hunks:
        groups[(hunk.pr, hunk.path)].append(hunk)
    return dict(groups)


def _judge(jobs: Sequence[FileJob], bench: _JudgingTools, late: _LateJobs | None = None) -> list[list[HunkResult]]:
    """Every job's verdicts, in order, then those of the `late` jobs."""

    def judged_here(todo: Sequence[FileJob]) -> list[list[HunkResult]]:
        bench.revisions.prefetch_files([key for job in todo for key in job.ahead if key is not None])
        return list(_counted(run_jobs(todo, bench.target, bench.revisions.file_at, bench.elsewhere, bench.kept),
                             len(todo)))

    alone = judged_here(jobs)
    return alone + (judged_here(late.jobs()) if late is not None else [])


class _LateJobs:
    """Jobs that come late (the files of huge files, diffed meanwhile): `ready` says whether
    `jobs` would answer at once."""

    def __init__(self, ready: Callable[[], bool], jobs: Callable[[], list[FileJob]]) -> None:
        self.ready, self.jobs = ready, jobs


def file_sides(pr: PullRequest, hunk: Hunk) -> tuple[FileKey | None, FileKey]:
    """The files a hunk group is judged with: the base's (if any), the head's. By the blob ids
    the diff names where it names them whole (git reads a blob by its id without walking the
    commit's trees), else as (commit, path)."""
    base = None
    if hunk.old_path:
        base = (hunk.old_blob, "") if _whole_id(hunk.old_blob) else (pr.base_sha, hunk.old_path)
    return base, ((hunk.new_blob, "") if _whole_id(hunk.new_blob) else (pr.head_sha, hunk.path))


def _whole_id(blob: str | None) -> TypeGuard[str]:
    """A whole SHA-1 or SHA-256 object id (an abbreviated one could be ambiguous)."""
    return blob is not None and _WHOLE_ID.fullmatch(blob) is not None


_WHOLE_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _counted(verdicts: Iterable[list[HunkResult]], total: int) -> Iterator[list[HunkResult]]:
    """The verdicts of `total` files, reporting progress as each file is done (prstack.progress)."""
    for done, verdict in enumerate(verdicts, 1):
        progress.step("matching files", done, total)
        yield verdict


def base_packages(prs: Sequence[PullRequest], revisions: Revisions,
                  index: TargetIndex) -> Callable[[int], BaseText | None]:
    """PR -> the package at the base of its stack (a stacked PR's base is its parent's head,
    whose change is audited too: the stack's own base is what was there before it), asked only
    whether it holds a block (see PackageAtBase: only the files the target does not hold as they
    were there are read)."""
    by_head = {pr.head_sha: pr for pr in prs}
    by_number = {pr.number: pr for pr in prs}
    made: dict[str, PackageAtBase] = {}

    def root(pr: PullRequest) -> str:
        seen = {pr.number}
        while (under := by_head.get(pr.base_sha)) is not None and under.number not in seen:
            seen.add(under.number)
            pr = under
        return pr.base_sha

    def installed_of(path: str) -> str | None:
        location = index.pathmap.locate(path)
        return location.installed_path if location.placement is Placement.SHIPPED else None

    def read(blobs: Sequence[str]) -> dict[str, bytes]:
        revisions.prefetch_files([(blob, "") for blob in blobs])
        return {blob: data for blob in blobs if (data := revisions.file_at(blob, "")) is not None}

    def of(number: int) -> BaseText | None:
        pr = by_number.get(number)
        if pr is None:
            return None
        rev = root(pr)
        if rev not in made:
            def files(rev: str = rev) -> list[tuple[str, str, int]]:
                return [(path, blob, size) for path, blob, size in revisions.tree_blobs(rev)
                        if path.endswith(TEXT_SUFFIXES) and size <= INDEX_MAX_BYTES]
            made[rev] = PackageAtBase(files, read, index.package, installed_of)
        return made[rev]

    return of
