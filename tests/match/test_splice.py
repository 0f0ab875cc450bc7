"""A later hunk spliced into a hunk's lines: composed over the lines among its positions, the hunk's
lines before and after them kept as they are, exactly as composing every line one by one."""

from __future__ import annotations

import random

from prstack.match.splice import _compose, _composed_lines
from prstack.models import FileChange, Hunk, HunkLine, LineKind


def _later(first: int, body: list[tuple[LineKind, str]]) -> tuple[Hunk, int]:
    old = sum(kind != "+" for kind, _ in body)
    new = sum(kind != "-" for kind, _ in body)
    lines = tuple(HunkLine(kind, text) for kind, text in body)
    return Hunk(2, "m.py", "m.py", FileChange.MODIFIED, first, old, first, new, lines), first


def test_a_rewrite_in_the_middle_of_a_long_added_file_keeps_the_lines_around_it() -> None:
    """A file of 200 added lines, its line 100 rewritten by a later hunk (context around it):
    the composed hunk adds every line, the rewritten one as the later hunk leaves it."""
    own = [("+", f"line {i}") for i in range(1, 201)]
    later = _later(98, [(" ", "line 98"), (" ", "line 99"), ("-", "line 100"), ("+", "LINE 100"),
                        (" ", "line 101")])
    composed, lo = _compose(own, 1, [later])
    assert lo == 1
    assert composed == [("+", f"line {i}") if i != 100 else ("+", "LINE 100") for i in range(1, 201)]


def test_a_later_hunk_reaching_past_either_end_of_the_hunk_composes_those_lines_too() -> None:
    """A later hunk starting above the hunk's first line and one ending below its last: the base
    lines they hold beyond the hunk come in as context, their changes as changes."""
    own = [(" ", "a"), ("-", "b"), ("+", "B"), (" ", "c")]  # new side: a B c, from line 10
    above = _later(8, [(" ", "x"), ("-", "y"), ("+", "Y"), (" ", "a")])
    below = _later(12, [(" ", "c"), ("+", "d")])
    composed, lo = _compose(own, 10, [above, below])
    assert lo == 8
    assert composed == [(" ", "x"), ("-", "y"), ("+", "Y"), (" ", "a"), ("-", "b"), ("+", "B"), (" ", "c"),
                        ("+", "d")]


def test_composing_part_of_a_hunk_gives_what_composing_every_line_gives() -> None:
    """Random hunks and later hunks (seeded): the lines and first line `_compose` gives are those of
    composing the whole hunk line by line."""
    rng = random.Random(7)
    for case in range(400):
        n = rng.randrange(0, 60)
        own = [(rng.choice(" +-"), f"o{case}.{i}") for i in range(n)]
        start = rng.randrange(1, 30)
        new_side = [text for kind, text in own if kind != "-"]
        placed = []
        at = start - rng.randrange(0, 6)
        for _ in range(rng.randrange(1, 4)):
            at += rng.randrange(0, 12)
            body: list[tuple[LineKind, str]] = []
            p = at
            for _ in range(rng.randrange(1, 8)):
                kind = rng.choice(" -+")
                if kind == "+":
                    body.append(("+", f"n{case}.{p}.{len(body)}"))
                else:
                    text = new_side[p - start] if 0 <= p - start < len(new_side) else f"b{p}"
                    body.append((kind, text))
                    p += 1
            placed.append(_later(at, body))
            at = p + 1
        assert _compose(own, start, placed) == _composed_lines(own, start, placed), case
