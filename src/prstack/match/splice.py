"""Lines of a file spliced: a later hunk's changes placed into the lines a hunk leaves (by position,
or a few lines off where its old lines agree), and the lines composed. Pure."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from prstack.models import Hunk, LineKind

SLIP = 50
"""How far off (in lines) a later PR's hunk may sit from where the positions put it."""


class LaterHunk(NamedTuple):
    """A later hunk as `through` meets it: the hunk, the first line its old side covers, the
    old-side positions of its first and last change (None: it changes nothing), its old lines."""

    hunk: Hunk
    first: int
    first_change: int | None
    last_change: int | None
    old: list[str]


def first_line(start: int, count: int) -> int:
    """The first line a side covers (a side with no lines names the line before it)."""
    return start if count else start + 1


Line = tuple[LineKind, str]


def through(lines: Sequence[Line], start: int, span: int,
            theirs: Sequence[LaterHunk]) -> tuple[Sequence[Line], int, int, Hunk | None] | None:
    """A hunk's lines (new side from line `start`) carried through one later PR's hunks of its file:
    (lines, new start in that PR's head, lines of the base the hunk grew by in front, the last of
    the later hunks composed in). None when a hunk of the later PR changes the span (`span` lines:
    the hunk's new side) but its old lines do not agree with the hunk's new ones."""
    delta, touching = 0, []
    for later in theirs:
        s = later.hunk
        if later.last_change is not None and later.last_change < start:
            delta += s.new_lines - s.old_lines
        elif (later.first_change is not None and later.first_change < start + span
              and inside(s, later.first, start, span)):
            touching.append(later)
    if not touching:
        return lines, start + delta, 0, None
    mine = [t for k, t in lines if k != "-"]
    placed = []
    for later in touching:
        slip = _agreeing_slip(mine, start, later.old, later.first)
        if slip is None:
            return None
        placed.append((later.hunk, later.first + slip))
    composed, lo = _compose(lines, start, placed)
    return composed, lo + delta, max(0, start - lo), placed[-1][0]


def change_spots(s: Hunk, first: int) -> list[int]:
    """Old-side positions of a hunk's changes: each removed line's, and for each run of added
    lines the position of the old line it goes before."""
    spots, pos = [], first
    for kind, _ in s.lines:
        if kind == "+":
            spots.append(pos)
        else:
            if kind == "-":
                spots.append(pos)
            pos += 1
    return spots


def inside(s: Hunk, first: int, start: int, span: int) -> bool:
    """Whether a change of `s` falls inside the span [start, start+span): a removed line in it,
    or added lines between two of its lines (added just before or after the span are beside it)."""
    pos = first
    for kind, _ in s.lines:
        if kind == "+":
            if start < pos < start + span:
                return True
        else:
            if kind == "-" and start <= pos < start + span:
                return True
            pos += 1
    return False


def _agreeing_slip(mine: list[str], start: int, old: list[str], first: int) -> int | None:
    """How far a later hunk (its old lines `old`) sits from `first` so that its old lines agree
    with the hunk's new lines (`mine`, from line `start`) where they meet: 0 when the positions
    hold, else the smallest slip within SLIP at which every old line of it meets one of the hunk's
    and agrees (a slip trusts content alone, so all of it); None if none."""
    for slip in _SLIPS:
        at = first + slip - start
        lo, hi = max(0, -at), min(len(old), len(mine) - at)  # (the old lines that meet one of the hunk's)
        if lo >= hi or mine[at + lo:at + hi] != old[lo:hi]:
            continue
        if slip == 0 or hi - lo == len(old):
            return slip
    return None


_SLIPS = sorted(range(-SLIP, SLIP + 1), key=abs)
"""Every slip within SLIP, the smallest first (of two alike, the one up first)."""


def _compose(lines: Sequence[Line], start: int, placed: Sequence[tuple[Hunk, int]]) -> tuple[list[Line], int]:
    """The hunk's lines composed with the later hunks `placed` (each with the line its old side
    starts at, in the lines the hunk's new side counts): (lines, the first line they cover there).

    Only the hunk's lines among the later hunks' positions are worked out line by line: those
    before and after them come out as they are (a hunk the stack grew long is rewritten in a
    few lines at a time)."""
    low = min(first for _, first in placed)
    high = max(first + sum(kind != "+" for kind, _ in s.lines) for s, first in placed)
    # each line's position: a removed line's is the position of the line it stands before
    pos, head, tail = start, len(lines), len(lines)
    for i, (kind, _) in enumerate(lines):
        if head == len(lines) and pos >= low:
            head = i
        if kind != "-":
            if pos >= high:
                tail = i
                break
            pos += 1
    if head == len(lines):
        head = tail
    if head == 0 and tail == len(lines):
        return _composed_lines(lines, start, placed)
    middle, lo = _composed_lines(lines[head:tail], start + _kept(lines[:head]), placed)
    return [*lines[:head], *middle, *lines[tail:]], start if head else lo


def _kept(lines: Sequence[Line]) -> int:
    """How many of `lines` are not removed ones."""
    return sum(kind != "-" for kind, _ in lines)


def _composed_lines(lines: Sequence[Line], start: int,
                    placed: Sequence[tuple[Hunk, int]]) -> tuple[list[Line], int]:
    text: dict[int, str] = {}
    mine: dict[int, LineKind] = {}  # intermediate position -> ' ' (in the base) or '+' (the hunk's own)
    gone: defaultdict[int, list[str]] = defaultdict(list)  # the hunk's removed lines, before position
    pos = start
    for kind, t in lines:
        if kind == "-":
            gone[pos].append(t)
        else:
            text[pos], mine[pos] = t, kind
            pos += 1
    theirs: dict[int, LineKind] = {}
    put: defaultdict[int, list[str]] = defaultdict(list)  # the later hunks' added lines, before position
    for s, first in placed:
        p = first
        for kind, t in s.lines:
            if kind == "+":
                put[p].append(t)
            else:
                text.setdefault(p, t)
                theirs[p] = kind
                p += 1
    positions = [*text, *gone, *put]
    lo, hi = min(positions), max(positions)
    out: list[Line] = []
    for p in range(lo, hi + 1):
        if p in gone:
            out += [("-", t) for t in gone[p]]
        if p in put:
            out += [("+", t) for t in put[p]]
        line = text.get(p)
        if line is None:
            continue
        own, later = mine.get(p, " "), theirs.get(p, " ")
        if own == " ":
            out.append((" " if later == " " else "-", line))
        elif later == " ":
            out.append(("+", line))
    return out, lo
