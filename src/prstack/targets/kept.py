"""What was worked out from a file's bytes (its SHA-256, its text), kept by the file's identity: the same
file hard-linked into several site directories (copies of one environment) is read once in a process."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")

FileId = tuple[int, int, int, int, int]
"""(device, inode, size, modification ns, change ns): while these hold, so do the file's bytes
(a write sets the modification time, any other change the change time)."""

RACY_NS = 2_000_000_000
"""A file modified this recently (ns) is not kept: a second write within the clock's tick could
leave its times as they were."""


class KeptByIdentity(Generic[V]):
    """Values of regular files by identity, up to `budget` (each counting `cost(value)`), then all
    forgotten at once."""

    def __init__(self, budget: int, cost: Callable[[V], int]) -> None:
        self._kept: dict[FileId, V] = {}
        self._budget, self._cost, self._spent = budget, cost, 0

    def get(self, info: os.stat_result) -> V | None:
        """The value kept for the file `info` describes (its status now), if any."""
        return self._kept.get(_file_id(info)) if stat.S_ISREG(info.st_mode) else None

    def keep(self, info: os.stat_result, value: V) -> None:
        """Keep `value`, worked out from the bytes of the file `info` described as they were read."""
        cost = self._cost(value)
        if time.time_ns() - info.st_mtime_ns <= RACY_NS or cost > self._budget:
            return
        if self._spent + cost > self._budget:
            self._kept.clear()
            self._spent = 0
        self._kept[_file_id(info)] = value
        self._spent += cost


def _file_id(info: os.stat_result) -> FileId:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns
