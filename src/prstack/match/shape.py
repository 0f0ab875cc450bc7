"""A hunk pre-digested for matching: its images, context counts and usable normalisations."""

from __future__ import annotations

from functools import cached_property
from itertools import compress
from operator import itemgetter
from typing import NamedTuple

from prstack.match.text import ASCII_SPACE, LEVELS, LOOSEST, clean, normalise_all, trivial, wrap_lines, wrap_pieces
from prstack.models import Hunk


class _Level(NamedTuple):
    norm: tuple[str, ...]
    images: tuple[tuple[str, ...], tuple[str, ...]]
    usable: bool


_KIND, _TEXT = itemgetter(0), itemgetter(1)
"""A HunkLine's kind and text."""


class Shape:
    """A hunk's lines and images, each normalised per level on first use (most hunks are
    settled by a direct look where they are expected and never need more)."""

    def __init__(self, hunk: Hunk) -> None:
        texts: tuple[str, ...] = tuple(map(_TEXT, hunk.lines))
        if "\r" in "".join(texts):
            texts = tuple(map(clean, texts))
        kinds = "".join(map(_KIND, hunk.lines))
        self.texts = texts
        self.kinds = kinds
        self._pick = (tuple(map("+".__ne__, kinds)), tuple(map("-".__ne__, kinds)))
        """Which lines make the old and the new image (a flag per line)."""
        self.old = tuple(compress(texts, self._pick[0]))
        self.new = tuple(compress(texts, self._pick[1]))
        self.lead = len(kinds) - len(kinds.lstrip(" "))
        self.trail = len(kinds) - len(kinds.rstrip(" ")) if self.lead < len(kinds) else 0
        self.new_file = hunk.old_start == 0 and hunk.old_lines == 0
        self.pure = "+" not in kinds or "-" not in kinds
        """A pure addition or deletion: one image is the other less the changed lines."""
        self.taken_back = hunk.taken_back
        """Lines a commit of the PR wrote in the file and a later one removed (see Hunk)."""

    @classmethod
    def of(cls, hunk: Hunk) -> Shape:
        return cls(hunk)

    @cached_property
    def lines(self) -> tuple[tuple[str, str], ...]:
        """(kind, text) of every line, in diff order."""
        return tuple(zip(self.kinds, self.texts, strict=True))

    def norm(self, level: int) -> tuple[str, ...]:
        """Every line of the hunk (in diff order) under normalisation `level`."""
        return self._levels[level].norm

    def image(self, kind: int, level: int) -> tuple[str, ...]:
        """The old (kind 0) or new (kind 1) image under normalisation `level`."""
        return self._levels[level].images[kind]

    def usable(self, level: int) -> bool:
        """A normalisation may judge a hunk only if it keeps every changed line distinguishable:
        a hunk that changes whitespace (or quotes) must not be judged ignoring them."""
        return level == 0 or self._levels[level].usable

    @cached_property
    def _levels(self) -> list[_Level]:
        """Per level: the hunk's lines, its old and new image, and whether the level keeps the
        changed lines distinguishable (see `usable`). Built for all levels on first use; a level
        that changes no line shares what the level below it found."""
        texts = list(self.texts)
        alone = "\n" in "".join(texts)  # (a line holding a newline: normalise it alone)
        out = [_Level(tuple(texts), (self.old, self.new), self.old != self.new)]
        for level in range(1, len(LEVELS)):
            norm = tuple(LEVELS[level][1](t) for t in texts) if alone else tuple(
                normalise_all(texts, level))
            if norm == out[-1].norm:
                out.append(out[-1])
                continue
            old = tuple(compress(norm, self._pick[0]))
            new = tuple(compress(norm, self._pick[1]))
            out.append(_Level(norm, (old, new), old != new and self._distinguishes(norm)))
        return out

    def _distinguishes(self, norm: tuple[str, ...]) -> bool:
        """Whether no added line is, normalised as in `norm`, the same as a different removed line."""
        if self.pure:
            return True  # (nothing removed, or nothing added)
        texts = self.texts
        seen: dict[str, set[str]] = {}
        added = [i for i, k in enumerate(self.kinds) if k == "+"]
        removed = [i for i, k in enumerate(self.kinds) if k == "-"]
        for i in added:
            seen.setdefault(norm[i], set()).add(texts[i])
        return not any(a != texts[i] for i in removed for a in seen.get(norm[i], ()))

    @cached_property
    def trivial(self) -> tuple[tuple[bool, ...], tuple[bool, ...]]:
        """For the old and the new image: which lines are trivial (see `trivial`)."""
        return tuple(map(trivial, self.old)), tuple(map(trivial, self.new))

    @cached_property
    def plain_trailing(self) -> bool:
        """Whether all trailing whitespace of the hunk's lines is ASCII (see ASCII_SPACE)."""
        return self.norm(1) == tuple(t.rstrip(ASCII_SPACE) for t in self.texts)

    @cached_property
    def levels(self) -> tuple[int, ...]:
        """Normalisation levels that keep every changed line distinguishable."""
        return tuple(lv for lv in range(len(LEVELS)) if self.usable(lv))

    @cached_property
    def wrapped(self) -> tuple[str, str]:
        """The old and new images with lines joined, re-wrap insensitively (see wrap_pieces)."""
        if "\n" in "".join(self.old + self.new):  # (a line holding a newline: one by one)
            return "".join(wrap_pieces(self.old)), "".join(wrap_pieces(self.new))
        old, new = (wrap_lines(list(self.image(kind, LOOSEST)))[1] for kind in (0, 1))
        return "".join(old), "".join(new)

    @cached_property
    def wrap(self) -> bool:
        """Whether comparing with lines joined (re-wrap insensitive) still tells old from new."""
        return self.usable(LOOSEST) and self.wrapped[0] != self.wrapped[1]
