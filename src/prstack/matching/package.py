"""The whole distribution's text, indexed once per run to find blocks that moved to another file."""

from __future__ import annotations

import bisect
import contextlib
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from prstack.errors import PrstackError
from prstack.matching.text import LEVELS, LOOSEST, decode, normalise_all, trivial

_loose = LEVELS[LOOSEST][1]
INDEX_MAX_BYTES = 8_000_000
"""Files larger than this (generated tables, vendored data) are not searched for moved blocks:
moved code lands in code modules, and indexing them would double the cost of the whole index."""


class PackageIndex:
    """Every text file of the audited distribution, keyed by installed path.

    `load` is called at most once, on first use; files are decoded and indexed then, once per run.
    Lines are compared whitespace- and quote-insensitively, and trivial lines between a block's
    lines are skipped, so a block is found even when blank lines or formatting around it changed.
    The index is built with whole-text operations (no per-line Python work): a 50 MB package
    indexes in about a second.
    """

    def __init__(self, load: Callable[[], Mapping[str, bytes]]) -> None:
        self._load = load
        self._lock = threading.Lock()
        self._data: Mapping[str, bytes] | None = None
        self._files: dict[str, list[str]] | None = None
        self._keys: list[str] = []
        """Every line of every file (sorted by path), loosely normalised, end to end."""
        self._starts: list[int] = []
        self._paths: list[str] = []
        self._first: dict[str, int] | None = None
        """Loose key -> its first position in `_keys`."""
        self._count: Counter[str] = Counter()

    @property
    def data(self) -> Mapping[str, bytes]:
        """Installed path -> the file's bytes (loaded once)."""
        if self._data is None:
            self._data = self._load()
        return self._data

    @property
    def files(self) -> dict[str, list[str]]:
        """Installed path -> the file's lines."""
        if self._files is None:
            self._files = {path: decode(data) for path, data in self.data.items()}
        return self._files

    def _index(self) -> dict[str, int]:
        with self._lock:
            return self._build()

    def _build(self) -> dict[str, int]:
        if self._first is None:
            for path in sorted(self.data):
                if len(self.data[path]) > INDEX_MAX_BYTES:
                    continue
                self._starts.append(len(self._keys))
                self._paths.append(path)
                self._keys += normalise_all(decode(self.data[path]), LOOSEST)
            self._starts.append(len(self._keys))
            keys = self._keys
            self._first = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1), strict=True))
            self._count = Counter(keys)
        return self._first

    def warm(self) -> None:
        """Read and index everything now (e.g. on another thread while git works); an error
        reading the target is raised again where the index is used."""
        with contextlib.suppress(PrstackError):
            self._index()

    def find_block(
        self, block: Sequence[str], *, exclude: str | None = None
    ) -> tuple[str, int] | None:
        """Where the non-trivial lines of `block` occur, in order and contiguous (trivial lines
        between them ignored), in a file other than `exclude`: (installed path, 1-based line)."""
        wanted = [_loose(line) for line in block if not trivial(line)]
        if not wanted:
            return None
        first = self._index()
        if any(key not in first for key in wanted):
            return None
        # look for the block where its rarest line is
        probe = min(range(len(wanted)), key=lambda i: self._count[wanted[i]])
        keys = self._keys
        at: int | None = first[wanted[probe]]
        while at is not None:
            f = bisect.bisect_right(self._starts, at) - 1
            path = self._paths[f]
            if path != exclude:
                start = _walk(keys, at, wanted, probe, self._starts[f], self._starts[f + 1])
                if start is not None:
                    return path, start - self._starts[f] + 1
            try:
                at = keys.index(wanted[probe], at + 1)
            except ValueError:
                at = None
        return None


def _walk(keys: list[str], at: int, wanted: list[str], probe: int, lo: int, hi: int) -> int | None:
    """With wanted[probe] at keys[at], the position of wanted[0] if all of `wanted` is there, in
    order, with only trivial lines between, inside [lo, hi); else None."""
    i = at
    for k in range(probe - 1, -1, -1):
        i -= 1
        while i >= lo and keys[i] != wanted[k] and trivial(keys[i]):
            i -= 1
        if i < lo or keys[i] != wanted[k]:
            return None
    start = i
    i = at
    for k in range(probe + 1, len(wanted)):
        i += 1
        while i < hi and keys[i] != wanted[k] and trivial(keys[i]):
            i += 1
        if i >= hi or keys[i] != wanted[k]:
            return None
    return start
