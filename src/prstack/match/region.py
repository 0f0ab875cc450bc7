"""A hunk's region in the target judged line by line: the lines between the hunk's anchors aligned
to its old and new images (as difflib aligns them; big alignments kept), the verdict they give
(applied, partial, diverged, conflict) and the normalisation that made the lines equal."""

from __future__ import annotations

import threading
from collections.abc import Container, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from prstack.match.alignment import matching_pairs
from prstack.match.index import FileIndex
from prstack.match.shape import Shape
from prstack.match.text import LEVELS, LOOSEST, trivial
from prstack.models import HunkStatus

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


def region(idx: FileIndex, sh: Shape, expected: int, min_start: int, known: Container[str]) -> Finding:
    """Neither image is there: find the hunk's place by its context, then say line by line which
    changes are in (partial), whether it holds conflict markers, or was rewritten (diverged)."""
    span = locate(idx, sh, expected, min_start, whole=False)
    if span is None:
        if sh.lead or sh.trail:
            return Finding(HunkStatus.DIVERGED,
                           note="neither the old nor the new lines, nor their context, are there")
        span = (max(0, min(expected, len(idx))), len(idx) if sh.new_file else
                min(len(idx), expected + max(len(sh.old), len(sh.new))))
    verdict = classify(idx, sh, span, known)
    if verdict.status is HunkStatus.APPLIED and few_changed_lines(sh) and not context_holds(idx, sh, span):
        return Finding(HunkStatus.DIVERGED, *span, note="the changed lines are there, but most lines around "
                       "them are other lines: the place of a like change, not this one's")
    return verdict


def few_changed_lines(sh: Shape) -> bool:
    """Whether the hunk adds fewer than three lines that say something: too little to stand for
    its place alone (a block of its own lines is its own evidence, whatever became of the lines
    around it)."""
    return sum(1 for kind, text in sh.lines if kind == "+" and not trivial(text)) < 3


def context_holds(idx: FileIndex, sh: Shape, span: tuple[int, int]) -> bool:
    """Whether at least half the hunk's context lines that say something (not trivial) are in
    the region found by a piece of its context (a region placed by a lone docstring quote and a line
    like `kwargs:` can be another class's method of the same shape)."""
    context = [t.strip() for k, t in sh.lines if k == " " and not trivial(t)]
    if not context:
        return True
    there = {line.strip() for line in idx.window(*span)}
    return 2 * sum(line in there for line in context) >= len(context)


def classify(idx: FileIndex, sh: Shape, span: tuple[int, int], known: Container[str]) -> Finding:
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


def locate(
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
    return matching_pairs(a, b)
