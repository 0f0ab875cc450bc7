"""The whole distribution's text, indexed once per run to find blocks that moved to another file."""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

from prstack.match.text import decode, trivial

_QUOTES = bytes.maketrans(b"'", b'"')
_SPACES = b" \t\f\v\r"
INDEX_MAX_BYTES = 8_000_000
"""Files larger than this (generated tables, vendored data) are not searched for moved blocks:
moved code lands in code modules, and indexing them would double the cost of the whole index."""


def key(line: str) -> bytes:
    """A line as the index holds it: loosely normalised, UTF-8 (stray-byte escapes kept apart).
    Normalised as bytes (see `loose_keys`: the bytes it drops or maps are ASCII, in no other
    character's UTF-8, nor in a stray byte's escape)."""
    return line.encode("utf-8", "surrogatepass").translate(_QUOTES, _SPACES)


def loose_keys(data: bytes) -> bytes:
    """`key` of every line of a file, joined by newlines (no final one), computed on the bytes.

    The characters the normalisation drops or maps are ASCII, which never occur inside a multi-byte
    UTF-8 sequence, so on valid UTF-8 this equals decoding, normalising and encoding each line. In
    invalid UTF-8, dropping a byte could join two stray bytes into a character: such files are
    first re-encoded as `key` encodes (each stray byte an escape that holds no ASCII byte).
    """
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if data.endswith(b"\n"):
        data = data[:-1]
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            data = data.decode("utf-8", "surrogateescape").encode("utf-8", "surrogatepass")
    return data.translate(_QUOTES, _SPACES)


