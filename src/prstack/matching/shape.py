"""A hunk pre-digested for matching: its images, context counts and usable normalisations."""

from __future__ import annotations

from functools import cached_property

from prstack.matching.text import LEVELS, LOOSEST, clean, normalise_all, trivial, wrap_pieces
from prstack.models import Hunk


class Shape:
    """A hunk's lines and images, each normalised per level on first use (most hunks are
    settled by a direct look where they are expected and never need more)."""

    def __init__(self, hunk: Hunk) -> None:
        lines = tuple((line.kind, clean(line.text)) for line in hunk.lines)
        self.lines = lines
        self.old = tuple(t for k, t in lines if k != "+")
        self.new = tuple(t for k, t in lines if k != "-")
        self.lead = next((i for i, (k, _) in enumerate(lines) if k != " "), len(lines))
        self.trail = 0
        if self.lead < len(lines):
            self.trail = next(i for i, (k, _) in enumerate(reversed(lines)) if k != " ")
        self.new_file = hunk.old_start == 0 and hunk.old_lines == 0
        kinds = {k for k, _ in lines}
        self.pure = "+" not in kinds or "-" not in kinds
        """A pure addition or deletion: one image is the other less the changed lines."""
        self._norm: dict[int, tuple[str, ...]] = {}
        self._images: dict[tuple[int, int], tuple[str, ...]] = {(0, 0): self.old, (1, 0): self.new}
        self._usable: dict[int, bool] = {}

    @classmethod
    def of(cls, hunk: Hunk) -> Shape:
        return cls(hunk)

    def norm(self, level: int) -> tuple[str, ...]:
        """Every line of the hunk (in diff order) under normalisation `level`."""
        got = self._norm.get(level)
        if got is None:
            texts = [t for _, t in self.lines]
            if "\n" in "".join(texts):  # (a line holding a newline: normalise it alone)
                got = tuple(LEVELS[level][1](t) for t in texts)
            else:
                got = tuple(normalise_all(texts, level))
            below = self.norm(level - 1) if level else None
            if got == below:
                got = below  # (shared: comparisons with the level below are then immediate)
            self._norm[level] = got
        return got

    def image(self, kind: int, level: int) -> tuple[str, ...]:
        """The old (kind 0) or new (kind 1) image under normalisation `level`."""
        got = self._images.get((kind, level))
        if got is None and level and self.norm(level) is self.norm(level - 1):
            got = self._images[(kind, level)] = self.image(kind, level - 1)
        if got is None:
            drop = "+" if kind == 0 else "-"
            got = tuple(n for (k, _), n in zip(self.lines, self.norm(level), strict=True)
                        if k != drop)
            self._images[(kind, level)] = got
        return got

    def usable(self, level: int) -> bool:
        """A normalisation may judge a hunk only if it keeps every changed line distinguishable:
        a hunk that changes whitespace (or quotes) must not be judged ignoring them."""
        return level == 0 or self._distinguishes(level)

    def _distinguishes(self, level: int) -> bool:
        """Whether, under `level`, the images differ and no added line equals a different removed
        line. A level that changes no line of the hunk answers as the level below it."""
        got = self._usable.get(level)
        if got is not None:
            return got
        if level and self.norm(level) == self.norm(level - 1):
            got = self._distinguishes(level - 1)
        elif self.image(0, level) == self.image(1, level):
            got = False
        else:
            norm = self.norm(level)
            seen: dict[str, set[str]] = {}
            for (k, t), n in zip(self.lines, norm, strict=True):
                if k == "+":
                    seen.setdefault(n, set()).add(t)
            got = not any(any(a != t for a in seen.get(n, ()))
                          for (k, t), n in zip(self.lines, norm, strict=True) if k == "-")
        self._usable[level] = got
        return got

    @cached_property
    def trivial(self) -> tuple[tuple[bool, ...], tuple[bool, ...]]:
        """For the old and the new image: which lines are trivial (see `trivial`)."""
        return tuple(trivial(t) for t in self.old), tuple(trivial(t) for t in self.new)

    @cached_property
    def levels(self) -> tuple[int, ...]:
        """Normalisation levels that keep every changed line distinguishable."""
        return tuple(lv for lv in range(len(LEVELS)) if self.usable(lv))

    @cached_property
    def wrapped(self) -> tuple[str, str]:
        """The old and new images with lines joined, re-wrap insensitively (see wrap_pieces)."""
        return "".join(wrap_pieces(self.old)), "".join(wrap_pieces(self.new))

    @cached_property
    def wrap(self) -> bool:
        """Whether comparing with lines joined (re-wrap insensitive) still tells old from new."""
        return self.usable(LOOSEST) and self.wrapped[0] != self.wrapped[1]
