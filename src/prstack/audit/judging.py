"""The audit: a PR source's stack judged against a target. Orchestration only: the source reads the
PRs, the target its files, `prstack.match.changes` judges, `prstack.targets.built_from` adds what the build says."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from prstack.audit.same_content import Judged, RecordingTarget, RememberingSource, judged, same_content
from prstack.errors import InputError
from prstack.match.changes import TargetIndex, judge_changes
from prstack.match.jobs import KeptVerdicts
from prstack.match.passes import noted_by_build
from prstack.match.report import AuditReport, report
from prstack.match.without_base import noted_without_base
from prstack.models import Changes, FileChange, Hunk, HunkResult, Lineage
from prstack.placement.project import absent_project
from prstack.sources.base import Loading, PRMetadata, PRSource
from prstack.targets.base import Target, TargetSpec, needs_pr_paths, open_target, start_target
from prstack.targets.built_from import join_build

if TYPE_CHECKING:
    from prstack.sources.git.repo import GitClone

__all__ = ["AuditRequest", "audit", "audit_opened", "audit_stack", "audit_targets", "run_audit"]


@dataclass(frozen=True)
class AuditRequest:
    """What an audit is asked: a PR source's stack, against one target or several (a matrix)."""

    source: PRSource
    targets: tuple[TargetSpec, ...]


def run_audit(request: AuditRequest) -> tuple[AuditReport, ...]:
    """A report per target of `request`, in its order (several targets: see `audit_targets`)."""
    if len(request.targets) == 1:
        return (audit(request.source, request.targets[0]),)
    return tuple(audit_targets(request.source, request.targets))


def audit(source: PRSource, spec: TargetSpec) -> AuditReport:
    """Every hunk of `source`'s stack judged against the target `spec` names (see `audit_opened`)."""
    return audit_opened(source, spec)[0]


def audit_opened(source: PRSource, spec: TargetSpec) -> tuple[AuditReport, Target]:
    """The audit, and the target it opened (for a caller that reads more of it: a plan onto it).

    A target that is what it is whatever the PRs touch (a source tree, a wheel) is opened first;
    the others once the PRs' paths are known (they choose the distribution). Huge files are judged
    after the rest, whose matching starts while they are being diffed.

    Python's cycle collector is paused meanwhile: an audit makes hundreds of thousands of small
    objects that all live to its end, and the collector would walk them again and again."""
    with _collector_paused():
        spec = _hinted(source, spec)
        early = open_target(spec, (), ()) if not needs_pr_paths(spec) else None
        started = start_target(spec) if early is None else None  # (an image's digests checked meanwhile)
        try:
            loading = source.load()
            changes = loading.ready if early is not None else loading.finish()
            if early is not None:
                target = early
            else:
                paths = sorted({h.path for h in changes.hunks})
                target = open_target(spec, paths, source.repo_files(changes, ()), started)
        except BaseException:
            if started is not None:
                started.close()
            raise
        results, lineage = _verdicts(source, changes, target, spec, None if loading.complete else loading)
        return _reported(source, changes, target, results, lineage), target


def audit_targets(source: PRSource, specs: Sequence[TargetSpec]) -> list[AuditReport]:
    """The audit of several targets: the stack, its hunks and the files at base and head read once,
    each target opened and read once (a report each, in the order given). A target whose files hold
    the same bytes as one judged before takes its verdicts (audit.same_content.same_content); one that
    differs takes those of each file that holds the same bytes (match.jobs.KeptVerdicts)."""
    with _collector_paused():
        loading = source.load()
        changes = loading.finish()
        paths = sorted({h.path for h in changes.hunks})
        remembering = RememberingSource(source)
        kept = KeptVerdicts(remembering.prefetch_files)
        done: list[Judged] = []
        reports = []
        for spec in specs:
            spec = _hinted(source, spec)
            target = open_target(spec, paths, source.repo_files(changes, ()))
            before = next((j for j in done if same_content(j, target)), None)
            if before is not None:
                reports.append(_reported(remembering, changes, target, before.results, before.lineage, before.report))
                continue
            recording = RecordingTarget(target)
            results, lineage = _verdicts(remembering, changes, recording, spec, None, kept)
            reports.append(_reported(remembering, changes, target, results, lineage))
            done.append(judged(recording, reports[-1], lineage))
        return reports


