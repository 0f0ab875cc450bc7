"""What else explains a hunk's block found in another file than a move: the base, other hunks."""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from typing import Protocol

from prstack.match.package import key
from prstack.match.text import trivial
from prstack.models import Hunk


def _run(lines: Sequence[str]) -> bytes:
    """A block's non-trivial lines as the package index compares them, one run of text."""
    return b"\n" + b"\n".join(key(line) for line in lines if not trivial(line)) + b"\n"


def _ident(h: Hunk) -> tuple[int, str, int, int, int, int]:
    """What tells two hunks apart (an equal copy of a hunk is the same hunk)."""
    return h.pr, h.path, h.old_start, h.old_lines, h.new_start, h.new_lines


class BaseText(Protocol):
    """The package at a PR's base, as far as the Explainer asks it (a PackageIndex is one)."""

    def find_block(self, block: Sequence[str]) -> tuple[str, int] | None:
        """A place of `block` in it (path, 1-based line), or None."""


class Explainer:
    """Explains an occurrence of a hunk's block in another file of the target otherwise than by
    a move: the text was already in the package at the PR's base (in any file), or the place
    holds another audited hunk whose post-image contains it (any PR of the stack).

    `hunks_at`: installed path -> the audited hunks of that file (the mapping may grow while the
    audit plans late files). `base`: PR number -> the package at its stack's base (BaseText),
    or None where it is not known; asked only when a block is found elsewhere."""

    def __init__(self, hunks_at: Mapping[str, Sequence[Hunk]],
                 base: Callable[[int], BaseText | None] | None = None) -> None:
        self._hunks_at = hunks_at
        self._base = base
        self._runs: dict[int, bytes] = {}
        self._block_runs: dict[tuple[str, ...], bytes] = {}
        self._at_base: dict[tuple[int, tuple[str, ...]], bool] = {}
        self._adding: dict[str, tuple[int, dict[str, set[int]]]] = {}

    def by_base(self, hunk: Hunk, block: Sequence[str]) -> bool:
        """Whether `block` was in the package at the base of the hunk's PR."""
        base = self._base(hunk.pr) if self._base is not None else None
        if base is None:
            return False
        memo = (id(base), tuple(block))
        got = self._at_base.get(memo)
        if got is None:
            got = self._at_base[memo] = base.find_block(block) is not None
        return got

    def by_hunk(self, hunk: Hunk, block: Sequence[str], path: str) -> Hunk | None:
        """Another audited hunk of `path` whose post-image holds `block` (first in audit order)."""
        memo = tuple(block)
        want = self._block_runs.get(memo)
        if want is None:
            want = self._block_runs[memo] = _run(block)
        return self._holder(hunk, want, path)

    def _holder(self, hunk: Hunk, want: bytes, path: str) -> Hunk | None:
        me = _ident(hunk)
        for other in self._hunks_at.get(path, ()):
            if other is hunk or _ident(other) == me:
                continue
            run = self._runs.get(id(other))
            if run is None:
                run = self._runs[id(other)] = _run(other.new_image)
            if want in run:
                return other
        return None

    def hunks_of(self, path: str) -> tuple[Hunk, ...]:
        """The audited hunks of `path`: all that `added_by_others` reads of it."""
        return tuple(self._hunks_at.get(path, ()))

    def added_by_others(self, pr: int, path: str) -> Container[str]:
        """The lines (stripped) that the audited hunks of `path` of PRs other than `pr` add: a
        line of the target among a hunk's changes that one of them adds is no foreign line.
        Worked out on the first question (most hunks are found as they are and never ask)."""
        return _ByOthers(lambda: self._adders(path), pr)

    def _adders(self, path: str) -> dict[str, set[int]]:
        """Line (stripped) -> the PRs whose audited hunks of `path` add it; made once per path (again
        where hunks of it were added since)."""
        hunks = self._hunks_at.get(path, ())
        got = self._adding.get(path)
        if got is None or got[0] != len(hunks):
            adders: dict[str, set[int]] = {}
            for other in hunks:
                for kind, text in other.lines:
                    if kind == "+":
                        adders.setdefault(text.strip(), set()).add(other.pr)
            got = self._adding[path] = (len(hunks), adders)
        return got[1]

    def why(self, hunk: Hunk, block: Sequence[str], path: str, base: bool) -> str | None:
        """How an occurrence of `block` in `path` is explained ("by #M", "by the base"), or None.
        `base`: `by_base` of the block, asked once per block by the caller."""
        if base:
            return "by the base"
        other = self.by_hunk(hunk, block, path)
        return f"by #{other.pr}" if other is not None else None


class _ByOthers:
    """The lines a PR other than `pr` adds, from who adds each line (`adders`, asked on the first question)."""

    def __init__(self, adders: Callable[[], dict[str, set[int]]], pr: int) -> None:
        self._make = adders
        self._pr = pr
        self._adders: dict[str, set[int]] | None = None

    def __contains__(self, line: object) -> bool:
        if self._adders is None:
            self._adders = self._make()
        prs = self._adders.get(line) if isinstance(line, str) else None
        return prs is not None and (len(prs) > 1 or self._pr not in prs)