class PackageIndex:
    """Every text file of the audited distribution, keyed by installed path.

    `load` is called at most once, on first use; files are indexed then, once per run.
    Lines are compared whitespace- and quote-insensitively, and trivial lines between a block's
    lines are skipped, so a block is found even when blank lines or formatting around it changed.
    The index is built with whole-text operations (no per-line Python work): every file's
    normalised lines end to end in one text, how often each line occurs, and the first file
    that holds it.
    """

    def __init__(self, load: Callable[[], Mapping[str, bytes]]) -> None:
        self._load = load
        self._data: Mapping[str, bytes] | None = None
        self._files: dict[str, list[str]] | None = None
        self._decoded: dict[str, list[str]] = {}
        self._text = b""
        """b"\\n" + every indexed file's keys (files sorted by path), one a line + b"\\n"."""
        self._starts: list[int] = []
        """Where each file's first line starts in `_text` (and, last, len(_text) + 1)."""
        self._paths: list[str] = []
        self._count: Counter[bytes] | None = None
        """Key -> how many lines have it; in the order keys first occur."""
        self._rank: dict[bytes, int] = {}
        """Key -> its place in that order."""
        self._known: list[int] = []
        """Per file: how many distinct keys occur in it or a file before it."""
        self._places: dict[tuple[bytes, ...], tuple[list[tuple[str, int]], Iterator[tuple[str, int]]]] = {}
        """A block's keys -> the places found so far (no file left out), and the scan that finds more."""

    @property
    def data(self) -> Mapping[str, bytes]:
        """Installed path -> the file's bytes (loaded once)."""
        if self._data is None:
            self._data = self._load()
        return self._data

    def held(self, path: str) -> bytes | None:
        """The file's bytes if the index has already read them (never reads)."""
        return self._data.get(path) if self._data is not None else None

    def lines(self, path: str) -> list[str]:
        """One file's lines (decoded once, on first ask; no other file is decoded)."""
        got = self._decoded.get(path)
        if got is None:
            got = self._decoded[path] = decode(self.data.get(path, b""))
        return got

    @property
    def files(self) -> dict[str, list[str]]:
        """Installed path -> the file's lines."""
        if self._files is None:
            self._files = {path: decode(data) for path, data in self.data.items()}
        return self._files

    def _index(self) -> Counter[bytes]:
        if self._count is None:
            count: Counter[bytes] = Counter()
            parts, known, paths, starts = [], [], [], []
            at = 1
            for path in sorted(self.data):
                data = self.data[path]
                if len(data) > INDEX_MAX_BYTES or not data:
                    continue  # (an empty file has no lines)
                part = loose_keys(data)
                count.update(part.split(b"\n"))
                known.append(len(count))
                paths.append(path)
                starts.append(at)
                parts.append(part)
                at += len(part) + 1
            starts.append(at)
            self._text = b"\n".join([b"", *parts, b""])  # (one copy of the whole text)
            self._known, self._paths, self._starts = known, paths, starts
            self._rank = dict(zip(count, range(len(count)), strict=True))
            self._count = count  # (last: the index is complete once this is set)
        return self._count

    def _first_file(self, k: bytes) -> int:
        return bisect.bisect_right(self._known, self._rank[k])

    def find_block(
        self, block: Sequence[str], *, exclude: str | None = None
    ) -> tuple[str, int] | None:
        """Where the non-trivial lines of `block` occur, in order and contiguous (trivial lines
        between them ignored), in a file other than `exclude`: (installed path, 1-based line).
        The first such place, in path order then line order."""
        return next(self.find_all(block, exclude=exclude), None)

    def find_all(
        self, block: Sequence[str], *, exclude: str | Collection[str] | None = None
    ) -> Iterator[tuple[str, int]]:
        """Every place `find_block` could answer, in path order then line order (`exclude`:
        a file, or files, to leave out). The places of a block are found once per run, as far as
        they are asked for: the same block is often asked again (boilerplate that many hunks add,
        each leaving out its own file)."""
        if isinstance(exclude, str):
            exclude = (exclude,)
        lines = [line for line in block if not trivial(line)]
        if not lines:
            return iter(())
        count = self._index()
        keys = []
        for line in lines:  # (most blocks asked for hold a line no file holds: keyed up to that one)
            k = key(line)
            if k not in count:
                return iter(())
            keys.append(k)
        wanted = tuple(keys)
        places = self._places.get(wanted)
        if places is None:
            places = self._places[wanted] = ([], self._find_all(list(wanted)))
        return self._replay(places, exclude)

    @staticmethod
    def _replay(places: tuple[list[tuple[str, int]], Iterator[tuple[str, int]]],
                exclude: Collection[str] | None) -> Iterator[tuple[str, int]]:
        """The places of one block, those already found first, then found on as they are asked for."""
        found, more = places
        i = 0
        while True:
            if i == len(found):
                got = next(more, None)
                if got is None:
                    return
                found.append(got)
            path, line = found[i]
            i += 1
            if not exclude or path not in exclude:
                yield path, line

    def _find_all(self, wanted: list[bytes]) -> Iterator[tuple[str, int]]:
        assert self._count is not None
        count = self._count
        if any(_trivial(k) for k in wanted):
            # A line trivial only once normalised can stand between others: walk from the
            # rarest line, through the whole package.
            probe = min(range(len(wanted)), key=lambda i: count[wanted[i]])
            return self._scan(wanted, probe, 0)
        # Otherwise the block is the run of non-trivial lines around any of its lines, and lies in
        # a file that holds all of them: look from the last of their first files, where the line
        # that first occurs there occurs each time.
        firsts = [self._first_file(k) for k in wanted]
        frm = max(firsts)
        probe = min((i for i, f in enumerate(firsts) if f == frm), key=lambda i: count[wanted[i]])
        return self._scan(wanted, probe, frm)

    def _scan(self, wanted: list[bytes], probe: int, frm: int) -> Iterator[tuple[str, int]]:
        """Walk from each occurrence of wanted[probe] in files `frm` on (all of its occurrences)."""
        assert self._count is not None
        text, starts = self._text, self._starts
        needle = b"\n" + wanted[probe] + b"\n"
        left = self._count[wanted[probe]]
        at = text.find(needle, starts[frm] - 1)
        f = -1
        last: tuple[str, int] | None = None
        while left and at >= 0:
            left -= 1
            if f < 0 or not starts[f] <= at + 1 < starts[f + 1]:
                f = bisect.bisect_right(starts, at + 1) - 1
            lo = starts[f]
            start = _walk(text, lo, starts[f + 1] - 1, at + 1, wanted, probe)
            if start is not None:
                found = (self._paths[f], text.count(b"\n", lo, start) + 1)
                if found != last:
                    last = found
                    yield found
            at = text.find(needle, at + 1) if left else -1


def _trivial(k: bytes) -> bool:
    return trivial(k.decode("utf-8", "surrogatepass"))


def _walk(text: bytes, lo: int, hi: int, at: int, wanted: list[bytes], probe: int) -> int | None:
    """With wanted[probe] the line starting at offset `at` of `text`, in a file whose lines lie
    in text[lo:hi] (newline-separated), the offset where wanted[0]'s line starts if all of `wanted`
    is there, in order, with only trivial lines between; else None. Reads only the lines it
    walks over."""
    s = at
    for k in range(probe - 1, -1, -1):
        while True:
            if s <= lo:
                return None
            s = text.rfind(b"\n", lo - 1, s - 1) + 1
            line = text[s : text.find(b"\n", s)]
            if line == wanted[k]:
                break
            if not _trivial(line):
                return None
    start = s
    e = text.find(b"\n", at)
    for k in range(probe + 1, len(wanted)):
        while True:
            if e >= hi:
                return None
            nxt = text.find(b"\n", e + 1)
            line = text[e + 1 : nxt]
            e = nxt
            if line == wanted[k]:
                break
            if not _trivial(line):
                return None
    return start
