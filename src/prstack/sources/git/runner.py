"""The one way prstack runs git: a process with the caller's environment on top of ours, its
failures as one-line prstack errors."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from prstack.errors import SourceError

READ_BUFFER = 1 << 20
"""Bytes read from a long-lived git at a time (and its pipe's size, where the system allows)."""

Env = Mapping[str, str] | None
"""Variables set for git on top of the process environment (auth, offline guards)."""


def environ(env: Env) -> dict[str, str] | None:
    return {**os.environ, **env} if env else None


def spawn(repo: Path, args: Sequence[str], env: Env) -> subprocess.Popen[bytes]:
    """A git process fed on stdin, answering on stdout (cat-file reports missing objects there)."""
    return subprocess.Popen(["git", "-C", str(repo), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environ(env),
                            bufsize=READ_BUFFER, pipesize=READ_BUFFER)


def run_git(repo: Path, args: Sequence[str], env: Env, stdin: bytes | None = None) -> bytes:
    """git's stdout for `args` run in `repo` with `stdin` fed; a failure is a SourceError."""
    done = subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True,
                          env=environ(env))
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace").strip().replace("\n", " ")
        command = " ".join(a for a in args[:4] if not a.startswith(("-c", "core.")))
        raise SourceError(f"git {command} failed in {repo}: {stderr}")
    return done.stdout
