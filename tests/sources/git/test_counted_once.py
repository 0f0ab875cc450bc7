"""Each change of a stack counted once: hunks several PRs hold at one place with the same change."""

from __future__ import annotations

from prstack.models import FileChange, Hunk, HunkLine
from prstack.sources.git.top_pieces import counted_once
from prstack.stack.graph import build_stack


def hunk(pr: int, start: int, text: str) -> Hunk:
    return Hunk(pr, "m.py", "m.py", FileChange.MODIFIED, start, 1, start, 1,
                (HunkLine("-", "old"), HunkLine("+", text)), ("c" * 40,))


def test_a_change_several_prs_hold_is_counted_once_and_every_other_hunk_kept() -> None:
    """The same change at one place in two PRs: counted under the lowest (no PR's own commits hold
    it); two changes at one place that differ, and a hunk alone at its place, are all kept, in order."""
    same1, same2 = hunk(1, 3, "new"), hunk(2, 3, "new")
    differ1, differ2 = hunk(1, 9, "one"), hunk(2, 9, "two")
    alone = hunk(2, 20, "alone")
    got = counted_once([[same1, differ1], [same2, differ2, alone]], build_stack([1, 2], {}, []))
    assert [id(h) for h in got] == [id(same1), id(differ1), id(differ2), id(alone)]
