"""Per-file line indices: lines normalised per level and their positions, built once, on demand."""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterator, Sequence

from prstack.matching.text import LEVELS, conflict_blocks

MAX_VERIFY = 200_000
"""Upper bound on candidate positions verified per search (keeps pathological files linear)."""


class FileIndex:
    """One target file's lines with, per normalisation level, the normalised lines and a
    dict from normalised line to its sorted positions. Levels are built lazily."""

    def __init__(self, lines: list[str], *, markers: bool = True) -> None:
        self.lines = lines
        self._norm: dict[int, list[str]] = {0: lines}
        self._pos: dict[int, dict[str, list[int]]] = {}
        self._conflicts = conflict_blocks(lines) if markers else []

    def __len__(self) -> int:
        return len(self.lines)

    def norm(self, level: int) -> list[str]:
        """The file's lines under normalisation `level` (index into LEVELS)."""
        got = self._norm.get(level)
        if got is None:
            fn = LEVELS[level][1]
            got = self._norm[level] = [fn(line) for line in self.lines]
        return got

    def positions(self, level: int) -> dict[str, list[int]]:
        got = self._pos.get(level)
        if got is None:
            got = {}
            for i, line in enumerate(self.norm(level)):
                slot = got.get(line)
                if slot is None:
                    got[line] = [i]
                else:
                    slot.append(i)
            self._pos[level] = got
        return got

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
        lines = self.norm(level)
        pos = self.positions(level)
        n, m = len(lines), len(image)
        # Anchor the search on the image's rarest line.
        best_i, best_occ = 0, None
        for i, line in enumerate(image):
            occ = pos.get(line)
            if occ is None:
                return None
            if best_occ is None or len(occ) < len(best_occ):
                best_i, best_occ = i, occ
        assert best_occ is not None
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


class AnchorMap:
    """Maps line numbers of a reference text (the PR's head or base) to the target through lines
    unique in both, kept in a common order (patience-diff anchors)."""

    def __init__(self, ref: Sequence[str], target: Sequence[str]) -> None:
        cr, ct = Counter(ref), Counter(target)
        where = {line: i for i, line in enumerate(target) if ct[line] == 1}
        pairs = [(i, where[line]) for i, line in enumerate(ref) if cr[line] == 1 and line in where]
        self._ref, self._tgt = _increasing(pairs)

    def __call__(self, line0: int) -> int:
        """The target position expected for 0-based reference position `line0`."""
        k = bisect.bisect_right(self._ref, line0) - 1
        if k < 0:
            if self._ref:
                return max(0, self._tgt[0] - (self._ref[0] - line0))
            return line0
        return self._tgt[k] + (line0 - self._ref[k])


def _increasing(pairs: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Longest subsequence of `pairs` (sorted by first) whose second items increase."""
    tails: list[int] = []
    tail_idx: list[int] = []
    prev: list[int] = [-1] * len(pairs)
    for k, (_, t) in enumerate(pairs):
        j = bisect.bisect_left(tails, t)
        if j == len(tails):
            tails.append(t)
            tail_idx.append(k)
        else:
            tails[j] = t
            tail_idx[j] = k
        prev[k] = tail_idx[j - 1] if j else -1
    out: list[tuple[int, int]] = []
    k = tail_idx[-1] if tail_idx else -1
    while k >= 0:
        out.append(pairs[k])
        k = prev[k]
    out.reverse()
    return [r for r, _ in out], [t for _, t in out]
