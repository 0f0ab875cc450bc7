"""Line-level text helpers of the matcher: decoding, named normalisations, trivial lines, markers."""

from __future__ import annotations

import bisect
import hashlib
import re
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import accumulate
from typing import Final

Normaliser = Callable[[str], str]

_WS: Final = re.compile(r"\s+")


def decode(data: bytes) -> list[str]:
    """Bytes to lines without endings; CRLF and CR tolerated, undecodable bytes kept as escapes.

    A final line ending does not make an extra empty line; an empty file has no lines.
    """
    text = data.decode("utf-8", "surrogateescape")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


class LazyLines:
    """A big file's lines, decoded only where asked: the lines `decode` gives, without decoding
    (and holding) the whole file to look at a few of them.

    Newlines are counted per chunk of bytes once; a line's start is found from its chunk. A range
    of lines decodes alone exactly as within the whole file: it is cut at newlines, and a newline
    byte is never part of a multi-byte sequence (nor of a run of undecodable bytes).
    """

    CHUNK = 1 << 15

    def __init__(self, data: bytes) -> None:
        if b"\r" in data:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        self._data = data
        step = self.CHUNK
        self._newlines = list(accumulate(
            (data.count(b"\n", at, at + step) for at in range(0, len(data), step)), initial=0))
        """Newlines before each chunk (and, last, in all)."""
        self.count = self._newlines[-1] + (1 if data and not data.endswith(b"\n") else 0)
        """How many lines `decode` gives."""

    def _start(self, k: int) -> int:
        """Offset of the byte after the k-th newline (k >= 1); len(data) + 1 when there is none."""
        c = bisect.bisect_left(self._newlines, k) - 1
        if c + 1 >= len(self._newlines):
            return len(self._data) + 1
        at = c * self.CHUNK
        piece = self._data[at : at + self.CHUNK]
        return at + len(piece) - len(piece.split(b"\n", k - self._newlines[c])[-1])

    def get(self, a: int, b: int) -> list[str]:
        """Lines [a, b) (0 <= a), cut to the file's end."""
        b = min(b, self.count)
        if a >= b:
            return []
        start = self._start(a) if a else 0
        end = min(self._start(b) - 1, len(self._data))
        return self._data[start:end].decode("utf-8", "surrogateescape").split("\n")

    def all(self) -> list[str]:
        return decode(self._data)


def same_text(a: bytes, b: bytes) -> bool:
    """True when two files hold the same text once line endings are normalised."""
    if a == b:
        return True
    if b"\r" not in a and b"\r" not in b:
        return False
    return a.replace(b"\r\n", b"\n") == b.replace(b"\r\n", b"\n")


def same_file(a: bytes | None, b: bytes | None) -> bool:
    """`same_text` of two files where either may be absent (None): two absent files are the same."""
    return (a is None and b is None) or (a is not None and b is not None and same_text(a, b))


def clean(line: str) -> str:
    """A hunk line as the matcher compares it: without the CR a CRLF file leaves in the diff."""
    return line[:-1] if line.endswith("\r") else line


def _identity(line: str) -> str:
    return line


def _trailing(line: str) -> str:
    return line.rstrip()


ASCII_SPACE: Final = " \t\f\v\r"
"""The whitespace the whitespace level drops (other whitespace, like NBSP, stays)."""
_NO_WS: Final = str.maketrans("", "", ASCII_SPACE)
_SPACE_BYTES: Final = ASCII_SPACE.encode()
_QUOTE_BYTES: Final = bytes.maketrans(b"'", b'"')
_NO_WS_QUOTES: Final = str.maketrans({" ": None, "\t": None, "\f": None, "\v": None, "\r": None,
                                      "'": '"'})


def _whitespace(line: str) -> str:
    if line.isascii():  # (as in normalise_all: bytes translate, a table lookup per byte, is faster)
        return line.encode().translate(None, _SPACE_BYTES).decode()
    return line.translate(_NO_WS)


def _quotes(line: str) -> str:
    if line.isascii():
        return line.encode().translate(_QUOTE_BYTES, _SPACE_BYTES).decode()
    return line.translate(_NO_WS_QUOTES)


def normalise_all(lines: list[str], level: int) -> list[str]:
    """`LEVELS[level]` applied to every line at once (one pass over the joined text, C speed)."""
    if level == 0 or not lines:
        return lines
    if level == 1:
        return list(map(str.rstrip, lines))
    text = "\n".join(lines)
    try:  # (bytes translate: a table lookup per byte, no dict per character; the bytes it drops or
        # changes are ASCII, which no other character's UTF-8 holds, so the result is the same)
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # (lone surrogates: undecodable bytes of the file)
        return text.translate(_NO_WS if level == 2 else _NO_WS_QUOTES).split("\n")
    return data.translate(None if level == 2 else _QUOTE_BYTES, _SPACE_BYTES).decode("utf-8").split("\n")


LEVELS: Final[tuple[tuple[str | None, Normaliser], ...]] = (
    (None, _identity),
    ("trailing-space", _trailing),
    ("whitespace", _whitespace),
    ("quotes", _quotes),
)
"""Line normalisations from strictest to loosest, with the name evidence reports them by."""
LOOSEST: Final = len(LEVELS) - 1
REWRAPPED: Final = "rewrapped"

