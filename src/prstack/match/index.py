"""Per-file line indices: lines normalised per level and their positions, built once, on demand."""

from __future__ import annotations

import bisect
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate, repeat

from prstack.match.text import (
    ASCII_SPACE,
    LOOSEST,
    LazyLines,
    conflict_blocks,
    decode,
    has_markers,
    normalise_all,
    wrap_lines,
)

SCAN = 64
"""Searches within this radius look line by line instead of building the positions index."""
LAZY_BYTES = 4_000_000
"""Files at least this big are decoded only where looked at until a search needs them whole: a
direct look at where a hunk is expected reads a few lines."""
MAX_VERIFY = 200_000
"""Upper bound on candidate positions verified per search (keeps pathological files linear)."""


class Positions:
    """Where each distinct line occurs; built at C speed (a dict of first positions and, when
    some line repeats, a Counter); the positions of a repeated line are listed on first ask."""

    def __init__(self, lines: Sequence[str]) -> None:
        n = len(lines)
        self._lines = lines
        self._first = dict(zip(reversed(lines), range(n - 1, -1, -1), strict=True))
        self._counts: Counter[str] | None = Counter(lines) if len(self._first) < n else None
        self._many: dict[str, list[int]] = {}

    def count(self, line: str) -> int:
        if self._counts is None:
            return 1 if line in self._first else 0
        return self._counts.get(line, 0)

    def unique(self, line: str) -> int | None:
        """The position of `line` if it occurs exactly once, else None."""
        if self._counts is not None and self._counts.get(line) != 1:
            return None
        return self._first.get(line)

    def counts(self, lines: Sequence[str]) -> list[int]:
        """`count` of each of `lines` (dict lookups at C speed)."""
        if self._counts is None:
            return list(map(int, map(self._first.__contains__, lines)))
        return list(map(self._counts.get, lines, repeat(0)))

    def occ(self, line: str) -> list[int]:
        """Sorted positions of `line` (empty when absent)."""
        first = self._first.get(line)
        if first is None:
            return []
        count = self.count(line)
        if count == 1:
            return [first]
        got = self._many.get(line)
        if got is None:
            got = self._many[line] = [first]
            index = self._lines.index
            for _ in range(count - 1):
                got.append(index(line, got[-1] + 1))
        return got


