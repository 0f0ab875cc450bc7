"""The one way prstack runs git: a process with the caller's environment on top of ours, its
failures as one-line prstack errors."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from prstack.errors import SourceError

READ_BUFFER = 1 << 20
"""Bytes read from a long-lived git at a time (and its pipe's size, where the system allows)."""

Env = Mapping[str, str] | None
"""Variables set for git on top of the process environment (auth, offline guards)."""


def environ(env: Env) -> dict[str, str] | None:
    return {**os.environ, **env} if env else None


def spawn(repo: Path, args: Sequence[str], env: Env, stdout: int | IO[bytes] = subprocess.PIPE,
          stderr: int | IO[bytes] = subprocess.DEVNULL, bufsize: int = READ_BUFFER) -> subprocess.Popen[bytes]:
    """A git process fed on stdin, answering on `stdout` (a pipe by default: cat-file reports
    missing objects there), its complaints to `stderr` (dropped by default)."""
    return subprocess.Popen(["git", "-C", str(repo), *args], stdin=subprocess.PIPE, stdout=stdout, stderr=stderr,
                            env=environ(env), bufsize=bufsize, pipesize=READ_BUFFER)


def run(repo: Path, args: Sequence[str], env: Env = None, stdin: bytes | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess[bytes]:
    """git run in `repo` with `stdin` fed, to its end (or `timeout`: subprocess.TimeoutExpired);
    the caller reads its exit code."""
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, env=environ(env),
                          timeout=timeout, check=False)


def run_git(repo: Path, args: Sequence[str], env: Env, stdin: bytes | None = None) -> bytes:
    """git's stdout for `args` run in `repo` with `stdin` fed; a failure is a SourceError."""
    done = run(repo, args, env, stdin)
    if done.returncode != 0:
        raise failed(args, f"in {repo}", done.stderr)
    return done.stdout


class Started:
    """git run in `repo` with `stdin` fed, started now, its output to a temporary file (git never
    waits on a reader): `output` waits for it, when the caller needs the answer, and reads it."""

    def __init__(self, repo: Path, args: Sequence[str], env: Env, stdin: bytes) -> None:
        self._repo, self._args = repo, list(args)
        self._out = tempfile.TemporaryFile(prefix="prstack-git-")  # noqa: SIM115 (closed by output)
        self._errors = tempfile.TemporaryFile(prefix="prstack-git-errors-")  # noqa: SIM115
        self._proc = spawn(repo, args, env, stdout=self._out, stderr=self._errors, bufsize=-1)
        assert self._proc.stdin is not None
        with contextlib.suppress(OSError):  # (a git that died says so when it is waited for)
            self._proc.stdin.write(stdin)
        self._proc.stdin.close()

    def output(self) -> bytes:
        """git's stdout (waits for git; once only); a failure is a SourceError, as `run_git`'s."""
        try:
            code = self._proc.wait()
            if code != 0:
                self._errors.seek(0)
                raise failed(self._args, f"in {self._repo}", self._errors.read())
            self._out.seek(0)
            return self._out.read()
        finally:
            self._out.close()
            self._errors.close()


def failed(args: Sequence[str], where: str, stderr: bytes | str) -> SourceError:
    """The one line a failed git command stands for: the command, where, git's own words."""
    said = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    command = " ".join(a for a in args[:4] if not a.startswith(("-c", "core.")))
    return SourceError(f"git {command} failed {where}: {said.strip()}".replace("\n", " "))
