"""The line pairs difflib aligns two texts by (a longest common subsequence as difflib builds it),
found the same way in a fraction of the time where the texts are long and much alike. Pure."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from itertools import islice

SAMPLED_PARTS = (2, 8)
"""The longest run is looked for through every k-th line, with k a half, then an eighth, of the
box's shorter side, before line by line: a look that finds no run that long is time lost, so they
are few (on lines repeated in short runs, none long, the whole costs about what difflib's walk does)."""
SAMPLED_MIN = 8
"""The least k looked through (a narrower box is walked line by line)."""

Box = tuple[int, int, int, int]
"""[alo, ahi) of `a` and [blo, bhi) of `b`."""


def matching_pairs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """(index in `a`, index in `b`) of every line of the blocks that
    `difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()` gives, in order.

    As difflib does: the longest run of equal lines in the two ranges (of the longest, the one that
    starts first in `a`, then in `b`), then the same left and right of it. The longest run is first
    looked for through every k-th line of `a` only (see SAMPLED_PARTS): a run at least k long holds
    one of those lines, and is followed both ways from there. Where none is, line by line as difflib
    does, walking every line of `a` against every equal line of `b` (the cost where lines repeat)."""
    where: dict[str, list[int]] = {}
    for j, line in enumerate(b):
        where.setdefault(line, []).append(j)
    blocks = []
    todo = [(0, len(a), 0, len(b))]
    while todo:
        box = todo.pop()
        alo, ahi, blo, bhi = box
        found = None
        for part in SAMPLED_PARTS:
            step = min(ahi - alo, bhi - blo) // part
            if step < SAMPLED_MIN or (found := _longest_sampled(a, b, where, box, step)) is not None:
                break
        i, j, size = found if found is not None else _longest(a, where, box)
        if size:
            blocks.append((i, j, size))
            if alo < i and blo < j:
                todo.append((alo, i, blo, j))
            if i + size < ahi and j + size < bhi:
                todo.append((i + size, ahi, j + size, bhi))
    blocks.sort()
    return [(i + k, j + k) for i, j, size in blocks for k in range(size)]


def _at(lines: list[int], lo: int) -> Iterable[int]:
    """`lines` (sorted) from the first that is at least `lo`."""
    return islice(lines, bisect_left(lines, lo), None) if lines[0] < lo else lines


def _longest(a: Sequence[str], where: dict[str, list[int]], box: Box) -> tuple[int, int, int]:
    """difflib's longest match in `box`, line by line: the length of the run ending at each pair of
    equal lines, from the one ending at the pair before it (size 0 when no line is in both)."""
    alo, ahi, blo, bhi = box
    best_i, best_j, best = alo, blo, 0
    ending: dict[int, int] = {}
    for i in range(alo, ahi):
        lines = where.get(a[i])
        now: dict[int, int] = {}
        if lines is not None:
            before = ending.get
            for j in _at(lines, blo):
                if j >= bhi:
                    break
                k = now[j] = before(j - 1, 0) + 1
                if k > best:
                    best_i, best_j, best = i - k + 1, j - k + 1, k
        ending = now
    return best_i, best_j, best


def _longest_sampled(a: Sequence[str], b: Sequence[str], where: dict[str, list[int]], box: Box,
                     step: int) -> tuple[int, int, int] | None:
    """The longest match in `box` as `_longest` finds it, where it is at least `step` long (None:
    no run is). Through each `step`-th line of `a` and each equal line of `b`, the run is followed
    both ways to its ends (within the box); of the longest, the first in `a`, then in `b`."""
    alo, ahi, blo, bhi = box
    best: tuple[int, int, int] | None = None
    """(minus the size, i, j): the least is the one wanted."""
    for i in range(alo + step - 1, ahi, step):
        lines = where.get(a[i])
        if lines is None:
            continue
        for j in _at(lines, blo):
            if j >= bhi:
                break
            s, t = i, j
            while s > alo and t > blo and a[s - 1] == b[t - 1]:
                s, t = s - 1, t - 1
            e, f = i + 1, j + 1
            while e < ahi and f < bhi and a[e] == b[f]:
                e, f = e + 1, f + 1
            if e - s >= step and (best is None or (s - e, s, t) < best):
                best = (s - e, s, t)
    return None if best is None else (best[1], best[2], -best[0])
