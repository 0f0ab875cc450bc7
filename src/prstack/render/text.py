"""Making untrusted text (titles, paths, diff lines from GitHub) safe to show in a terminal."""

from __future__ import annotations

from rich.control import strip_control_codes
from rich.text import Text


def clean(value: str | None) -> str:
    """Drop terminal control codes (ESC, BEL, backspace...) and other C0 controls but tab."""
    if value is None:
        return ""
    value = strip_control_codes(value)
    return "".join(ch if ch == "\t" or ch >= " " else "\N{REPLACEMENT CHARACTER}" for ch in value)


def safe(value: str | None, style: str = "") -> Text:
    """Untrusted text as a rich Text: never parsed as markup, control codes removed."""
    return Text(clean(value), style=style)