class FileIndex:
    """One target file's lines with, per normalisation level, the normalised lines and a
    dict from normalised line to its sorted positions. Levels are built lazily; a level that
    changes nothing shares the level below it (its lines, positions and search results)."""

    def __init__(self, lines: list[str] | LazyLines, *, markers: bool = True) -> None:
        self._lazy = lines if isinstance(lines, LazyLines) else None
        self._lines = None if isinstance(lines, LazyLines) else lines
        self._norm: dict[int, list[str]] = {}
        self._same: dict[int, int] = {0: 0}
        """Level -> the lowest level with the same normalised lines."""
        self._pos: dict[int, Positions] = {}
        self._found: dict[tuple[int, tuple[str, ...], int, int, int | None], int | None] = {}
        self._conflicts = conflict_blocks(self.lines) if markers else []
        self._wrap: tuple[list[str], list[str]] | None = None
        self._plain: bool | None = None
        self._matches: dict[tuple[tuple[str, ...], int, int | None], Matches] = {}

    @classmethod
    def of(cls, data: bytes) -> FileIndex:
        """The index of a file's bytes; a big file is decoded only where looked at, until some
        search needs all of it. The same bytes asked again (the same file judged for another PR of
        the stack, or in another target) get the index made for them, with what it has found."""
        if len(data) >= LAZY_BYTES:
            return cls(LazyLines(data), markers=has_markers(data))
        return _recent.index(data, lambda: cls(decode(data), markers=has_markers(data)))

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            assert self._lazy is not None
            self._lines = self._lazy.all()
            self._lazy = None
        return self._lines

    def __len__(self) -> int:
        return self._lazy.count if self._lazy is not None else len(self.lines)

    def window(self, start: int, end: int) -> list[str]:
        """lines[start:end], decoding only those lines where it can."""
        if self._lazy is not None and start >= 0 and end >= 0:
            return self._lazy.get(start, end)
        return self.lines[start:end]

    def norm(self, level: int) -> list[str]:
        """The file's lines under normalisation `level` (index into LEVELS)."""
        got = self._norm.get(level)
        if got is None and level == 0:
            got = self._norm[0] = self.lines
        if got is None:
            got = normalise_all(self.lines, level)
            below = self._norm.get(level - 1)  # (shared when it changes nothing, if known)
            if got == below:
                got, self._same[level] = below, self._same[level - 1]
            else:
                self._same[level] = level
            self._norm[level] = got
        return got

    def plain_trailing(self) -> bool:
        """Whether all trailing whitespace of the file's lines is ASCII (see ASCII_SPACE)."""
        if self._plain is None:
            self._plain = self.norm(1) == self.lines or self.norm(1) == list(
                map(str.rstrip, self.lines, repeat(ASCII_SPACE)))
        return self._plain

    def positions(self, level: int) -> Positions:
        self.norm(level)
        level = self._same[level]
        got = self._pos.get(level)
        if got is None:
            got = self._pos[level] = Positions(self.norm(level))
        return got

    def holds(self, image: Sequence[str], at: int) -> bool:
        """True when the exact lines `image` are at `at` (no index needed)."""
        return at >= 0 and self.window(at, at + len(image)) == list(image)

    def wrap_window(self, lo: int, hi: int) -> tuple[str, list[int]]:
        """Lines [lo, hi) as `wrap_pieces` makes them, joined, and where each piece starts in
        that text (plus, last, the text's length)."""
        if self._wrap is None:
            self._wrap = wrap_lines(self.norm(LOOSEST))
        closed, full = self._wrap
        lo, hi, _ = slice(lo, hi).indices(len(full))  # as slicing reads them (hi may be < 0)
        pieces = full[lo:hi]
        loose = self.norm(LOOSEST)
        last = hi - 1
        while last >= lo and not loose[last]:
            last -= 1
        if last >= lo:  # the window's last piece has no next one: its comma stays
            pieces[last - lo] = closed[last]
        return "".join(pieces), list(accumulate(map(len, pieces), initial=0))

    def in_conflict(self, start: int, end: int) -> bool:
        """True when lines [start, end) touch a conflict block (or a stray marker line)."""
        return any(a < end and start <= b for a, b in self._conflicts)

    def find(
        self, image: Sequence[str], level: int, expected: int, *, min_start: int = 0,
        radius: int | None = None,
    ) -> int | None:
        """Start of the occurrence of `image` (already normalised at `level`) nearest to
        `expected`, preferring starts at or after `min_start`; None when there is none."""
        if not image:
            return None
        self.norm(level)
        memo = (self._same[level], tuple(image), expected, min_start, radius)
        if memo in self._found:
            return self._found[memo]
        got = self._find(image, level, expected, min_start, radius)
        self._found[memo] = got
        return got

    def matches(self, image: tuple[str, ...], expected: int, radius: int | None) -> Matches:
        """`Matches` of `image` (normalised at LOOSEST), shared by the searches that ask."""
        memo = (image, expected, radius)
        got = self._matches.get(memo)
        if got is None:
            got = self._matches[memo] = Matches(self, image, expected, radius)
        return got

    def find_among(
        self, loose: Matches, image: Sequence[str], level: int, expected: int, *,
        min_start: int = 0, radius: int | None = None,
    ) -> int | None:
        """`find`, for a `level` whose every match is a match at LOOSEST, among `loose` (the
        matches there of the same lines, found with a radius at least `radius`)."""
        lines = self.norm(level)
        want = list(image)
        fallback: int | None = None
        i = 0
        while (start := loose.get(i)) is not None:
            i += 1
            if radius is not None and abs(start - expected) > radius:
                break
            if lines[start : start + len(want)] == want:
                if start >= min_start:
                    return start
                if fallback is None:
                    fallback = start
        if loose.truncated:
            return self.find(image, level, expected, min_start=min_start, radius=radius)
        return fallback

    def _find(self, image: Sequence[str], level: int, expected: int, min_start: int,
              radius: int | None) -> int | None:
        lines = self.norm(level)
        if radius is not None and radius <= SCAN:
            return _scan(lines, image, expected, min_start, radius)
        pos = self.positions(level)
        n, m = len(lines), len(image)
        # Anchor the search on the image's rarest line.
        best_i, best_count = 0, 0
        for i, line in enumerate(image):
            count = pos.count(line)
            if not count:
                return None
            if not best_count or count < best_count:
                best_i, best_count = i, count
        best_occ = pos.occ(image[best_i])
        fallback: int | None = None
        for verified, start in enumerate(_outward(best_occ, best_i, expected)):
            if verified > MAX_VERIFY:
                break
            if radius is not None and abs(start - expected) > radius:
                break
            if start < 0 or start + m > n:
                continue
            if all(lines[start + j] == image[j] for j in range(m)):
                if start >= min_start:
                    return start
                if fallback is None:
                    fallback = start
        return fallback


