"""Files at revisions from one long-lived `git cat-file --batch` (a process per file costs more than the work)."""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from prstack.sources.git.runner import Env, spawn

ASK_CHUNK = 1 << 12
"""Bytes of names written to git at a time: well under what a pipe holds (64 KB on Linux, 16 KB on
macOS), so the write never waits on git, whose answers are read before the next write."""


class _Died:
    """git stopped answering."""


DIED = _Died()


class BlobReader:
    """Files at revisions from one long-lived `git cat-file --batch`: `prefetch` reads a list of
    them in a few round trips (a round trip per file costs more than the reading), `read` returns
    a prefetched answer or asks for the file alone. (Reader threads that read ahead while
    matching went: on the main-path bench they saved 6%, see bench/README.md.)"""

    def __init__(self, repo: Path, env: Env = None) -> None:
        self._repo = repo
        self._env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._uses: dict[tuple[str, str], int] = {}
        """Reads still expected of each prefetched file (its bytes are dropped after the last)."""
        self._data: dict[tuple[str, str], bytes | None] = {}

    def _process(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            self._proc = spawn(self._repo, ["cat-file", "--batch"], self._env)
        return self._proc

    def read_object(self, sha: str) -> bytes | None:
        """A blob's bytes by its id, or None."""
        return self._ask(sha)

    def read(self, rev: str, path: str) -> bytes | None:
        """The file's bytes at `rev`, or None when it is not a file there."""
        key = (rev, path)
        uses = self._uses.get(key, 0)
        if uses > 0:
            if uses == 1:
                del self._uses[key]
                return self._data.pop(key)
            self._uses[key] = uses - 1
            return self._data[key]
        return None if "\n" in path else self._ask(_object_name(rev, path))

    def _ask(self, name: str) -> bytes | None:
        found = self._ask_all([name])
        return None if found is None else found[0]

    def prefetch(self, keys: Iterable[tuple[str, str]]) -> None:
        """Read these files now, in a few round trips to the long-lived git; each is kept until
        `read` has been asked for it as many times as it is listed. A git that stops (a partial
        clone that may not fetch) leaves them to `read`, which asks for each."""
        counts: dict[tuple[str, str], int] = {}
        for key in keys:
            if "\n" not in key[1]:
                counts[key] = counts.get(key, 0) + 1
        wanted = [key for key in counts if key not in self._uses]
        if wanted:
            found = self._ask_all([_object_name(rev, path) for rev, path in wanted])
            if found is None:
                return
            self._data.update(zip(wanted, found, strict=True))
        for key, count in counts.items():
            self._uses[key] = self._uses.get(key, 0) + count

    def _ask_all(self, names: list[str]) -> list[bytes | None] | None:
        """The long-lived git's answers to `names`, asked in chunks its pipe takes whole, each
        chunk's answers read before the next is written (so neither side waits on the other);
        None when git stopped answering."""
        proc = self._process()
        assert proc.stdin is not None
        found: list[bytes | None] = []
        at = 0
        while at < len(names):
            chunk: list[bytes] = []
            size = 0
            while at < len(names) and (not chunk or size + len(names[at]) < ASK_CHUNK):  # (at least one name)
                chunk.append(f"{names[at]}\n".encode("utf-8", "surrogateescape"))
                size += len(chunk[-1])
                at += 1
            with contextlib.suppress(OSError):  # git died: _answer says so
                proc.stdin.write(b"".join(chunk))
                proc.stdin.flush()
            for _ in chunk:
                got = _answer(proc)
                if isinstance(got, _Died):
                    self._proc = None
                    _end(proc)
                    return None
                found.append(got)
        return found

    def close(self) -> None:
        """Stop the long-lived git."""
        proc, self._proc = self._proc, None
        if proc is not None:
            _end(proc)


_OBJECT_ID = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _object_name(rev: str, path: str) -> str:
    """git's name of the file at (rev, path); (blob id, "") names the blob itself."""
    return f"{rev}:{path}" if path else rev


def _answer(proc: subprocess.Popen[bytes]) -> bytes | _Died | None:
    """The next answer of a `git cat-file --batch`; `DIED` when git stopped."""
    assert proc.stdout is not None
    header = proc.stdout.readline()
    if not header:
        return DIED
    parts = header.split()
    if len(parts) == 3 and _OBJECT_ID.fullmatch(parts[0]) and parts[2].isdigit():  # then content, newline
        body = proc.stdout.read(int(parts[2]) + 1)[:-1]
        return body if parts[1] == b"blob" else None
    return None  # "<name> missing" / "ambiguous"


def _end(proc: subprocess.Popen[bytes]) -> None:
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    proc.wait()
