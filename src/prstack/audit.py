"""The audit: every hunk of a stack judged against a target. Connects the parts; no I/O of its own."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace

from prstack.matcher import PackageIndex, find_moved
from prstack.matchjobs import (
    HELPER_MIN_FILES,
    TEXT_SUFFIXES,
    FileAt,
    FileJob,
    FileKey,
    HelperGone,
    MatchHelper,
    package_index,
    relocate,
    run_jobs,
    split_share,
)
from prstack.models import (
    AuditReport,
    Hunk,
    HunkResult,
    HunkStatus,
    PRReport,
    PRStatus,
    PullRequest,
)
from prstack.sources.detect import PRMetadata
from prstack.sources.git import GitSource
from prstack.sources.loader import load_stack
from prstack.targets.base import Target, TargetSpec, needs_pr_paths, open_target
from prstack.targets.layout import PathMap, Placement
from prstack.targets.provenance import flag_results, join_build

__all__ = ["FileAt", "audit", "audit_stack", "package_index", "pr_status", "status_counts"]

_LOCATION_STATUS = {
    Placement.NOT_SHIPPED: HunkStatus.NOT_SHIPPED,
    Placement.UNVERIFIABLE: HunkStatus.UNVERIFIABLE,
}


def pr_status(results: Iterable[HunkResult]) -> PRStatus:
    """Roll a PR's hunk verdicts up as prstack.audit/1 says (file-missing counts as missing)."""
    shipped = [r.status for r in results if r.status.shipped]
    if not shipped:
        return PRStatus.NOT_SHIPPED
    if all(s.present for s in shipped):
        return PRStatus.APPLIED
    if all(s in (HunkStatus.MISSING, HunkStatus.FILE_MISSING) for s in shipped):
        return PRStatus.MISSING
    return PRStatus.PARTIAL


def status_counts(results: Iterable[HunkResult]) -> dict[str, int]:
    counts = {status.value: 0 for status in HunkStatus}
    for r in results:
        counts[r.status.value] += 1
    return counts


def audit(
    prs: Sequence[PullRequest],
    hunks: Sequence[Hunk],
    target: Target,
    repo_files: Iterable[str],
    file_at: FileAt,
    prefetch: Callable[[Sequence[FileKey]], None] | None = None,
    package: PackageIndex | None = None,
    helper: MatchHelper | None = None,
    held: Callable[[FileKey], bool] | None = None,
) -> AuditReport:
    """Judge every hunk of `prs` (bottom-first) against `target`. `prefetch`, when given, is told
    up front every (commit, path) `file_at` will be asked for, in order, to read them ahead.
    `package` is the target's package index, when one is already made (see `package_index`).
    With a `helper`, it matches a share of the files and knows the package; `held` says which
    files at revisions are already in this process's memory (never handed to the helper)."""
    pathmap = PathMap(target.files(), repo_files)
    by_pr = {pr.number: pr for pr in prs}
    groups: defaultdict[tuple[int, str], list[Hunk]] = defaultdict(list)
    for hunk in hunks:
        groups[(hunk.pr, hunk.path)].append(hunk)
    results: dict[tuple[int, str], list[HunkResult]] = {}
    jobs: list[FileJob] = []
    job_keys: list[tuple[int, str]] = []
    for (number, path), file_hunks in groups.items():
        location = pathmap.locate(path)
        if location.placement in _LOCATION_STATUS:
            status = _LOCATION_STATUS[location.placement]
            results[(number, path)] = [HunkResult(h, status) for h in file_hunks]
            continue
        assert location.installed_path is not None
        base_key, head_key = _sides(by_pr[number], path, file_hunks[0].old_path)
        jobs.append(FileJob(tuple(file_hunks), location.installed_path,
                            location.placement is Placement.SHIPPED, base_key, head_key))
        job_keys.append((number, path))
    judged = _judge(jobs, target, file_at, prefetch, package, helper, held or (lambda key: False))
    results.update(zip(job_keys, judged, strict=True))
    ordered = list(flag_results([r for key in groups for r in results[key]], target.evidence, pathmap.binary_for))
    of_pr: defaultdict[int, list[HunkResult]] = defaultdict(list)
    for r in ordered:
        of_pr[r.hunk.pr].append(r)
    reports = [PRReport(pr, pr_status(of_pr[pr.number]), status_counts(of_pr[pr.number])) for pr in prs]
    return AuditReport(target.info, tuple(reports), tuple(ordered))


