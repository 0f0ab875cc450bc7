"""Numbered lines for the files of test repositories: each line names its file and number, so any
edit of a hunk is told apart from its neighbours."""

from __future__ import annotations


def text(name: str, edits: dict[int, str] | None = None, count: int = 40) -> str:
    """`count` lines "NAME 1", "NAME 2", ..., with the lines numbered in `edits` (from 1) replaced."""
    rows = [f"{name} {i}" for i in range(1, count + 1)]
    for at, new in (edits or {}).items():
        rows[at - 1] = new
    return "\n".join(rows) + "\n"
