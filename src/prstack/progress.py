"""Progress of long work: library code reports its steps here; the CLI decides whether to show them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Protocol


class Progress(Protocol):
    """Receives the steps of long work (reading the stack, diffing, matching N of M files, fetching)."""

    def step(self, label: str, done: int = 0, total: int | None = None) -> None:
        """`label` is under way; `done` of `total` units finished (total None: size unknown)."""


class _Silent:
    def step(self, label: str, done: int = 0, total: int | None = None) -> None:
        return None


_listeners: list[Progress] = [_Silent()]  # the last one listens; a list, so threads see it too


def step(label: str, done: int = 0, total: int | None = None) -> None:
    """Report a step to whoever listens (nobody by default: then it costs a call)."""
    _listeners[-1].step(label, done, total)


@contextlib.contextmanager
def reporting_to(progress: Progress) -> Iterator[None]:
    """Send the steps reported while this block runs (from any thread) to `progress`."""
    _listeners.append(progress)
    try:
        yield
    finally:
        _listeners.remove(progress)
