"""The closing sentence says what the audit found: a PR all of whose shipped hunks are only
partly there says so, hunks that could not be read are said to be unread, not missing, and PRs
that ship nothing are not told 'every shipped hunk is in'."""

from __future__ import annotations

from prstack.models import PRStatus
from prstack.render.summary import Lacking, Summary


def test_a_partial_pr_with_no_hunk_fully_present_says_some_lines_are_there() -> None:
    """'partial: 101 of 101 not present' says that some of their lines are there; other entries unchanged."""
    summary = Summary((Lacking(7, PRStatus.PARTIAL, 101, 101), Lacking(8, PRStatus.PARTIAL, 1, 2),
                       Lacking(9, PRStatus.MISSING, 3, 3)), 3, ())
    assert summary.sentence() == (
        "Not fully in the target: #7 (partial: 101 of 101 shipped hunks not present, some of their lines are "
        "there), #8 (partial: 1 of 2 shipped hunks not present), #9 (missing: 3 of 3 shipped hunks not present).")


def test_prs_that_ship_nothing_are_said_to() -> None:
    """No shipped hunk at all: 'ship nothing', not 'every shipped hunk is in the target'."""
    assert Summary((), 1, (), ships=False).sentence() == (
        "The 1 PR(s) audited ship nothing: no hunk of theirs is in a file the target ships.")
    assert Summary((), 2, ()).sentence() == "Every shipped hunk of the 2 PR(s) audited is in the target."


def test_hunks_not_read_are_named_so_not_missing() -> None:
    """A PR whose only absent hunks were not read is 'not read', never 'missing'; a PR with both
    says how many of its absent hunks were not read."""
    summary = Summary((Lacking(4, PRStatus.MISSING, 1, 1, unread=1), Lacking(5, PRStatus.PARTIAL, 3, 4, unread=2)),
                      2, ())
    assert summary.sentence() == (
        "Not fully in the target: #4 (not read: 1 of 1 shipped hunks), "
        "#5 (partial: 3 of 4 shipped hunks not present, 2 of them not read).")
