"""Where a hunk should be in the target, from the lines around it in the PR's head (or base)."""

from __future__ import annotations

import bisect

from prstack.matching.index import FileIndex
from prstack.matching.text import decode, trivial


class Anchors:
    """Maps line numbers of a reference text (the PR's head or base) to the target through the
    nearest lines before them that occur exactly once in the target (median of their shifts)."""

    LOOK_BACK = 400
    VOTES = 5
    BLOCK = 1024

    def __init__(self, ref: bytes, target: FileIndex) -> None:
        self._data = ref
        self._lines: list[str] | None = None
        self._target = target
        self._blocks: dict[int, tuple[list[int], list[int]]] = {}
        """Per block of BLOCK reference lines: its votes (lines that occur exactly once in the
        target and are not trivial), in order, and their shifts to the target."""

    @property
    def _ref(self) -> list[str]:
        """The reference text's lines, decoded on first need (most files never need them)."""
        if self._lines is None:
            self._lines = decode(self._data)
        return self._lines

    def _block(self, b: int) -> tuple[list[int], list[int]]:
        got = self._blocks.get(b)
        if got is None:
            lo = b * self.BLOCK
            lines = self._ref[lo : lo + self.BLOCK]
            where = self._target.positions(0).unique_all(lines)
            votes = [(lo + i, at - lo - i) for i, at in enumerate(where)
                     if at is not None and not trivial(lines[i])]
            got = self._blocks[b] = [h for h, _ in votes], [shift for _, shift in votes]
        return got

    def _votes(self, lo: int, hi: int, *, last: bool) -> list[int]:
        """Shifts of the first (or last) VOTES votes among reference lines [lo, hi)."""
        out: list[int] = []
        if lo >= hi:
            return out
        blocks = range(lo // self.BLOCK, (hi - 1) // self.BLOCK + 1)
        for b in reversed(blocks) if last else blocks:
            lines, shifts = self._block(b)
            i, j = bisect.bisect_left(lines, lo), bisect.bisect_left(lines, hi)
            take = shifts[max(i, j - (self.VOTES - len(out))) : j] if last else shifts[
                i : min(j, i + self.VOTES - len(out))]
            out += take
            if len(out) == self.VOTES:
                break
        return out

    def window(self, line0: int, end0: int) -> tuple[int, int] | None:
        """Where the target should hold reference lines [line0, end0): the start as implied by
        the unique lines just before them and by those just after them (low, high)."""
        n = len(self._ref)
        guesses = []
        # the nearest votes before line0 (within LOOK_BACK), then the nearest from end0 on
        for side in (self._votes(max(0, line0 - self.LOOK_BACK + 1), min(line0, n), last=True),
                     self._votes(max(0, end0), min(n, end0 + self.LOOK_BACK), last=False)):
            if side:
                side.sort()
                guesses.append(line0 + side[len(side) // 2])
        if not guesses:
            return None
        return min(guesses), max(guesses)
