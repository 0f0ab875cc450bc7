"""An overall deadline for one blocking network call: a server that drip-feeds its answer (a byte
every half second resets any per-read time-out) cannot hold the run past it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class Overdue(TimeoutError):
    """The call had not returned when its deadline passed (it is left to finish on its own)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within {seconds:g} s")
        self.seconds = seconds


def within(seconds: float, call: Callable[[], T]) -> T:
    """call()'s result, or its exception, when it returns within `seconds`; else Overdue.

    The call runs in a daemon thread so that the caller can stop waiting: a thread blocked on a
    socket cannot be interrupted, and a daemon thread never holds the process at exit."""
    result: list[T] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as exc:  # handed to the caller as it is
            error.append(exc)

    worker = threading.Thread(target=run, name="prstack-request", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise Overdue(seconds)
    if error:
        raise error[0]
    return result[0]