_TRIVIAL_WORDS: Final = frozenset(
    {"pass", "return", "return None", "else:", "try:", "finally:", "continue", "break",
     "...", '"""', "'''", "end", "fi", "done", "}", "{"}
)
_PUNCT_ONLY: Final = re.compile(r"[\s()\[\]{}:;,.]*")
_DECORATOR: Final = re.compile(r"@[\w.]+(\(\))?")


@lru_cache(maxsize=1 << 16)
def trivial(line: str) -> bool:
    """True for lines that say nothing on their own: blank, `pass`, `)`, `return`, a lone decorator."""
    s = line.strip()
    if len(s) > 12:
        return s[0] == "@" and _DECORATOR.fullmatch(s) is not None
    if not s or s[0] == "#":
        return True
    if s[0] == "@":  # (neither a word nor punctuation)
        return _DECORATOR.fullmatch(s) is not None
    return s in _TRIVIAL_WORDS or _PUNCT_ONLY.fullmatch(s) is not None


def blob_id(data: bytes, length: int = 40) -> str:
    """The git blob id of a file's bytes (`blob <len>\\0` + content), SHA-1 or, for an id
    `length` 64 long, SHA-256. The same bytes asked again (a file every patch of a series
    changes, judged for each) get the id worked out for them (see _BlobIds)."""
    return _blob_ids.of(data, 64 if length == 64 else 40)


def _hashed(data: bytes, length: int) -> str:
    digest = hashlib.sha256() if length == 64 else hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


BLOB_IDS_KEPT_BYTES = 16_000_000
"""How many bytes of files the blob ids kept for reuse may cover in all (the least recently used go)."""


class _BlobIds(threading.local):
    """The blob ids of the files hashed last in this thread, by content and id length, up to
    BLOB_IDS_KEPT_BYTES. Asked for the very object hashed before (a file held by the package
    index), the lookup costs no pass over the bytes: a bytes object keeps its hash, and a dict
    compares a key with itself by identity."""

    def __init__(self) -> None:
        self.by_data: dict[tuple[bytes, int], str] = {}
        self.size = 0

    def of(self, data: bytes, length: int) -> str:
        key = (data, length)
        got = self.by_data.pop(key, None)
        if got is None:
            got = _hashed(data, length)
            self.size += len(data)
            while self.size > BLOB_IDS_KEPT_BYTES and self.by_data:
                oldest = next(iter(self.by_data))
                self.size -= len(oldest[0])
                del self.by_data[oldest]
        self.by_data[key] = got  # (last: the most recently used)
        return got


_blob_ids = _BlobIds()


def names_blob(blob: str, data: bytes) -> bool:
    """Whether a diff's (possibly abbreviated, at least 7 digits) blob id names `data`'s blob."""
    return len(blob) >= 7 and blob_id(data, 64 if len(blob) == 64 else 40).startswith(blob)


def conflict_blocks(lines: Sequence[str]) -> list[tuple[int, int]]:
    """Spans [start, end] (0-based, inclusive) between `<<<<<<<` and `>>>>>>>` marker lines."""
    blocks: list[tuple[int, int]] = []
    start: int | None = None
    text = "\n".join(lines)
    i = at = 0
    for marker in _MARKER.finditer(text):  # (lines hold no newline: ^ is a line's start)
        i += text.count("\n", at, marker.start())
        at = marker.start()
        if marker.group() == "<<<<<<<":
            start = i
        else:
            blocks.append((start if start is not None else max(0, i - 1), i))
            start = None
    if start is not None:
        blocks.append((start, len(lines) - 1))
    return blocks


_MARKER: Final = re.compile(r"^(?:<<<<<<<|>>>>>>>)", re.MULTILINE)


def has_markers(data: bytes) -> bool:
    """Cheap pre-check before scanning lines for conflict markers."""
    # (a one-byte search runs at memory speed: most big files hold neither bracket)
    return (b"<" in data and b"<<<<<<<" in data) or (b">" in data and b">>>>>>>" in data)


_COMMA_CLOSE: Final = re.compile(r",(?=[)\]}])")


def wrap_pieces(lines: Sequence[str]) -> list[str]:
    """Lines reduced for re-wrap-insensitive comparison: no whitespace, one quote style, and no
    trailing comma before a closing bracket (the "magic trailing comma" a formatter adds)."""
    pieces = [_quotes(line) for line in lines]
    for i, piece in enumerate(pieces):
        piece = _COMMA_CLOSE.sub("", piece)
        if piece.endswith(","):
            nxt = next((p for p in pieces[i + 1 :] if p), "")
            if nxt[:1] in _CLOSERS:
                piece = piece[:-1]
        pieces[i] = piece
    return pieces


_CLOSERS: Final = (")", "]", "}")


def wrap_lines(loose: list[str]) -> tuple[list[str], list[str]]:
    """`wrap_pieces` of a whole file at once, from its lines at LEVELS[LOOSEST]: the pieces with
    only the commas before a closing bracket dropped, and the pieces as `wrap_pieces` gives them.
    (A window of the file is the second list's slice, except for its last non-empty piece, which
    sees no next piece in the window: that one is the first list's.)"""
    if not loose:
        return [], []
    closed = _COMMA_CLOSE.sub("", "\n".join(loose)).split("\n")
    pieces = closed[:]
    nxt = ""
    for i in range(len(loose) - 1, -1, -1):
        if nxt in _CLOSERS and closed[i].endswith(","):
            pieces[i] = closed[i][:-1]
        if loose[i]:
            nxt = loose[i][0]
    return closed, pieces

