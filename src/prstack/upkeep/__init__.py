"""Carried PRs and patches across upstream releases: retire, keep or rebase, and the first release holding each.

`prstack.upkeep.run.upkeep` runs it; the values are in `prstack.upkeep.model`."""

from prstack.upkeep.model import (
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
