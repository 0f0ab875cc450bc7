"""A tar's member headers read straight from its 512-byte blocks: name, kind, where the data starts, its
size, the link target; PAX records and GNU long names applied, checksums checked. No member's data is
read (the standard library's TarInfo objects cost seconds for the tens of thousands of an image layer).

Numbers are read strictly, as Go's archive/tar reads them: a size that is negative, not a number or past
MEMBER_CAP is TarDamaged, so every header moves the reader forward (tarfile loops on a negative PAX size)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

BLOCK = 512
EXTENDED_CAP = 1 << 20
"""The longest PAX record block or GNU long name read (bytes)."""
MEMBER_CAP = 1 << 40
"""The largest member size believed (bytes); a header saying more is damaged or hostile."""
_DECIMAL = re.compile(r"[0-9]+")
_ZERO = bytes(BLOCK)
_KINDS = {b"0": "file", b"\0": "file", b"7": "file", b"5": "dir", b"2": "symlink", b"1": "hardlink"}
_POSIX_MAGIC = b"ustar\x00"
_LINKS = (b"1", b"2")
AHEAD = 3 * 512
"""Bytes to read at once where a header is wanted, in a tar that costs nothing to seek back in (what
follows a header is often the next header wanted)."""
_NO_DATA = (b"1", b"2", b"3", b"4", b"5", b"6", b"\0", b"0")


class TarDamaged(Exception):
    """The tar is cut short or holds a block that is no tar header (the message says which)."""


@dataclass(frozen=True, slots=True)
class Header:
    name: str
    kind: str
    """'file', 'dir', 'symlink', 'hardlink' or 'other' (devices, FIFOs, sparse files)."""
    offset: int
    """Where the member's data starts in the tar."""
    size: int
    link: str
    """A link's target ('' for other kinds)."""


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _field(raw: bytes) -> bytes:
    end = raw.find(b"\0")
    return raw if end < 0 else raw[:end]


def _number(raw: bytes, at: int) -> int:
    """A header's numeric field: octal digits, or GNU base-256 (for sizes of 8 GiB and more); never negative."""
    if raw[:1] and raw[0] & 0x80:
        if raw[0] != 0x80:
            raise TarDamaged(f"not a readable tar (a negative number in the header at byte {at})")
        return int.from_bytes(raw[1:], "big")
    digits = raw.split(b"\0", 1)[0].strip(b" ")
    if not digits:
        return 0
    if not digits.isdigit():  # (ASCII digits only: int() would take a sign, spaces or underscores)
        raise TarDamaged(f"not a readable tar (no tar header at byte {at})")
    try:
        return int(digits, 8)
    except ValueError:  # (an 8 or a 9)
        raise TarDamaged(f"not a readable tar (no tar header at byte {at})") from None


def _size(value: int | str, at: int) -> int:
    """A member's size as a header or a PAX record gives it, refused when negative, not a number or too big."""
    if isinstance(value, str):
        if _DECIMAL.fullmatch(value) is None or len(value) > 20:
            raise TarDamaged(f"not a readable tar (a PAX size of {value[:40]!r} at byte {at})")
        value = int(value)
    if value > MEMBER_CAP:
        raise TarDamaged(f"not a readable tar (a member size of {value} bytes at byte {at}, past any layer)")
    return value


def _checked(block: bytes, at: int) -> None:
    stored = _number(block[148:156], at)
    unsigned = 256 + sum(block) - sum(block[148:156])
    if stored != unsigned:
        signed = unsigned - 256 * sum(1 for b in block if b > 127) + 256 * sum(1 for b in block[148:156] if b > 127)
        if stored != signed:
            raise TarDamaged(f"not a readable tar (a bad header checksum at byte {at})")


def _pax(data: bytes, at: int) -> dict[str, str]:
    """The records of a PAX extended header ('LENGTH key=value\\n' each)."""
    out: dict[str, str] = {}
    pos = 0
    while pos < len(data) and data[pos] != 0:  # (NUL padding ends the records)
        space = data.find(b" ", pos)
        try:
            length = int(data[pos:space]) if space > pos else 0
        except ValueError:
            length = 0
        record = data[pos : pos + length]
        if length <= space - pos or pos + length > len(data) or not record.endswith(b"\n"):
            raise TarDamaged(f"not a readable tar (a damaged PAX header at byte {at})")
        key, _, value = record[space - pos + 1 : -1].partition(b"=")
        out[_text(key)] = _text(value)
        pos += length
    return out


class _Ahead:
    """A tar's bytes by position, read `ahead` bytes at once: a PAX header, its records and the header
    they describe, or a small file's header and the next one, are one read."""

    def __init__(self, stream: IO[bytes], ahead: int) -> None:
        self._stream, self._ahead, self._data, self._at = stream, ahead, b"", 0

    def read(self, pos: int, size: int) -> bytes:
        start = pos - self._at
        if start >= 0 and start + size <= len(self._data):
            return self._data[start : start + size]
        self._stream.seek(pos)
        self._data, self._at = self._stream.read(max(size, self._ahead)), pos
        return self._data[:size]


def _extended(tar: _Ahead, at: int, size: int) -> bytes:
    if size > EXTENDED_CAP:
        raise TarDamaged(f"not a readable tar (an extended header of {size} bytes at byte {at})")
    data = tar.read(at, size)
    if len(data) < size:
        raise TarDamaged("truncated (its tar stops inside an extended header)")
    return data


def headers(stream: IO[bytes], ahead: int = BLOCK) -> Iterator[Header]:
    """Every member's header, in order, up to the end-of-archive block; TarDamaged on a cut or a
    block that is no header. `ahead`: bytes read at once (AHEAD where seeking back costs nothing: the
    stream is left past the member's data start, where a reader of the data seeks back)."""
    tar = _Ahead(stream, ahead)
    pos = 0
    pax: dict[str, str] = {}
    long_name = long_link = None
    while True:
        block = tar.read(pos, BLOCK)
        if len(block) < BLOCK:
            raise TarDamaged("truncated: its tar stops without the end-of-archive blocks")
        if block == _ZERO:
            return
        _checked(block, pos)
        kind_byte = block[156:157]
        size = _size(_number(block[124:136], pos), pos)
        data_at = pos + BLOCK
        if kind_byte in (b"x", b"g", b"L", b"K"):
            data = _extended(tar, data_at, size)
            if kind_byte == b"x":
                pax = _pax(data, pos)
            elif kind_byte == b"L":
                long_name = _text(_field(data))
            elif kind_byte == b"K":
                long_link = _text(_field(data))
            pos = data_at + -(-size // BLOCK) * BLOCK
            continue
        name = pax.get("path") or long_name
        if name is None:
            name = _text(block[0:100].split(b"\0", 1)[0])
            if block[257:263] == _POSIX_MAGIC and block[345] != 0:  # (a ustar prefix)
                name = _text(block[345:500].split(b"\0", 1)[0]) + "/" + name
        if "size" in pax:
            size = _size(pax["size"], pos)
        kind = _KINDS.get(kind_byte, "other")
        if kind == "file" and name.endswith("/"):  # (an old tar's folder)
            kind = "dir"
        if kind != "file" and kind_byte in _NO_DATA:  # (as tarfile: only files and unknown kinds skip data)
            size = 0
        link = ""
        if kind_byte in _LINKS:
            link = pax.get("linkpath") or long_link or _text(block[157:257].split(b"\0", 1)[0])
        yield Header(name, kind, data_at, size, link)
        pos = data_at + -(-size // BLOCK) * BLOCK
        pax, long_name, long_link = {}, None, None
