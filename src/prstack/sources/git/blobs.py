"""Files at revisions from one long-lived `git cat-file --batch` (a process per file costs more than the work)."""

from __future__ import annotations

import contextlib
import re
import subprocess
import threading
from collections.abc import Iterable
from pathlib import Path

from prstack.sources.git.runner import Env, spawn


class _Died:
    """git stopped answering."""


DIED = _Died()


class BlobReader:
    """Files at revisions from one long-lived `git cat-file --batch`: `prefetch` asks it for a
    list of them at once (a round trip per file costs more than the reading), `read` returns a
    prefetched answer or asks it for one. (Reader threads that read ahead while
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
        proc = self._process()
        assert proc.stdin is not None
        with contextlib.suppress(OSError):  # git died: _answer says so
            proc.stdin.write(f"{name}\n".encode("utf-8", "surrogateescape"))
            proc.stdin.flush()
        got = _answer(proc)
        if isinstance(got, _Died):
            self._proc = None
            _end(proc)
            return None
        return got

    def prefetch(self, keys: Iterable[tuple[str, str]]) -> None:
        """Read these files now, from one git; each is kept until `read` has been asked for it as
        many times as it is listed. A git that fails (a partial clone that may not fetch) leaves
        them to `read`, which asks for each."""
        counts: dict[tuple[str, str], int] = {}
        for key in keys:
            if "\n" not in key[1]:
                counts[key] = counts.get(key, 0) + 1
        wanted = [key for key in counts if key not in self._uses]
        if wanted:
            names = "".join(f"{_object_name(rev, path)}\n" for rev, path in wanted)
            found = self._ask_all(names.encode("utf-8", "surrogateescape"), len(wanted))
            if len(found) < len(wanted):
                return
            self._data.update(zip(wanted, found, strict=True))
        for key, count in counts.items():
            self._uses[key] = self._uses.get(key, 0) + count

    def _ask_all(self, names: bytes, count: int) -> list[bytes | None]:
        """The answers to `count` names at once from the long-lived git (fed from a thread, so
        neither side waits on a full pipe); fewer when git stopped answering."""
        proc = self._process()
        stdin = proc.stdin
        assert stdin is not None

        def feed() -> None:
            with contextlib.suppress(OSError):  # git died: _answer says so
                stdin.write(names)
                stdin.flush()

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        found: list[bytes | None] = []
        while len(found) < count:
            got = _answer(proc)
            if isinstance(got, _Died):
                self._proc = None
                _end(proc)
                break
            found.append(got)
        feeder.join()
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
