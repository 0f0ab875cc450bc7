"""Git's quoting of file names in diffs, undone: the one place that reads it."""

from __future__ import annotations

import re

_C_ESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b'"': 34, b"\\": 92}
_ESCAPE = re.compile(rb"\\(?:([0-7]{3})|(.))", re.DOTALL)


def unquote_git_bytes(raw: bytes) -> bytes:
    """A file name as git writes it: b'"a\\tb\\303\\251.py"' (C-quoted, octal UTF-8 bytes) -> its bytes;
    an unquoted name is returned as it is."""
    if len(raw) < 2 or not (raw.startswith(b'"') and raw.endswith(b'"')):
        return raw

    def one(m: re.Match[bytes]) -> bytes:
        if m.group(1):
            return bytes([int(m.group(1), 8)])
        code = _C_ESCAPES.get(m.group(2))
        return bytes([code]) if code is not None else m.group(0)

    return _ESCAPE.sub(one, raw[1:-1])


def unquote_git(name: str) -> str:
    """`unquote_git_bytes` of a name read as text (undecodable bytes kept as surrogates)."""
    return unquote_git_bytes(name.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")
