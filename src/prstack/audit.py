"""The audit: every hunk of a stack judged against a target. Connects the parts; no I/O of its own."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from prstack.matcher import PackageIndex, match_file
from prstack.matching.package import INDEX_MAX_BYTES
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

FileAt = Callable[[str, str], bytes | None]
"""(commit, repo path) -> the file's bytes at that commit, or None."""

TEXT_SUFFIXES = (".py", ".pyi", ".txt", ".json", ".toml", ".cfg", ".yaml", ".yml", ".ini", ".md")
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
    prefetch: Callable[[Sequence[tuple[str, str]]], None] | None = None,
    package: PackageIndex | None = None,
) -> AuditReport:
    """Judge every hunk of `prs` (bottom-first) against `target`. `prefetch`, when given, is told
    up front every (commit, path) `file_at` will be asked for, in order, to read them ahead.
    `package` is the target's package index, when one is already made (see `package_index`)."""
    pathmap = PathMap(target.files(), repo_files)
    if package is None:
        package = package_index(target)
    by_pr = {pr.number: pr for pr in prs}
    groups: defaultdict[tuple[int, str], list[Hunk]] = defaultdict(list)
    for hunk in hunks:
        groups[(hunk.pr, hunk.path)].append(hunk)
    locations = {key: pathmap.locate(key[1]) for key in groups}
    if prefetch is not None:
        prefetch([
            key
            for (number, path), file_hunks in groups.items()
            if locations[(number, path)].placement not in _LOCATION_STATUS
            for key in _sides(by_pr[number], path, file_hunks[0].old_path)
            if key is not None
        ])
    results: dict[tuple[int, str], list[HunkResult]] = {}
    for (number, path), file_hunks in groups.items():
        pr = by_pr[number]
        location = locations[(number, path)]
        if location.placement in _LOCATION_STATUS:
            status = _LOCATION_STATUS[location.placement]
            results[(number, path)] = [HunkResult(h, status) for h in file_hunks]
            continue
        installed = location.installed_path
        assert installed is not None
        base_key, head_key = _sides(pr, path, file_hunks[0].old_path)
        results[(number, path)] = match_file(
            file_hunks,
            target.read(installed) if location.placement is Placement.SHIPPED else None,
            installed_path=installed,
            base=file_at(*base_key) if base_key else None,
            head=file_at(*head_key),
            package=package,
        )
    ordered = list(flag_results([r for key in groups for r in results[key]], target.evidence, pathmap.binary_for))
    of_pr: defaultdict[int, list[HunkResult]] = defaultdict(list)
    for r in ordered:
        of_pr[r.hunk.pr].append(r)
    reports = [PRReport(pr, pr_status(of_pr[pr.number]), status_counts(of_pr[pr.number])) for pr in prs]
    return AuditReport(target.info, tuple(reports), tuple(ordered))


def package_index(target: Target) -> PackageIndex:
    """The index of every text file of the target, read and built on first use (or `warm`);
    files too large to index (generated tables, vendored data) are not even read."""
    return PackageIndex(
        lambda: {
            path: data
            for path in sorted(target.files())
            if path.endswith(TEXT_SUFFIXES)
            and (target.size(path) or 0) <= INDEX_MAX_BYTES
            and (data := target.read(path)) is not None
        }
    )


def _sides(pr: PullRequest, path: str, old_path: str | None) -> tuple[tuple[str, str] | None, tuple[str, str]]:
    """The (commit, path) files a hunk group is judged with: the base's (if any), the head's."""
    return ((pr.base_sha, old_path) if old_path else None), (pr.head_sha, path)


def audit_stack(
    source: GitSource,
    numbers: Sequence[int],
    spec: TargetSpec,
    base: str | None = None,
    metadata: Mapping[int, PRMetadata] | None = None,
) -> AuditReport:
    """Load the stack under `numbers` from `source` (with GitHub's PR metadata where known), open
    the target, and audit every hunk.

    A target that is what it is whatever the PRs touch (a source tree, a wheel) is opened first
    and its package index built on another thread while git works for the stack."""
    early = open_target(spec, (), ()) if not needs_pr_paths(spec) else None
    package = None
    if early is not None:
        package = package_index(early)
        threading.Thread(target=package.warm, name="prstack-package-index", daemon=True).start()
    changes = load_stack(source, numbers, base, metadata)
    repo_files = source.tree_paths(changes.top_sha)
    target = early if early is not None else open_target(spec, sorted({h.path for h in changes.hunks}), repo_files)
    report = audit(changes.prs, changes.hunks, target, repo_files, source.file_at,
                   source.prefetch_files, package)
    build = join_build(target.evidence, report.target.distribution or report.target.kind, report.prs,
                       report.results, source.contains, source.patch_contains)
    return replace(report, build=build)