def _judge(
    jobs: Sequence[FileJob],
    target: Target,
    file_at: FileAt,
    prefetch: Callable[[Sequence[FileKey]], None] | None,
    package: PackageIndex | None,
    helper: MatchHelper | None,
    held: Callable[[FileKey], bool],
) -> list[list[HunkResult]]:
    """Every job's verdicts, in order: all here, or shared with the helper. Shared, this
    process matches its files in place and then asks the helper, done with its own share,
    about moved blocks. A helper that fails leaves its work to be done here."""

    def read_ahead(picked: Iterable[int]) -> None:
        if prefetch is not None:
            prefetch([key for i in picked for key in (jobs[i].base, jobs[i].head) if key is not None])

    if helper is None:
        read_ahead(range(len(jobs)))
        return list(run_jobs(jobs, target, file_at, package or package_index(target)))
    here, away = split_share(jobs, held)
    if away:
        helper.match([jobs[i] for i in away])
    read_ahead(here)
    mine = list(run_jobs([jobs[i] for i in here], target, file_at, None))
    flat = [r for rs in mine for r in rs]
    try:
        theirs = helper.matched() if away else []
        flat = relocate(flat, helper.find_moved)
    except HelperGone:
        index = package or package_index(target)
        read_ahead(away)
        theirs = list(run_jobs([jobs[i] for i in away], target, file_at, index))
        flat = relocate(flat, lambda asks: [find_moved(index, blocks, skip) for blocks, skip in asks])
    out: list[list[HunkResult]] = [[] for _ in jobs]
    at = 0
    for i, rs in zip(here, mine, strict=True):
        out[i] = flat[at : at + len(rs)]
        at += len(rs)
    for i, rs in zip(away, theirs, strict=True):
        out[i] = rs
    return out


def _sides(pr: PullRequest, path: str, old_path: str | None) -> tuple[tuple[str, str] | None, tuple[str, str]]:
    """The (commit, path) files a hunk group is judged with: the base's (if any), the head's."""
    return ((pr.base_sha, old_path) if old_path else None), (pr.head_sha, path)



def audit_stack(
    source: GitSource,
    numbers: Sequence[int],
    spec: TargetSpec,
    base: str | None = None,
    metadata: Mapping[int, PRMetadata] | None = None,
    helper: bool | None = None,
) -> AuditReport:
    """Load the stack under `numbers` from `source` (with GitHub's PR metadata where known), open
    the target, and audit every hunk.

    A target that is what it is whatever the PRs touch (a source tree, a wheel) is opened first
    and its package index built while git works for the stack: in a helper process, which then
    matches a share of the files too (`helper`: None decides by the target's size), else on a
    thread.

    Python's cycle collector is paused meanwhile: an audit makes hundreds of thousands of small
    objects that all live to its end, and the collector would walk them again and again."""
    with _collector_paused():
        return _audit_stack(source, numbers, spec, base, metadata, helper)


def _audit_stack(source: GitSource, numbers: Sequence[int], spec: TargetSpec, base: str | None,
                 metadata: Mapping[int, PRMetadata] | None, helper: bool | None) -> AuditReport:
    early = open_target(spec, (), ()) if not needs_pr_paths(spec) else None
    package = None
    aide = None
    if early is not None:
        if helper or (helper is None and _worth_a_helper(early)):
            aide = MatchHelper.start(early, source.path, source.env)
        if aide is None:
            package = package_index(early)
            threading.Thread(target=package.warm, name="prstack-package-index", daemon=True).start()
    try:
        changes = load_stack(source, numbers, base, metadata)
        repo_files = source.tree_paths(changes.top_sha)
        target = early if early is not None else open_target(spec, sorted({h.path for h in changes.hunks}), repo_files)
        report = audit(changes.prs, changes.hunks, target, repo_files, source.file_at,
                       source.prefetch_files, package, aide, source.holds)
    finally:
        if aide is not None:
            aide.close()
    build = join_build(target.evidence, report.target.distribution or report.target.kind, report.prs,
                       report.results, source.contains, source.patch_contains)
    return replace(report, build=build)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _worth_a_helper(target: Target) -> bool:
    return sum(1 for path in target.files() if path.endswith(TEXT_SUFFIXES)) >= HELPER_MIN_FILES
