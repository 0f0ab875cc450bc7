"""Line alignment: the pairs difflib's longest-match alignment gives, on any two texts."""

from __future__ import annotations

from difflib import SequenceMatcher

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prstack.match.alignment import matching_pairs

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))


def difflib_pairs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    return [(block.a + k, block.b + k) for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
            for k in range(block.size)]


LINES = st.lists(st.sampled_from(["", "x = 1", "y = 2", ")", "return x", "pass"]), max_size=40)


@SETTINGS
@given(LINES, LINES)
def test_any_two_texts_align_as_difflib_aligns_them(a: list[str], b: list[str]) -> None:
    """Short texts of repeated lines, alike or not: the same pairs as difflib, in order."""
    assert matching_pairs(a, b) == difflib_pairs(a, b)


@SETTINGS
@given(st.lists(st.sampled_from(["", "a", "b", "c", "d"]), min_size=40, max_size=400),
       st.lists(st.tuples(st.integers(0, 399), st.sampled_from(["", "a", "b", "e", None])), max_size=12),
       st.integers(0, 3))
def test_long_texts_much_alike_align_as_difflib_aligns_them(a: list[str], edits: list[tuple[int, str | None]],
                                                             shift: int) -> None:
    """A long text against itself with a few lines changed, dropped or added (and its start cut):
    the runs looked for through every k-th line are those difflib finds, ties won alike (the
    run first in the one text, then in the other)."""
    b = list(a)
    for at, line in edits:
        at %= len(b) + 1
        if line is None:
            del b[at : at + 1]
        elif at % 2:
            b.insert(at, line)
        else:
            b[at : at + 1] = [line]
    b = b[shift:]
    assert matching_pairs(a, b) == difflib_pairs(a, b)
    assert matching_pairs(b, a + a) == difflib_pairs(b, a + a)


@SETTINGS
@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=32, max_size=120),
       st.lists(st.sampled_from(["d", "e", "f"]), min_size=32, max_size=120))
def test_of_two_runs_in_crossed_order_the_one_difflib_takes_wins(p: list[str], q: list[str]) -> None:
    """Two runs in one order in one text and the other order in the other: only one of them can
    be aligned, and it is difflib's (the longer; of two as long, the one first in the first text)."""
    assert matching_pairs(p + q, q + p) == difflib_pairs(p + q, q + p)
    apart = [*q, "x", *p]
    assert matching_pairs(p + q, apart) == difflib_pairs(p + q, apart)
