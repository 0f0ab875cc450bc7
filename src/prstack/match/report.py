"""The whole audit as one value: the target, each PR's roll-up, every hunk's verdict, the build's word."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from prstack.models import HunkResult, HunkStatus, Lineage, PRReport, PRStatus, PullRequest, TargetInfo
from prstack.targets.built_from import BuildReport


@dataclass(frozen=True)
class AuditReport:
    """The whole audit: target, PRs in stack order (bottom first), and every hunk's verdict."""

    target: TargetInfo
    prs: tuple[PRReport, ...]
    results: tuple[HunkResult, ...]
    build: BuildReport | None = None
    """Build metadata beside the hunk evidence: header sentence, containment, disagreements
    (docs/build-metadata.md); None when it was not read."""
    lineage: Lineage | None = None
    """Where the target sits in upstream's history and where the merged PRs landed (None: no PR
    of the stack is merged, or the source has no history)."""

    @property
    def all_present(self) -> bool:
        """True when every shipped hunk is applied or relocated (exit 0); a hunk whose file could
        not be read is not present."""
        return all(r.status.present for r in self.results if r.status.shipped or r.unread)


def report(target: TargetInfo, prs: Sequence[PullRequest], results: Sequence[HunkResult],
           build: BuildReport | None = None) -> AuditReport:
    """The audit of `results` (in stack order), each PR's verdicts rolled up."""
    of_pr: defaultdict[int, list[HunkResult]] = defaultdict(list)
    for r in results:
        of_pr[r.hunk.pr].append(r)
    reports = [PRReport(pr, pr_status(of_pr[pr.number]), status_counts(of_pr[pr.number])) for pr in prs]
    return AuditReport(target, tuple(reports), tuple(results), build)


def pr_status(results: Iterable[HunkResult]) -> PRStatus:
    """Roll a PR's hunk verdicts up as prstack.audit/2 says: `applied` when every shipped hunk is
    present, `partial` when some of its shipped change is present (a hunk applied or relocated, or
    a hunk with some of its lines applied) and some is not, `missing` when none of it is,
    `not-shipped` when it ships nothing. A hunk whose file was not read is shipped and not present."""
    shipped = [r.status for r in results if r.status.shipped or r.unread]
    if not shipped:
        return PRStatus.NOT_SHIPPED
    if all(s.present for s in shipped):
        return PRStatus.APPLIED
    if any(s.present or s is HunkStatus.PARTIAL for s in shipped):
        return PRStatus.PARTIAL
    return PRStatus.MISSING


def pr_status_v1(results: Iterable[HunkResult]) -> PRStatus:
    """Roll a PR's hunk verdicts up as prstack.audit/1 said: `missing` only when every shipped hunk
    is missing (file-missing counts as missing), `partial` for anything else not applied."""
    shipped = [r.status for r in results if r.status.shipped or r.unread]
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
