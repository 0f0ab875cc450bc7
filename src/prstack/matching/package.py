"""The whole distribution's text, indexed once per run to find blocks that moved to another file."""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from prstack.matching.text import LEVELS, LOOSEST, decode, normalise_all, trivial

_loose = LEVELS[LOOSEST][1]
_QUOTES = bytes.maketrans(b"'", b'"')
_SPACES = b" \t\f\v\r"
INDEX_MAX_BYTES = 8_000_000
"""Files larger than this (generated tables, vendored data) are not searched for moved blocks:
moved code lands in code modules, and indexing them would double the cost of the whole index."""


def key(line: str) -> bytes:
    """A line as the index holds it: loosely normalised, UTF-8 (stray-byte escapes kept apart)."""
    return _loose(line).encode("utf-8", "surrogatepass")


def loose_keys(data: bytes) -> bytes:
    """`key` of every line of a file, joined by newlines (no final one), computed on the bytes.

    The characters the normalisation drops or maps are ASCII, which never occur inside a multi-byte
    UTF-8 sequence, so on valid UTF-8 this equals decoding, normalising and encoding each line. In
    invalid UTF-8, dropping a byte could join two stray bytes into a character: such files are
    decoded first (their stray bytes become escapes, which no valid UTF-8 text holds).
    """
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if data.endswith(b"\n"):
        data = data[:-1]
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            lines = data.decode("utf-8", "surrogateescape").split("\n")
            return "\n".join(normalise_all(lines, LOOSEST)).encode("utf-8", "surrogatepass")
    return data.translate(_QUOTES, _SPACES)


class PackageIndex:
    """Every text file of the audited distribution, keyed by installed path.

    `load` is called at most once, on first use; files are indexed then, once per run.
    Lines are compared whitespace- and quote-insensitively, and trivial lines between a block's
    lines are skipped, so a block is found even when blank lines or formatting around it changed.
    The index is built with whole-text operations (no per-line Python work): the normalised lines
    of every file end to end, each line's first position and its count.
    """

    def __init__(self, load: Callable[[], Mapping[str, bytes]]) -> None:
        self._load = load
        self._data: Mapping[str, bytes] | None = None
        self._files: dict[str, list[str]] | None = None
        self._keys: list[bytes] = []
        """Every line of every file (sorted by path) as its `key`, end to end."""
        self._starts: list[int] = []
        """Where each file's lines start in `_keys` (and, last, the length of `_keys`)."""
        self._paths: list[str] = []
        self._first: dict[bytes, int] | None = None
        """Key -> its first position in `_keys`."""
        self._count: Counter[bytes] = Counter()

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

    def _index(self) -> dict[bytes, int]:
        if self._first is None:
            parts = []
            at = 0
            for path in sorted(self.data):
                data = self.data[path]
                if len(data) > INDEX_MAX_BYTES or not data:
                    continue  # (an empty file has no lines)
                part = loose_keys(data)
                self._paths.append(path)
                self._starts.append(at)
                parts.append(part)
                at += part.count(b"\n") + 1
            self._starts.append(at)
            keys = self._keys = b"\n".join(parts).split(b"\n") if parts else []
            self._first = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1), strict=True))
            self._count = Counter(keys)
        return self._first

    def find_block(
        self, block: Sequence[str], *, exclude: str | None = None
    ) -> tuple[str, int] | None:
        """Where the non-trivial lines of `block` occur, in order and contiguous (trivial lines
        between them ignored), in a file other than `exclude`: (installed path, 1-based line)."""
        wanted = [key(line) for line in block if not trivial(line)]
        if not wanted:
            return None
        first = self._index()
        if any(k not in first for k in wanted):
            return None
        # look for the block where its rarest line is
        probe = min(range(len(wanted)), key=lambda i: self._count[wanted[i]])
        keys = self._keys
        at = first[wanted[probe]]
        left = self._count[wanted[probe]]
        while True:
            f = bisect.bisect_right(self._starts, at) - 1
            path = self._paths[f]
            if path != exclude:
                start = _walk(keys, at, wanted, probe, self._starts[f], self._starts[f + 1])
                if start is not None:
                    return path, start - self._starts[f] + 1
            left -= 1
            if not left:
                return None
            at = keys.index(wanted[probe], at + 1)


def _trivial(k: bytes) -> bool:
    return trivial(k.decode("utf-8", "surrogatepass"))


def _walk(keys: list[bytes], at: int, wanted: list[bytes], probe: int, lo: int, hi: int
          ) -> int | None:
    """With wanted[probe] at keys[at], the position of wanted[0] if all of `wanted` is there, in
    order, with only trivial lines between, inside [lo, hi); else None."""
    i = at
    for k in range(probe - 1, -1, -1):
        i -= 1
        while i >= lo and keys[i] != wanted[k] and _trivial(keys[i]):
            i -= 1
        if i < lo or keys[i] != wanted[k]:
            return None
    start = i
    i = at
    for k in range(probe + 1, len(wanted)):
        i += 1
        while i < hi and keys[i] != wanted[k] and _trivial(keys[i]):
            i += 1
        if i >= hi or keys[i] != wanted[k]:
            return None
    return start
