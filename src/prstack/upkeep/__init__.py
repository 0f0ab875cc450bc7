"""Carried PRs and patches across upstream releases: retire, keep or rebase, and the first release holding each.

`prstack.upkeep.carrying.upkeep` runs it; the values are in `prstack.upkeep.values`."""

from prstack.upkeep.values import (
    Candidate,
    HunkUpkeep,
    Item,
    ItemState,
    Landing,
    MergedBy,
    Release,
    UpkeepReport,
    Verdict,
)

__all__ = ["Candidate", "HunkUpkeep", "Item", "ItemState", "Landing", "MergedBy", "Release", "UpkeepReport", "Verdict"]
