"""The whole audit as one value: the target, each PR's roll-up, every hunk's verdict, the build's word."""

from __future__ import annotations

from dataclasses import dataclass

from prstack.build import BuildReport
from prstack.models import HunkResult, PRReport, TargetInfo


@dataclass(frozen=True)
class AuditReport:
    """The whole audit: target, PRs in stack order (bottom first), and every hunk's verdict."""

    target: TargetInfo
    prs: tuple[PRReport, ...]
    results: tuple[HunkResult, ...]
    build: BuildReport | None = None
    """Build metadata beside the hunk evidence: header sentence, containment, disagreements
    (docs/build-metadata.md); None when it was not read."""

    @property
    def all_present(self) -> bool:
        """True when every shipped hunk is applied or relocated (exit 0)."""
        return all(r.status.present for r in self.results if r.status.shipped)
