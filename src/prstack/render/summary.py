"""The audit's conclusion as the reports show it: the PRs not fully in the target and what to run next."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from prstack.models import PRStatus

LISTED = 5
"""PRs named in the summary's sentence; past it, "and N more"."""


@dataclass(frozen=True)
class Step:
    """One next step: shell commands run one after the other (`&&`) and what they do."""

    commands: tuple[tuple[str, ...], ...]
    why: str
    shareable: str = ""
    """The command with this machine's paths named by what they are (`--git PATH`), for a PR comment."""

    @property
    def command(self) -> str:
        return " && ".join(shlex.join(args) for args in self.commands)


@dataclass(frozen=True)
class Lacking:
    """A PR with shipped hunks that are not present."""

    number: int
    status: PRStatus
    not_present: int
    shipped: int
    unread: int = 0
    """Of the hunks not present, those whose files could not be read (a blob the clone lacks, a refused file)."""


@dataclass(frozen=True)
class Summary:
    """The audit's conclusion: the PRs not fully in the target and what to run next."""

    lacking: tuple[Lacking, ...]
    """PRs with a shipped hunk that is not present, in stack order."""
    checked: int
    """PRs audited."""
    steps: tuple[Step, ...]
    ships: bool = True
    """Whether any PR audited has a hunk in a file the target ships."""

    def sentence(self) -> str:
        """"Not fully in the target: #40727 (partial: 1 of 2 shipped hunks not present)." or the all-clear."""
        if not self.lacking:
            if not self.ships:
                return (f"The {self.checked} PR(s) audited ship nothing: no hunk of theirs is in a file the "
                        "target ships.")
            return f"Every shipped hunk of the {self.checked} PR(s) audited is in the target."
        named = [_lacking_words(p) for p in self.lacking[:LISTED]]
        more = len(self.lacking) - LISTED
        return "Not fully in the target: " + ", ".join(named) + (f" and {more} more" if more > 0 else "") + "."


def _lacking_words(p: Lacking) -> str:
    """"#7 (partial: 1 of 2 shipped hunks not present)"; where no hunk was seen missing, only unread,
    "#7 (not read: 1 of 1 shipped hunks)"."""
    if p.unread == p.not_present:
        return f"#{p.number} (not read: {p.unread} of {p.shipped} shipped hunks)"
    words = f"#{p.number} ({p.status.value}: {p.not_present} of {p.shipped} shipped hunks not present"
    if p.unread:
        words += f", {p.unread} of them not read"
    elif p.status is PRStatus.PARTIAL and p.not_present == p.shipped:
        words += ", some of their lines are there"
    return words + ")"
