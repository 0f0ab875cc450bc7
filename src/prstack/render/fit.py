"""Text made to fit a width without losing what matters: a path keeps its file name, a title its start."""

from __future__ import annotations

import textwrap

from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

ELLIPSIS = "…"


def shorten_middle(path: str, width: int) -> str:
    """`path` within `width` cells, its middle replaced by "…" and its file name kept whole
    ("src/…/runner.py"); a file name wider than `width` is kept whole all the same."""
    if cell_len(path) <= width:
        return path
    head, sep, name = path.rpartition("/")
    if not sep:
        return path
    room = width - cell_len(name) - len(ELLIPSIS) - 1  # "…/" before the name
    if room <= 0:
        return f"{ELLIPSIS}/{name}"
    return f"{_cut(head, room)}{ELLIPSIS}/{name}"


def _cut(text: str, width: int) -> str:
    """The first `width` cells of `text` (a wide character that would straddle the edge is dropped)."""
    out = ""
    for ch in text:
        if cell_len(out + ch) > width:
            break
        out += ch
    return out


def wrapped(text: str, width: int, lines: int) -> list[str]:
    """`text` wrapped at `width` cells into at most `lines` lines, the last ending in "…" when
    something was left out."""
    width = max(width, 2)
    chunks = textwrap.wrap(text, width=width, break_long_words=True, break_on_hyphens=False) or [""]
    chunks = [c if cell_len(c) <= width else set_cell_size(c, width) for c in chunks]
    if len(chunks) <= lines:
        return chunks
    kept = chunks[:lines]
    last = kept[-1]
    kept[-1] = (last if cell_len(last) < width else _cut(last, width - 1)) + ELLIPSIS
    return kept


class Unwrapped:
    """Lines printed whole, never wrapped nor cut, however narrow the terminal: commands to copy and
    paths (the terminal folds them, and a copy of the line is the whole command). The CLI prints
    with `crop=False` so that rich keeps them too."""

    def __init__(self, *lines: Text) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.lines:
            yield from line.render(console)
            yield Segment.line()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((line.cell_len for line in self.lines), default=0)
        return Measurement(widest, widest)
