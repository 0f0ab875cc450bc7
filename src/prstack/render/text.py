"""The one escaping of untrusted text (titles, bodies, file names, paths, file contents) before any renderer."""

from __future__ import annotations

import re
import unicodedata

from rich._emoji_codes import EMOJI
from rich.text import Text

_EMOJI_CODE = re.compile(r":([^\s:]+?)(-emoji|-text)?:")
_INVISIBLE = frozenset(
    "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff"
)
"""Bidi controls (which reorder what follows: 'Trojan Source') and zero-width characters."""
_ZWSP = "\u200b"
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069"
                     "\ufeff\ud800-\udfff]")


def _char(ch: str) -> str:
    """One character shown inert: a control as a visible escape (\\x1b, \\x9b, \\u202e), an
    undecodable byte (a lone surrogate of surrogateescape) as \\xNN, anything else as it is."""
    if ch == "\t" or " " <= ch < "\x7f":
        return ch
    if ch < " " or "\x7f" <= ch <= "\x9f":  # C0 (ESC, BEL, CR, LF...), DEL, C1 (U+009B CSI, U+009D OSC)
        return f"\\x{ord(ch):02x}"
    if ch in _INVISIBLE:
        return f"\\u{ord(ch):04x}"
    if "\udc80" <= ch <= "\udcff":
        return f"\\x{ord(ch) - 0xDC00:02x}"
    if unicodedata.category(ch) == "Cs":
        return f"\\u{ord(ch):04x}"
    return ch


def _defuse_emoji(match: re.Match[str]) -> str:
    """`:smile:` kept as typed: a zero-width space after the colon stops rich's emoji replacement."""
    name = match.group(1).lower()
    return f":{_ZWSP}{match.group(1)}{match.group(2) or ''}:" if name in EMOJI else match.group(0)


def clean(value: str | None) -> str:
    """Untrusted text made inert for any renderer, and still readable: C0 controls (ESC, BEL, CR, LF),
    DEL, C1 controls (U+009B CSI, U+009D OSC), bidi and zero-width characters shown as escapes
    (a file name 'a\\nb.py' as git quotes it); undecodable bytes as \\xNN; rich emoji codes
    (`:smile:`) defused. Only tabs stay as they are.

    Rich markup needs no escaping here: `safe` wraps the result in a Text, which is never parsed.
    """
    if not value:
        return ""
    text = _UNSAFE.sub(lambda m: _char(m.group(0)), value)
    return _EMOJI_CODE.sub(_defuse_emoji, text) if ":" in text else text


def safe(value: str | None, style: str = "") -> Text:
    """Untrusted text as a rich Text: never parsed as markup, controls and emoji codes neutralised."""
    return Text(clean(value), style=style)