def _hinted(source: PRSource, spec: TargetSpec) -> TargetSpec:
    if needs_pr_paths(spec) and spec.repo is None:
        hint = source.hint
        return replace(spec, repo=hint.repo, names=(*spec.names, *hint.names))
    return spec


def _verdicts(source: PRSource, changes: Changes, target: Target, spec: TargetSpec,
              loading: Loading | None, kept: KeptVerdicts | None = None
              ) -> tuple[tuple[HunkResult, ...], Lineage | None]:
    """Every hunk of `changes` judged against the opened `target`; a merged PR's hunks by lineage
    where the target can be placed in the clone's history (`prstack.sources.git.held`). `kept`:
    the verdicts of files judged for the run's earlier targets (a file with the same bytes)."""
    repo_files = source.repo_files(changes, target.files())
    if source.with_files and spec.dist is None:
        _stop_on_another_project(changes.hunks, repo_files, target)
    left = {h.old_path for h in changes.hunks
            if h.old_path and (h.old_path != h.path or h.change is FileChange.DELETED)}  # moved or deleted
    index = TargetIndex.of(target, repo_files, left)
    results = noted_by_build(judge_changes(changes, target, source, index, loading, kept), target.evidence,
                             index.pathmap.binary_for)
    by_history = source.judged_by_history(changes, target, index.pathmap, results)
    if by_history is not None:
        return by_history
    return (results if source.with_files else noted_without_base(results, target)), None


def _reported(source: PRSource, changes: Changes, target: Target, results: Sequence[HunkResult],
              lineage: Lineage | None = None, same: AuditReport | None = None) -> AuditReport:
    """The report of `results` on `target`, with what its build says and where it sits in history
    (a PR found landed upstream is merged, whatever the clone's refs alone showed). `same`: the
    report of a target judged the same, whose PRs' roll-ups these results make again."""
    if same is not None:
        done = AuditReport(target.info, same.prs, same.results)
    else:
        prs = changes.prs if lineage is None else [replace(pr, merged=True) if pr.number in lineage.landed
                                                   else pr for pr in changes.prs]
        done = report(target.info, prs, results)
    build = join_build(target.evidence, done.target.distribution or done.target.kind, done.prs, results,
                       source.contains, source.patch_contains)
    if lineage is not None:  # (a lineage comes from a clone's history: its modules are loaded)
        from prstack.sources.git.held import placed_sentence

        build = replace(build, header=f"{build.header}; {placed_sentence(lineage.placed)}")
    return replace(done, build=build, lineage=lineage)


def audit_stack(git: GitClone, numbers: Sequence[int], spec: TargetSpec, base: str | None = None,
                metadata: Mapping[int, PRMetadata] | None = None) -> AuditReport:
    """The audit of the stack under `numbers` in the clone `git` (see `ClonePRs`)."""
    from prstack.sources.git.prs import ClonePRs  # (only a clone's audit loads the git source)

    return audit(ClonePRs(git, numbers, base, metadata), spec)


def _stop_on_another_project(hunks: Sequence[Hunk], repo_files: Sequence[str], target: Target) -> None:
    """Fail closed: a target holding none of the project's packages is an error, not 'not shipped'."""
    info = target.info
    found = (f"{info.distribution} {info.version or ''}".rstrip() if info.distribution
             else f"a {info.kind} of {len(target.files())} file(s) without the project's packages")
    paths = sorted({p for h in hunks for p in (h.path, h.old_path) if p})
    if (why := absent_project(paths, repo_files, target.files(), found)) is not None:
        raise InputError(*why)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