class Matches:
    """Starts of one image at LOOSEST within a radius of a place, nearest first (the earlier of
    two at the same distance first), found as far as asked. Every occurrence of the image under a
    stricter normalisation is among them, so a stricter search need only check these."""

    EAGER = 32
    """Up to this many candidates are all checked at once (no generator kept)."""

    def __init__(self, idx: FileIndex, image: tuple[str, ...], expected: int,
                 radius: int | None) -> None:
        self._found: list[int] = []
        self._more: Iterator[int] | None = None
        self.truncated = False
        """Whether the search stopped at MAX_VERIFY candidates (as `find` does)."""
        lines = idx.norm(LOOSEST)
        n, m = len(lines), len(image)
        want = list(image)
        if radius is not None and radius <= SCAN:
            self._found = [start for delta in range(radius + 1)
                           for start in ((expected - delta, expected + delta) if delta
                                         else (expected,))
                           if 0 <= start <= n - m and lines[start] == want[0]
                           and lines[start : start + m] == want]
            return
        pos = idx.positions(LOOSEST)
        counts = pos.counts(image)
        if not all(counts):
            return
        best_i = counts.index(min(counts))
        occ = pos.occ(image[best_i])
        if len(occ) > self.EAGER:
            self._more = self._starts(lines, want, occ, best_i, expected, radius)
            return
        for start in _outward(occ, best_i, expected):
            if radius is not None and abs(start - expected) > radius:
                break
            if 0 <= start <= n - m and lines[start : start + m] == want:
                self._found.append(start)

    def get(self, i: int) -> int | None:
        """The i-th start (nearest first), or None when there are no more."""
        if i < len(self._found):
            return self._found[i]
        while i >= len(self._found):
            if self._more is None:
                return None
            got = next(self._more, None)
            if got is None:
                self._more = None
                return None
            self._found.append(got)
        return self._found[i]

    def __bool__(self) -> bool:
        return self.get(0) is not None

    def _starts(self, lines: list[str], want: list[str], occ: list[int], shift: int,
                expected: int, radius: int | None) -> Iterator[int]:
        n, m = len(lines), len(want)
        for verified, start in enumerate(_outward(occ, shift, expected)):
            if verified > MAX_VERIFY:
                self.truncated = True
                return
            if radius is not None and abs(start - expected) > radius:
                return
            if 0 <= start <= n - m and lines[start : start + m] == want:
                yield start


def _scan(lines: list[str], image: Sequence[str], expected: int, min_start: int,
          radius: int) -> int | None:
    """`find` within a small radius, by looking (no index needed)."""
    n, m = len(lines), len(image)
    first = image[0]
    fallback: int | None = None
    for delta in range(radius + 1):
        for start in (expected - delta, expected + delta) if delta else (expected,):
            if 0 <= start <= n - m and lines[start] == first and all(
                    lines[start + j] == image[j] for j in range(1, m)):
                if start >= min_start:
                    return start
                if fallback is None:
                    fallback = start
    return fallback


def _outward(occ: list[int], shift: int, expected: int) -> Iterator[int]:
    """Candidate starts (occurrence - shift) in order of distance from `expected`."""
    k = bisect.bisect_left(occ, expected + shift)
    lo, hi = k - 1, k
    while lo >= 0 or hi < len(occ):
        if hi >= len(occ) or (lo >= 0 and expected - (occ[lo] - shift) <= occ[hi] - shift - expected):
            yield occ[lo] - shift
            lo -= 1
        else:
            yield occ[hi] - shift
            hi += 1


KEPT_BYTES = 4_000_000
"""How many bytes of files the indices kept for reuse may cover in all (the least recently used go)."""


class _Recent(threading.local):
    """The indices of the files indexed last in this thread, by content, up to KEPT_BYTES."""

    def __init__(self) -> None:
        self.by_data: dict[bytes, FileIndex] = {}
        self.size = 0

    def index(self, data: bytes, make: Callable[[], FileIndex]) -> FileIndex:
        got = self.by_data.pop(data, None)
        if got is None:
            got = make()
            self.size += len(data)
            while self.size > KEPT_BYTES and self.by_data:
                self.size -= len(next(iter(self.by_data)))
                del self.by_data[next(iter(self.by_data))]
        self.by_data[data] = got  # (last: the most recently used)
        return got


_recent = _Recent()
