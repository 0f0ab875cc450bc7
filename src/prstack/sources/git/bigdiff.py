"""The diff of a huge file whose versions share long identical ends, at the cost of what differs.

git hashes every line of both versions before it trims their common ends, which for a 50 MB
generated table takes about a second however small the change. Here the common ends are found
with whole-bytes comparisons first, and what is left is split where a large block of lines occurs
once in each version; git diffs only the parts that differ (plus a margin of identical lines), and
the hunks' line numbers are shifted back. The result is git's own diff of the whole file but for
the text after '@@ ... @@' (the enclosing function, which git looks up within the part): the margin
holds every line git could slide a change group across (its indent heuristic looks at most 100
lines away), and a change found near a cut means it may have slid further, so the caller falls
back to the whole-file diff.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MARGIN = 300
"""Identical lines kept on each side of the differing part."""
SLIDE_GUARD = 150
"""A change this close to a cut may have slid there: refuse and let git diff the whole file."""

RunDiff = Callable[[bytes, bytes], bytes]
"""(old text, new text) -> git's unified diff of them (any header; hunks from the first '@@')."""

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$", re.DOTALL)


SPLIT_MIN = 256_000
"""A differing part larger than this is split at a block of lines both texts hold once."""


@dataclass(frozen=True)
class Region:
    """A part where two texts differ, with margins of identical lines: [a_start, a_end) of the old
    text against [b_start, b_end) of the new; whether a cut (not the file's edge) bounds it."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int
    cut_front: bool
    cut_back: bool


_CHUNK = 1 << 16
"""Texts are compared this many bytes at a time (small copies; no page faults for whole-text slices)."""


def _agreeing(same: Callable[[int, int], bool], limit: int) -> int:
    """The largest n <= limit with same(0, n), given same(i, j) compares bytes [i, j) counted from
    one end: whole chunks first, then a bisection inside the chunk that differs."""
    done = 0
    while done < limit:
        n = min(_CHUNK, limit - done)
        if not same(done, done + n):
            lo, hi = done, done + n - 1  # the mismatch is in this chunk
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if same(lo, mid):
                    lo = mid
                else:
                    hi = mid - 1
            return lo
        done += n
    return limit


def common_prefix(a: bytes, b: bytes, a_lo: int, b_lo: int, limit: int) -> int:
    """How many bytes a[a_lo:] and b[b_lo:] share at the front (at most `limit`)."""
    return _agreeing(lambda i, j: a[a_lo + i : a_lo + j] == b[b_lo + i : b_lo + j], limit)


def common_suffix(a: bytes, b: bytes, a_hi: int, b_hi: int, limit: int) -> int:
    """How many bytes a[:a_hi] and b[:b_hi] share at the end (at most `limit`)."""
    return _agreeing(lambda i, j: a[a_hi - j : a_hi - i] == b[b_hi - j : b_hi - i], limit)


def _line_back(text: bytes, at: int, lo: int, lines: int) -> int:
    """The start of the line `lines` lines above the one starting at `at` (not before `lo`)."""
    for _ in range(lines):
        if at <= lo:
            return lo
        at = max(lo, text.rfind(b"\n", lo, at - 1) + 1)
    return at


def _line_forward(text: bytes, at: int, hi: int, lines: int) -> int:
    """Just past the `lines`-th newline from `at` (not past `hi`)."""
    for _ in range(lines):
        if at >= hi:
            return hi
        nl = text.find(b"\n", at, hi)
        at = hi if nl < 0 else nl + 1
    return at


def _trim(a: bytes, b: bytes, span: tuple[int, int, int, int], margin: int
          ) -> tuple[int, int, int, int] | None:
    """The span less its identical ends (kept: `margin` lines each side); None when identical.
    Spans start at line starts and end after a newline (or at the end of the text)."""
    a_lo, a_hi, b_lo, b_hi = span
    prefix = common_prefix(a, b, a_lo, b_lo, min(a_hi - a_lo, b_hi - b_lo))
    if prefix == a_hi - a_lo == b_hi - b_lo:
        return None
    start = max(a_lo, a.rfind(b"\n", a_lo, a_lo + prefix) + 1)  # the first differing line
    start = _line_back(a, start, a_lo, margin)
    b_start = b_lo + (start - a_lo)
    suffix = common_suffix(a, b, a_hi, b_hi, min(a_hi - start, b_hi - b_start))
    end = a_hi - suffix
    if end < a_hi:  # the identical tail starts after a newline inside it (one both texts have)
        end = _line_forward(a, end, a_hi, 1)
    end = _line_forward(a, end, a_hi, margin)
    return start, end, b_start, b_hi - (a_hi - end)


def _split(a: bytes, b: bytes, span: tuple[int, int, int, int], margin: int, depth: int = 0
           ) -> list[tuple[int, int, int, int]]:
    """The differing parts of a span: its trimmed middle, split where a block of 2 * margin + 1
    lines from the middle of the old side occurs exactly once on each side (a match every
    minimal diff keeps), each half trimmed and split again."""
    trimmed = _trim(a, b, span, margin)
    if trimmed is None:
        return []
    s, e, bs, be = trimmed
    if e - s < SPLIT_MIN or depth > 40:
        return [trimmed]
    for eighths in (4, 2, 6, 1, 3, 5, 7):  # the middle first; a block holding a change won't do
        center = max(s, a.rfind(b"\n", s, s + (e - s) * eighths // 8) + 1)
        cut_b = _anchor(a, b, center, (s, e, bs, be), margin)
        if cut_b is not None:
            return (_split(a, b, (s, center, bs, cut_b), margin, depth + 1)
                    + _split(a, b, (center, e, cut_b, be), margin, depth + 1))
    return [trimmed]


def _anchor(a: bytes, b: bytes, center: int, span: tuple[int, int, int, int], margin: int) -> int | None:
    """Where the new side's span holds, once, the 2 * margin + 1 lines around `center` that the
    old side's span holds once: the new side's position of `center`; else None."""
    s, e, bs, be = span
    w_start = _line_back(a, center, s, margin)
    w_end = _line_forward(a, center, e, margin + 1)
    if a.count(b"\n", w_start, w_end) < 2 * margin + 1:
        return None
    block = a[w_start:w_end]
    j = b.find(block, bs, be)
    if (j < 0 or (j > bs and b[j - 1 : j] != b"\n") or b.find(block, j + 1, be) >= 0
            or a.find(block, w_start + 1, e) >= 0):
        return None
    return j + (center - w_start)


def regions(a: bytes, b: bytes, margin: int = MARGIN) -> list[Region]:
    """Where `a` and `b` differ, as line-aligned parts with `margin` identical lines around."""
    return [Region(s, e, bs, be, s > 0, e < len(a))
            for s, e, bs, be in _split(a, b, (0, len(a), 0, len(b)), margin)]


def shifted_hunks(diff: bytes, old_by: int, new_by: int) -> list[bytes]:
    """The hunk part of a unified diff (from its first '@@'), line numbers moved down."""
    lines = diff.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if line.startswith(b"@@ ")), len(lines))
    out = []
    for line in lines[first:]:
        m = _HUNK.match(line) if line.startswith(b"@@ ") else None
        if m is None:
            out.append(line)
            continue
        old_start, old_len, new_start, new_len, rest = m.groups()
        old = b"%d" % (int(old_start) + old_by) + (b"," + old_len if old_len is not None else b"")
        new = b"%d" % (int(new_start) + new_by) + (b"," + new_len if new_len is not None else b"")
        out.append(b"@@ -" + old + b" +" + new + b" @@" + rest)
    return out


def _changed_span(hunks: list[bytes]) -> tuple[int, int] | None:
    """First and last old-side line index (0-based) touched by a change, in diff coordinates."""
    first: int | None = None
    last = 0
    old = 0
    for line in hunks:
        m = _HUNK.match(line) if line.startswith(b"@@ ") else None
        if m is not None:
            old = int(m.group(1)) - (1 if m.group(2) != b"0" else 0)
            continue
        kind = line[:1]
        if kind in (b"-", b"+"):
            if first is None:
                first = old
            last = old
        if kind in (b" ", b"-"):
            old += 1
    return None if first is None else (first, last)


def trimmed_diff(a: bytes, b: bytes, run_diff: RunDiff, margin: int = MARGIN) -> list[bytes] | None:
    """git's hunks for `a` -> `b` (lines from '@@' on, whole-file line numbers), computed on the
    parts that differ only; None when nothing was cut away or a change sits near a cut (where it
    may have slid from farther away: then the whole file must be diffed)."""
    parts = regions(a, b, margin)
    if not parts or (len(parts) == 1 and not (parts[0].cut_front or parts[0].cut_back)):
        return None
    guard = min(SLIDE_GUARD, margin // 2)
    out: list[bytes] = []
    a_at = a_line = b_line = 0  # where the last region ended (in a), and the newlines before it
    for r in parts:
        gap = a.count(b"\n", a_at, r.a_start)  # the same text on both sides, between regions
        a_line += gap
        b_line += gap
        hunks = shifted_hunks(run_diff(a[r.a_start : r.a_end], b[r.b_start : r.b_end]), 0, 0)
        span = _changed_span(hunks)
        if span is None:
            return None
        old_lines = a.count(b"\n", r.a_start, r.a_end)
        if (r.cut_front and span[0] < guard) or (r.cut_back and span[1] > old_lines - guard):
            return None
        out += shifted_hunks(b"".join(hunks), a_line, b_line)
        a_line += old_lines  # (a region's lines counted on each side: equal sizes can hide other line counts)
        b_line += b.count(b"\n", r.b_start, r.b_end)
        a_at = r.a_end
    return out
