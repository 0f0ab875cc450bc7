"""Composing successive diffs of one file: the net hunks turn the first file into the last."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from prstack.diff.hunks import parse_diff
from prstack.models import FileChange, Hunk
from prstack.sources.patch.compose import compose_steps


def diff(a: list[str], b: list[str], sha: str) -> list[Hunk]:
    text = "".join(difflib.unified_diff([t + "\n" for t in a], [t + "\n" for t in b], "a/f.py", "b/f.py"))
    return [Hunk(h.pr, h.path, h.old_path, h.change, h.old_start, h.old_lines, h.new_start, h.new_lines, h.lines,
                 (sha,)) for h in parse_diff(text, 1)]


def apply(lines: list[str], hunks: Sequence[Hunk]) -> list[str]:
    """`lines` with `hunks` applied at their exact places (each hunk's old image must be there)."""
    out, at = [], 0
    for h in hunks:
        start = h.old_start - 1 if h.old_lines else h.old_start
        out += lines[at:start]
        assert lines[start : start + h.old_lines] == list(h.old_image), h
        out += list(h.new_image)
        at = start + h.old_lines
    return out + lines[at:]


def test_a_later_commit_rewrites_the_lines_of_an_earlier_one() -> None:
    a = [f"line {i}" for i in range(20)]
    b = [*a[:8], "added 1", "added 2", *a[8:]]
    c = [*b[:9], "added 2, rewritten", *b[10:]]
    net = compose_steps([diff(a, b, "one"), diff(b, c, "two")])
    assert net is not None and len(net) == 1
    assert net[0].added == ("added 1", "added 2, rewritten")
    assert net[0].commits == ("one", "two")
    assert apply(a, net) == c
    assert (net[0].old_start, net[0].new_start) == (6, 6)  # as git diff -U3 numbers it


def test_steps_that_disagree_about_the_file_between_them_are_left_alone() -> None:
    a = [f"line {i}" for i in range(10)]
    b = [*a[:4], "new", *a[4:]]
    other = [*a[:4], "not new", *a[4:]]
    c = [*other[:5], "more", *other[5:]]
    assert compose_steps([diff(a, b, "one"), diff(other, c, "two")]) is None


edits = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3), st.lists(st.sampled_from("abcxyz"), max_size=3)),
                 max_size=4)


def edited(lines: list[str], changes: list[tuple[int, int, list[str]]], tag: str) -> list[str]:
    out = list(lines)
    for at, cut, new in changes:
        at = min(at, len(out))
        out[at : at + cut] = [f"{tag} {t}" for t in new]
    return out


@settings(max_examples=300, deadline=None)
@given(edits, edits, edits, st.integers(0, 25))
@example([], [(0, 0, ["a"])], [(0, 1, [])], 0)  # (a file filled, then emptied: not composed)
@pytest.mark.slow
def test_net_hunks_take_the_first_file_to_the_last(e1: list[tuple[int, int, list[str]]],
                                                    e2: list[tuple[int, int, list[str]]],
                                                    e3: list[tuple[int, int, list[str]]], size: int) -> None:
    a = [f"line {i}" for i in range(size)]
    b = edited(a, e1, "one")
    c = edited(b, e2, "two")
    d = edited(c, e3, "three")
    steps = [s for s in (diff(a, b, "1"), diff(b, c, "2"), diff(c, d, "3")) if s]
    if len(steps) < 2:
        return
    versions = [v for v, s in zip((b, c, d), (diff(a, b, "1"), diff(b, c, "2"), diff(c, d, "3")), strict=True) if s]
    net = compose_steps(steps)
    if net is None:  # only a file emptied (read as deleted) or filled from empty (added) in a later step
        assert any(h.change is FileChange.DELETED for s in steps for h in s) or any(
            h.change is FileChange.ADDED for s in steps[1:] for h in s)
        return
    assert apply(a, net) == versions[-1]
    for h in net:
        assert h.added or h.removed
