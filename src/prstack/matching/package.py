"""The whole distribution's text, indexed once per run to find blocks that moved to another file."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from prstack.matching.text import LEVELS, LOOSEST, decode, trivial

_loose = LEVELS[LOOSEST][1]


class PackageIndex:
    """Every text file of the audited distribution, keyed by installed path.

    `load` is called at most once, on first use; files are decoded and indexed then, once per run.
    Only non-trivial lines are indexed (whitespace- and quote-insensitive), so a block is found
    even when blank lines or formatting around it changed.
    """

    def __init__(self, load: Callable[[], Mapping[str, bytes]]) -> None:
        self._load = load
        self._files: dict[str, list[str]] | None = None
        self._seq: dict[str, tuple[list[str], list[int]]] = {}
        self._where: dict[str, list[tuple[str, int]]] | None = None

    @property
    def files(self) -> dict[str, list[str]]:
        """Installed path -> the file's lines."""
        if self._files is None:
            self._files = {path: decode(data) for path, data in self._load().items()}
        return self._files

    def _index(self) -> dict[str, list[tuple[str, int]]]:
        if self._where is None:
            where: dict[str, list[tuple[str, int]]] = {}
            for path in sorted(self.files):
                norms: list[str] = []
                numbers: list[int] = []
                for i, line in enumerate(self.files[path]):
                    if not trivial(line):
                        key = _loose(line)
                        where.setdefault(key, []).append((path, len(norms)))
                        norms.append(key)
                        numbers.append(i)
                self._seq[path] = (norms, numbers)
            self._where = where
        return self._where

    def find_block(self, block: Sequence[str], *, exclude: str | None = None) -> tuple[str, int] | None:
        """Where the non-trivial lines of `block` occur, in order and contiguous (trivial lines
        between them ignored), in a file other than `exclude`: (installed path, 1-based line)."""
        wanted = [_loose(line) for line in block if not trivial(line)]
        if not wanted:
            return None
        where = self._index()
        occs = [where.get(line, []) for line in wanted]
        rare = min(range(len(wanted)), key=lambda i: len(occs[i]))
        for path, k in occs[rare]:
            if path == exclude:
                continue
            norms, numbers = self._seq[path]
            start = k - rare
            if start < 0 or start + len(wanted) > len(norms):
                continue
            if norms[start : start + len(wanted)] == wanted:
                return path, numbers[start] + 1
        return None
