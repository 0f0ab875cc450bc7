"""Judging one text hunk at its place in one target file: image search, re-wrap, region analysis."""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from typing import NamedTuple

from prstack.match.index import FileIndex, Matches
from prstack.match.shape import Shape
from prstack.match.text import LEVELS, LOOSEST, REWRAPPED, trivial
from prstack.models import HunkStatus

PATCH_FUZZ = 2
"""Fuzz up to which an image is searched anywhere in the file (as patch does)."""
NEAR = 60
"""Beyond PATCH_FUZZ, and for images made only of trivial lines, matches must be this close."""
WEAK = 3
"""Images of trivial lines only count this close to where the hunk is expected."""
RESEMBLES = 0.8
"""How alike (difflib's ratio) a line must be to a removed line to count as that line rewritten."""
MAX_ALIGN = 4000
"""Regions longer than this are compared as multisets instead of aligned."""


@dataclass(frozen=True)
class Finding:
    """What was found for one hunk; positions are 0-based target lines, [start, end)."""

    status: HunkStatus
    start: int | None = None
    end: int | None = None
    fuzz: int | None = None
    normalisation: str | None = None
    applied_lines: tuple[str, ...] = ()
    missing_lines: tuple[str, ...] = ()
    note: str | None = None
    image_start: int | None = None
    """Where the matched image itself starts (start minus context dropped by fuzz)."""


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
    span = _locate(idx, sh, expected, min_start, whole=True) if sh.lead or sh.trail else None
    at_place = span is not None and (window is None or off(span[0]) <= WEAK)
    if span is not None and at_place and (found is None or (
            sh.lead > 0 and off(span[0]) <= WEAK and off(span[0]) < off(found.start)
            and not (sh.pure and found.start is not None and abs(found.start - span[0]) <= WEAK))):
        return _classify(idx, sh, span, known)
    if found is not None:
        return found
    found = _search_images(idx, sh, expected, min_start, 1, max(sh.lead, sh.trail))
    if found is not None and _changed_lines_alone(idx, sh, found):
        found = None
    if found is not None and (window is None or off(found.start) <= WEAK):
        return _removed_lines_beside(idx, sh, found) or found
    verdict = _region(idx, sh, expected, min_start, known)
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


def _region(idx: FileIndex, sh: Shape, expected: int, min_start: int, known: Container[str]) -> Finding:
    """Neither image is there: find the hunk's place by its context, then say line by line which
    changes are in (partial), whether it holds conflict markers, or was rewritten (diverged)."""
    span = _locate(idx, sh, expected, min_start, whole=False)
    if span is None:
        if sh.lead or sh.trail:
            return Finding(HunkStatus.DIVERGED,
                           note="neither the old nor the new lines, nor their context, are there")
        span = (max(0, min(expected, len(idx))), len(idx) if sh.new_file else
                min(len(idx), expected + max(len(sh.old), len(sh.new))))
    verdict = _classify(idx, sh, span, known)
    if verdict.status is HunkStatus.APPLIED and _few_changed_lines(sh) and not _context_holds(idx, sh, span):
        return Finding(HunkStatus.DIVERGED, *span, note="the changed lines are there, but most lines around "
                       "them are other lines: the place of a like change, not this one's")
    return verdict


def _changed_lines_alone(idx: FileIndex, sh: Shape, found: Finding) -> bool:
    """Whether `found` matched the changed lines alone (fuzz dropped every context line), a line or
    two, where most of the lines around them are others: no evidence of the hunk's place."""
    return (found.fuzz is not None and found.fuzz >= max(sh.lead, sh.trail) and found.start is not None
            and found.end is not None and _few_changed_lines(sh)
            and not _context_holds(idx, sh, (found.start, found.end)))


def _few_changed_lines(sh: Shape) -> bool:
    """Whether the hunk adds fewer than three lines that say something: too little to stand for
    its place alone (a block of its own lines is its own evidence, whatever became of the lines
    around it)."""
    return sum(1 for kind, text in sh.lines if kind == "+" and not trivial(text)) < 3


def _context_holds(idx: FileIndex, sh: Shape, span: tuple[int, int]) -> bool:
    """Whether at least half the hunk's context lines that say something (not trivial) are in
    the region found by a piece of its context (a region placed by a lone docstring quote and a line
    like `kwargs:` can be another class's method of the same shape)."""
    context = [t.strip() for k, t in sh.lines if k == " " and not trivial(t)]
    if not context:
        return True
    there = {line.strip() for line in idx.window(*span)}
    return 2 * sum(line in there for line in context) >= len(context)


