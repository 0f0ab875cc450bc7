"""A module of forty numbered lines to carry changes across releases, and edits of some of its lines."""

from __future__ import annotations

BASE = [f"value_{i} = {i}\n" for i in range(1, 41)]


def text_of(lines: list[str]) -> str:
    return "".join(lines)


def edited(lines: list[str], **changes: str) -> list[str]:
    """`lines` with line N replaced where `lN="..."` is given."""
    out = list(lines)
    for name, new in changes.items():
        out[int(name.removeprefix("l")) - 1] = new
    return out
