"""Where a hunk should be in the target, from the lines around it in the PR's head (or base)."""

from __future__ import annotations

from prstack.match.index import FileIndex
from prstack.match.text import decode, trivial


class Anchors:
    """Maps line numbers of a reference text (the PR's head or base) to the target through the
    nearest lines before them that occur exactly once in the target (median of their shifts)."""

    LOOK_BACK = 400
    VOTES = 5

    def __init__(self, ref: bytes, target: FileIndex) -> None:
        self._data = ref
        self._lines: list[str] | None = None
        self._target = target

    @property
    def _ref(self) -> list[str]:
        """The reference text's lines, decoded on first need (most files never need them)."""
        if self._lines is None:
            self._lines = decode(self._data)
        return self._lines

    def window(self, line0: int, end0: int) -> tuple[int, int] | None:
        """Where the target should hold reference lines [line0, end0): the start as implied by
        the unique lines just before them and by those just after them (low, high)."""
        unique = self._target.positions(0).unique
        ref = self._ref
        guesses = []
        for lines_range in (range(min(line0, len(ref)) - 1, max(-1, line0 - self.LOOK_BACK), -1),
                            range(max(0, end0), min(len(ref), end0 + self.LOOK_BACK))):
            shifts: list[int] = []
            for h in lines_range:
                at = unique(ref[h])
                if at is not None and not trivial(ref[h]):
                    shifts.append(at - h)
                    if len(shifts) == self.VOTES:
                        break
            if shifts:
                shifts.sort()
                guesses.append(line0 + shifts[len(shifts) // 2])
        if not guesses:
            return None
        return min(guesses), max(guesses)