def _classify(idx: FileIndex, sh: Shape, span: tuple[int, int], known: Container[str]) -> Finding:
    """Line by line at the hunk's region: which changed lines are in, conflict markers, rewrites.
    `known`: lines other audited hunks of the file add (stripped), no foreign lines among changes."""
    rs, re_ = span
    if idx.in_conflict(rs, re_):
        return Finding(HunkStatus.CONFLICT, rs, re_, None, None,
                       note="conflict markers in the hunk's region")
    level = next(lv for lv in range(LOOSEST, -1, -1) if sh.usable(lv))
    hunk_norm = list(sh.norm(level))
    region = idx.norm(level)[rs:re_]
    pairs = _align(hunk_norm, region)
    matched_h = {i for i, _ in pairs}
    matched_t = {j for _, j in pairs}
    changed = [(i, k, t) for i, (k, t) in enumerate(sh.lines) if k != " "]
    if any(not trivial(t) for _, _, t in changed):
        changed = [c for c in changed if not trivial(c[2])]
    a_in = tuple("+" + t for i, k, t in changed if k == "+" and i in matched_h)
    a_out = tuple("+" + t for i, k, t in changed if k == "+" and i not in matched_h)
    r_gone = tuple("-" + t for i, k, t in changed if k == "-" and i not in matched_h)
    r_kept = tuple("-" + t for i, k, t in changed if k == "-" and i in matched_h)
    extra = sum(1 for j, line in enumerate(idx.lines[rs:re_])
                if j not in matched_t and not trivial(line))
    norm_name = _used_level(sh, idx, rs, pairs, level)

    def out(status: HunkStatus, note: str | None = None) -> Finding:
        if note is not None and a_out:
            note += _elsewhere(idx, [t[1:] for t in a_out], rs, re_)
        return Finding(status, rs, re_, None, norm_name, a_in + r_gone, a_out + r_kept, note)

    among = f", {extra} other lines among them" if extra else ""
    if not a_out and not r_kept:
        if not a_in and extra:
            return out(HunkStatus.DIVERGED, f"removed lines gone, {extra} other lines in their place")
        back = _taken_back(sh, idx.lines[rs:re_], matched_t, known)
        if back:
            return out(HunkStatus.PARTIAL, f"the changed lines are in place, but {back} lines that a later "
                       "commit of the PR removed are back among them: that commit's change is not there")
        inside = _among_changes(sh, pairs, {j: line for j, line in enumerate(idx.lines[rs:re_])
                                            if j not in matched_t and not trivial(line)
                                            and line.strip() not in known})
        if inside:
            return out(HunkStatus.DIVERGED, f"the changed lines are in place, with {inside} other lines "
                       "among them, like the removed ones: the old code is back in another form")
        return out(HunkStatus.APPLIED, "changed lines found in place" + among)
    if not a_in and not r_gone:
        if not r_kept and extra:
            return out(HunkStatus.DIVERGED, f"{extra} other lines where the added lines belong")
        if not r_kept:
            return out(HunkStatus.MISSING, "the added lines are not at their place, the lines around it are" + among)
        return out(HunkStatus.MISSING, "the pre-change lines are still there" + among)
    if a_in or not a_out:
        return out(HunkStatus.PARTIAL)
    return out(HunkStatus.DIVERGED, "some removed lines are gone; none of the added lines are at their place")


def _taken_back(sh: Shape, region: Sequence[str], matched: set[int], known: Container[str]) -> int:
    """How many of the region's unmatched lines are lines the PR's own history wrote and took back
    (none that another audited PR adds, and none that says nothing on its own: `pass`, `)`)."""
    if not sh.taken_back:
        return 0
    return sum(1 for j, line in enumerate(region) if j not in matched and not trivial(line)
               and (text := line.strip()) in sh.taken_back and text not in known)


def _among_changes(sh: Shape, pairs: list[tuple[int, int]], unmatched: dict[int, str]) -> int:
    """How many of the region's unmatched lines (position in the region -> text) stand in the place
    of a run of the hunk's removed lines, between the lines found next before and next after the
    run, and read like one of those removed lines: the old code back in another form, so the
    change is not there as made. Other lines there (code added later beside the change, as a
    later release does) and lines in the context (which patch would take as fuzz) do not count."""
    at = dict(pairs)
    inside: set[int] = set()
    kinds = [k for k, _ in sh.lines]
    i = 0
    while i < len(kinds):
        if kinds[i] == " ":
            i += 1
            continue
        first = i
        while i < len(kinds) and kinds[i] != " ":
            i += 1
        removed = [t.strip() for k, t in sh.lines[first:i] if k == "-"]
        if not removed:
            continue
        lo = max((at[h] for h in range(first) if h in at), default=-1)
        hi = min((at[h] for h in range(i, len(kinds)) if h in at), default=1 << 30)
        inside.update(j for j, line in unmatched.items() if lo < j < hi and any(
            SequenceMatcher(None, line.strip(), old).ratio() >= RESEMBLES for old in removed))
    return len(inside)


