"""Judging one text hunk at its place in one target file: image search, re-wrap, region analysis."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Container
from dataclasses import replace
from typing import NamedTuple

from prstack.match.index import FileIndex, Matches
from prstack.match.region import WEAK, Finding, classify, context_holds, few_changed_lines, locate, region
from prstack.match.shape import Shape
from prstack.match.text import LEVELS, LOOSEST, REWRAPPED, trivial
from prstack.models import HunkStatus

PATCH_FUZZ = 2
"""Fuzz up to which an image is searched anywhere in the file (as patch does)."""


NEAR = 60
"""Beyond PATCH_FUZZ, and for images made only of trivial lines, matches must be this close."""


def judge(
    idx: FileIndex, sh: Shape, guess: int, min_start: int,
    refine: Callable[[], tuple[int, int] | None] | None = None, known: Container[str] = frozenset(),
) -> Finding:
    """Decide what `idx` holds for the hunk `sh`, expected to start near line `guess`.

    `refine` gives, from unique lines around the hunk in the PR's head (or base), the window
    where the hunk must start; asked only when the guess is not a direct hit. An image found
    outside that window does not count when the hunk's own context is found inside it: a hunk
    of generic lines can match where another hunk made the same edit, but is judged at its place.
    A hunk whose two images are the same lines (it changes only the newline at the end of the file,
    which lines do not show) is applied where those lines are.
    """
    verdict = _judge(idx, sh, guess, min_start, refine, known)
    if sh.old == sh.new and verdict.status is HunkStatus.MISSING:
        return replace(verdict, status=HunkStatus.APPLIED,
                       note="its lines are there; it changes only the newline at the end of the file")
    return verdict


def _judge(
    idx: FileIndex, sh: Shape, guess: int, min_start: int,
    refine: Callable[[], tuple[int, int] | None] | None, known: Container[str],
) -> Finding:
    direct = _direct(idx, sh, guess, min_start)
    if direct is not None:
        return direct
    window = refine() if refine is not None else None
    expected = guess if window is None else window[0]

    def off(at: int | None) -> int:
        if at is None:
            return 1 << 30
        if window is None:
            return abs(at - expected)
        return max(0, window[0] - at, at - window[1])

    found = _search_images(idx, sh, expected, min_start, 0, 0)
    if found is None and sh.wrap:
        found = _search_wrapped(idx, sh, expected, min_start)
    if found is not None and off(found.start) <= WEAK:
        return found
    # Context intact at the place: what differs is the middle; judge it there, no fuzz needed.
    # An image found farther away loses to the hunk's whole context found where it belongs,
    # except a pure hunk's image a few lines off that context: repeated lines, the same place.
    span = locate(idx, sh, expected, min_start, whole=True) if sh.lead or sh.trail else None
    at_place = span is not None and (window is None or off(span[0]) <= WEAK)
    if span is not None and at_place and (found is None or (
            sh.lead > 0 and off(span[0]) <= WEAK and off(span[0]) < off(found.start)
            and not (sh.pure and found.start is not None and abs(found.start - span[0]) <= WEAK))):
        return classify(idx, sh, span, known)
    if found is not None:
        return found
    found = _search_images(idx, sh, expected, min_start, 1, max(sh.lead, sh.trail))
    if found is not None and _changed_lines_alone(idx, sh, found):
        found = None
    if found is not None and (window is None or off(found.start) <= WEAK):
        return _removed_lines_beside(idx, sh, found) or found
    verdict = region(idx, sh, expected, min_start, known)
    if sh.pure and verdict.status is HunkStatus.APPLIED and verdict.start is not None and off(verdict.start) > WEAK:
        # a pure addition found only by a piece of its context far from its place: a copy of its
        # lines elsewhere in the file is not its own evidence
        return Finding(HunkStatus.DIVERGED, note=f"its lines are in the file at line {verdict.start + 1}, "
                       "away from its place, whose context is not there")
    return verdict


def _removed_lines_beside(idx: FileIndex, sh: Shape, found: Finding) -> Finding | None:
    """A pure deletion whose new image was found only with fuzz (its bare context, less some of
    it) is not done where the lines it removes still stand, in order, beside the place that match
    puts the deletion: other lines came in among them, so the whole old image no longer matches,
    but the lines are there (None: no such lines, the match stands)."""
    if found.status is not HunkStatus.APPLIED or not found.fuzz or found.start is None or "+" in sh.kinds:
        return None
    removed = [text.strip() for kind, text in sh.lines if kind == "-" and not trivial(text)]
    if not removed:
        return None
    point = found.start + sh.lead
    lo = max(0, point - len(removed) - 2 * WEAK)
    near = iter(enumerate((line.strip() for line in idx.window(lo, point + len(removed) + 2 * WEAK)), lo))
    at = [next((i for i, line in near if line == want), None) for want in removed]
    first, last = at[0], at[-1]
    if first is None or last is None:
        return None
    return Finding(HunkStatus.MISSING, first, last + 1, note=f"the {len(removed)} line(s) it removes are still "
                   f"there, beside its place, with {last + 1 - first - len(removed)} other line(s) among them")


def _direct(idx: FileIndex, sh: Shape, at: int, min_start: int) -> Finding | None:
    """Exactly one image, verbatim, exactly where expected: the common case, no index needed."""
    if at < min_start or not sh.old or not sh.new or all(trivial(x) for x in sh.new):
        return None
    # When both hold (one image extends the other, at the end of the file), the longer one says more.
    held = [(len(image), -kind, kind, image) for kind, image in ((0, sh.old), (1, sh.new))
            if idx.holds(image, at) and not idx.in_conflict(at, at + len(image))]
    if not held:
        return None
    _, _, kind, image = max(held)
    if sh.pure and len(image) < max(len(sh.old), len(sh.new)):
        # only the bare context of a pure addition (or deletion) is here: the longer image may sit
        # a line or two away among repeated lines, so let the search weigh both
        return None
    status = HunkStatus.APPLIED if kind else HunkStatus.MISSING
    note = None if kind else "the pre-change lines are still there"
    return Finding(status, at, at + len(image), 0, None, note=note)


def _search_images(
    idx: FileIndex, sh: Shape, expected: int, min_start: int, fuzz_from: int, fuzz_to: int
) -> Finding | None:
    """Whole old or new image (less up to `fuzz` context lines each end), nearest wins. At the same
    place the longer image wins (a pure addition's old image is only its context, which the applied
    new image contains too); a true tie goes to the old image: on ambiguity prefer not-applied.
    For a pure addition or deletion the longer image wins within WEAK lines of the place, or of
    the shorter image's nearest match: it holds the changed lines, while the shorter one is bare
    context, which repeated lines can make appear a line or two off the longer one wherever that
    sits (unrelated lines inserted above move both of them off the place alike)."""
    one_sided = not sh.old or not sh.new
    for f in range(fuzz_from, fuzz_to + 1):
        fl, ft = min(f, sh.lead), min(f, sh.trail)
        best: _ImageMatch | None = None
        nearest: dict[int, _ImageMatch] = {}
        """Per image kind, its best match; `best` is the better of the two."""
        reach: list[int | None] = []
        for kind in (0, 1):
            flags = sh.trivial[kind][fl : len(sh.trivial[kind]) - ft]
            # a pure addition's image short of its whole context is its own evidence only at its
            # place: elsewhere the same line with a line of context is a copy, not its change
            reach.append(WEAK if (flags and all(flags)) or (one_sided and not sh.new_file) or (sh.pure and f > 0)
                         else NEAR if f > PATCH_FUZZ else None)
        # Each line a stricter level equates, the loosest does too (at the trailing-space level
        # only when the trailing space is ASCII): stricter searches check the loosest one's finds.
        loose: list[Matches | None] = []
        for kind in (0, 1):
            image = sh.image(kind, LOOSEST)
            img = image[fl : len(image) - ft]
            loose.append(idx.matches(img, expected + fl, reach[kind]) if img else None)
        nested: bool | None = None
        for level in range(len(LEVELS)):
            if level == 1 and nested is None:
                nested = sh.plain_trailing and idx.plain_trailing()
            alive = [kind for kind in (0, 1) if (found := loose[kind]) is not None
                     and (found or (level == 1 and not nested))]
            if not alive or not sh.usable(level):
                continue
            for kind in alive:
                found = loose[kind]
                assert found is not None
                image = sh.image(kind, level)
                img = image[fl : len(image) - ft]
                radius = reach[kind]
                if best is not None and not best.rank.before_min and not sh.pure:
                    # only a match as near as the best one so far can still win
                    radius = best.rank.off if radius is None else min(radius, best.rank.off)
                if level == 1 and not nested:
                    s = idx.find(img, level, expected + fl, min_start=min_start + fl,
                                 radius=radius)
                else:
                    s = idx.find_among(found, img, level, expected + fl,
                                       min_start=min_start + fl, radius=radius)
                if s is None:
                    continue
                s -= fl
                near = -len(img) if sh.pure and abs(s - expected) <= WEAK else 0
                rank = _Rank(s < min_start, near, abs(s - expected), -len(img), kind, level)
                if kind not in nearest or rank < nearest[kind].rank:
                    nearest[kind] = _ImageMatch(rank, s, kind, level)
                    best = min(nearest.values())
            if level == 0 and best is not None and not best.rank.before_min and best.rank.off == 0:
                break
        if best is not None and sh.pure and len(nearest) == 2:
            longer = nearest[0 if len(sh.old) > len(sh.new) else 1]
            if (longer.kind != best.kind and longer.rank.before_min <= best.rank.before_min
                    and abs(longer.start - best.start) <= WEAK):
                best = longer
        if best is not None:
            _, s, kind, level = best
            image = sh.new if kind else sh.old
            span = (s + fl, s + len(image) - ft)
            if idx.in_conflict(*span):
                return Finding(HunkStatus.CONFLICT, s, s + len(image), f, LEVELS[level][0],
                               note="conflict markers around the matched lines")
            status = HunkStatus.APPLIED if kind else HunkStatus.MISSING
            note = None if kind else "the pre-change lines are still there"
            return Finding(status, s, s + len(image), f, LEVELS[level][0], note=note)
    return None


class _Rank(NamedTuple):
    """How an image's match ranks (the least wins): after `min_start` first, then near the place
    for a pure hunk's image, nearest, longest, old image before new, strictest level."""

    before_min: bool
    near: int
    off: int
    """Lines from where the hunk is expected."""
    shorter: int
    """Minus the image's length."""
    kind: int
    level: int


class _ImageMatch(NamedTuple):
    """An image found: how it ranks, where it starts, which image (0 old, 1 new), at which level."""

    rank: _Rank
    start: int
    kind: int
    level: int


def _search_wrapped(idx: FileIndex, sh: Shape, expected: int, min_start: int) -> Finding | None:
    """Both images compared with lines joined (formatter re-wrapped arguments), near the place."""
    size = max(len(sh.old), len(sh.new))
    lo = max(0, min(expected, len(idx)) - 40 - size)
    hi = min(len(idx), expected + 3 * size + 40)
    text, cum = idx.wrap_window(lo, hi)
    n = len(cum) - 1
    best: tuple[tuple[bool, int, int], int, int] | None = None
    for kind, needle in enumerate(sh.wrapped):
        if not needle:
            continue
        at = text.find(needle)
        while at >= 0:
            # a match counts only from the start of a piece to the end of one
            i = bisect.bisect_left(cum, at)
            j = bisect.bisect_right(cum, at + len(needle)) - 1
            if i < n and cum[i] == at and j >= 1 and cum[j] == at + len(needle):
                s = lo + i
                key = (s < min_start, abs(s - expected), kind)
                if best is None or key < best[0]:
                    best = (key, s, lo + j)
            at = text.find(needle, at + 1)
    if best is None:
        return None
    (_, _, kind), s, e = best
    if idx.in_conflict(s, e):
        return Finding(HunkStatus.CONFLICT, s, e, 0, REWRAPPED)
    status = HunkStatus.APPLIED if kind else HunkStatus.MISSING
    return Finding(status, s, e, 0, REWRAPPED, note="lines re-wrapped in the target")


def _changed_lines_alone(idx: FileIndex, sh: Shape, found: Finding) -> bool:
    """Whether `found` matched the changed lines alone (fuzz dropped every context line), a line or
    two, where most of the lines around them are others: no evidence of the hunk's place."""
    return (found.fuzz is not None and found.fuzz >= max(sh.lead, sh.trail) and found.start is not None
            and found.end is not None and few_changed_lines(sh)
            and not context_holds(idx, sh, (found.start, found.end)))
