"""The sha256 of byte ranges of files the caller holds open, computed in a process of its own:

    python -I -S blobhash.py PARENT_PID FD:START:LENGTH ...

prints one line a range, in order: `sha256:HEX`, or `! WHY` when the range cannot be read whole. It
stops when its parent is gone. The standard library only: it runs without site-packages.

Apart from the audit, hashing a blob takes a core of its own. In a thread of the audit's process it
would wait for the interpreter's lock after every chunk read and hashed while the audit runs Python
(up to the 5 ms switch interval each time), and so crawl while the audit reads the image's metadata."""

from __future__ import annotations

import hashlib
import mmap
import os
import signal
import sys

WINDOW = 16 << 20
"""Bytes of the file mapped and hashed at a time (hashed where the page cache holds them, never copied)."""
CHUNK = 1 << 20
"""Bytes read and hashed at a time where a file cannot be mapped (into one buffer, reused)."""


def sha256_of(fd: int, start: int, length: int, parent: int) -> str:
    """`sha256:HEX` of `length` bytes of the open file `fd` from `start`; `! WHY` when they cannot be read.

    Mapped: a file cut short while it is hashed ends this process (SIGBUS), its answer missing."""
    if os.fstat(fd).st_size < start + length:
        return "! the file ends inside it"
    try:
        return _mapped(fd, (start, start + length), parent)
    except (OSError, ValueError):  # (a file that cannot be mapped: read)
        return _read(fd, (start, start + length), parent)


def _mapped(fd: int, span: tuple[int, int], parent: int) -> str:
    digest = hashlib.sha256()
    at, end = span
    while at < end:
        _still_asked(parent)
        base = at - at % mmap.ALLOCATIONGRANULARITY
        size = min(WINDOW, end - base)
        with mmap.mmap(fd, size, access=mmap.ACCESS_READ, offset=base) as window, memoryview(window) as view:
            digest.update(view[at - base : size])
        at = base + size
    return "sha256:" + digest.hexdigest()


def _read(fd: int, span: tuple[int, int], parent: int) -> str:
    digest = hashlib.sha256()
    buffer = memoryview(bytearray(CHUNK))
    at, end = span
    while at < end:
        _still_asked(parent)
        n = os.preadv(fd, [buffer[: min(CHUNK, end - at)]], at)
        if n == 0:
            return "! the file ends inside it"
        digest.update(buffer[:n])
        at += n
    return "sha256:" + digest.hexdigest()


def _still_asked(parent: int) -> None:
    if os.getppid() != parent:  # (the audit is gone: nobody waits for the answer)
        raise SystemExit(1)


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (Ctrl-C is the audit's to handle; it ends this process)
    parent = int(argv[0])
    for job in argv[1:]:
        fd, start, length = (int(part) for part in job.split(":"))
        try:
            line = sha256_of(fd, start, length, parent)
        except OSError as exc:
            line = f"! {exc.strerror or exc}"
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