def _elsewhere(idx: FileIndex, lines: list[str], rs: int, re_: int) -> str:
    """A clause on added lines judged not at their place that the file holds anyway, verbatim
    (out of the hunk's order within its region, or elsewhere): where the first of them is."""
    pos = idx.positions(0)
    found = sorted((at, t) for t in lines if not trivial(t) for at in pos.occ(t)[:1])
    if not found:
        return ""
    at, _ = found[0]
    where = "within the region, out of order" if rs <= at < re_ else "elsewhere in the file"
    count = len({t for _, t in found})
    return (f"; {count} of them {'is' if count == 1 else 'are'} in the file verbatim, {where} "
            f"(first at line {at + 1})")


def _used_level(sh: Shape, idx: FileIndex, rs: int, pairs: list[tuple[int, int]], level: int) -> str | None:
    """The strictest normalisation under which every paired hunk and target line are equal
    (None: verbatim, or nothing paired): what the line-by-line verdict relied on."""
    texts, lines = sh.texts, idx.lines
    for lv in range(level):
        norm = LEVELS[lv][1]
        if all(norm(texts[i]) == norm(lines[rs + j]) for i, j in pairs):
            return LEVELS[lv][0]
    return LEVELS[level][0]


def _locate(
    idx: FileIndex, sh: Shape, expected: int, min_start: int, *, whole: bool
) -> tuple[int, int] | None:
    """[start, end) of the hunk's region: its leading context (or a tail of it) near `expected`,
    its trailing context (or a head of it) after that. `whole`: both contexts complete, or None."""
    loose, flags, n_old = sh.image(0, LOOSEST), sh.trivial[0], len(sh.old)
    reach = 200 + 4 * len(sh.kinds)
    old_mid = len(sh.old) - sh.lead - sh.trail
    new_mid = len(sh.new) - sh.lead - sh.trail
    lead_end: int | None = None
    rs: int | None = None
    lead = sh.old[: sh.lead]
    for k in range(1 if whole else len(lead)):
        sub = loose[k : sh.lead]
        weak = all(flags[k : sh.lead])
        s = idx.find(sub, LOOSEST, expected + k, min_start=min_start + k,
                     radius=WEAK if weak else reach)
        if s is not None:
            rs, lead_end = s - k, s + len(sub)
            break
    if not lead:
        rs = lead_end = max(min_start, min(expected, len(idx)))
    trail = sh.old[len(sh.old) - sh.trail :]
    tail_start: int | None = None
    re_: int | None = None
    after = lead_end if lead_end is not None else max(min_start, expected)
    for k in range(1 if whole else len(trail)):
        sub = loose[n_old - sh.trail : n_old - k]
        weak = all(flags[n_old - sh.trail : n_old - k])
        want = after + min(old_mid, new_mid) if lead_end is not None else expected + sh.lead
        s = idx.find(sub, LOOSEST, want, min_start=after,
                     radius=WEAK if weak else reach)
        if s is not None and s >= after:
            tail_start, re_ = s, s + len(trail)
            break
    if not trail:
        tail_start = re_ = len(idx) if sh.new_file else min(
            len(idx), after + max(old_mid, new_mid))
    if rs is None and tail_start is None:
        return None
    if whole and (rs is None or tail_start is None):
        return None
    if rs is None:
        assert tail_start is not None
        rs = max(min_start, tail_start - max(old_mid, new_mid) - sh.lead)
    if re_ is None:
        assert lead_end is not None
        re_ = min(len(idx), lead_end + max(old_mid, new_mid) + sh.trail)
    return rs, max(rs, re_)


def _align(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """(index in `a`, index in `b`) pairs of a longest common subsequence (multiset match when big).
    A big alignment asked again (the same hunk against the same region: judged for the stack's
    composition too, or in another target) is answered from the last ALIGNS_KEPT big ones."""
    if len(a) * len(b) < BIG_ALIGN:
        return _aligned(a, b)
    key = (tuple(a), tuple(b))
    kept = _big_aligns.kept
    got = kept.pop(key, None)
    if got is None:
        got = _aligned(a, b)
        if len(kept) >= ALIGNS_KEPT:
            del kept[next(iter(kept))]
    kept[key] = got  # (last: the most recently used)
    return list(got)


BIG_ALIGN = 40_000
"""Alignments of at least this many line pairs are kept for reuse (smaller ones cost less than a lookup)."""
ALIGNS_KEPT = 32


class _BigAligns(threading.local):
    """The big alignments made last in this thread, by their lines, the most recently used last."""

    def __init__(self) -> None:
        self.kept: dict[tuple[tuple[str, ...], tuple[str, ...]], list[tuple[int, int]]] = {}


_big_aligns = _BigAligns()


def _aligned(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    if len(a) > MAX_ALIGN or len(b) > MAX_ALIGN:
        pool: dict[str, list[int]] = {}
        for j in range(len(b) - 1, -1, -1):
            pool.setdefault(b[j], []).append(j)
        pairs = []
        for i, line in enumerate(a):
            slot = pool.get(line)
            if slot:
                pairs.append((i, slot.pop()))
        return pairs
    return [(block.a + k, block.b + k)
            for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
            for k in range(block.size)]
