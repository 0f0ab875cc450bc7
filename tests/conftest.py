"""Shared test fixtures: the demo's real repository, wheel and site-packages, and a git repo builder."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from prstack.demo.example import DemoBuild, build
from prstack.demo.fixture import GIT_ENV

ROOT = Path(__file__).resolve().parents[1]
# the GitHub-shaped server (`upstream`, `server`), the big one
pytest_plugins = ["helpers.ghserver", "helpers.gitserver"]


@pytest.fixture(autouse=True)
def _no_terminal_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Output as a pipe gets it: pytest-xdist's workers set COLUMNS=80 and LINES=24, which prstack
    honours (a test of width sets COLUMNS itself)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> DemoBuild:
    """The kvserve example: upstream repo with refs/pull/N/head, the fork's wheel, installed."""
    return build(tmp_path_factory.mktemp("demo"))


class GitRepo:
    """A real git repository in a temporary folder, driven the way a user's clone would be."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tick = 0
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", "--initial-branch=main")

    def git(self, *args: str) -> str:
        self._tick += 1
        date = f"2026-01-01T00:{self._tick // 60:02d}:{self._tick % 60:02d}+00:00"
        env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        done = subprocess.run(["git", "-C", str(self.path), *args], env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"git {args}: {done.stderr}"
        return done.stdout.strip()

    def write(self, files: dict[str, str | bytes | None]) -> None:
        for rel, content in files.items():
            p = self.path / rel
            if content is None:
                p.unlink()
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_text(content)

    def commit(self, message: str, files: dict[str, str | bytes | None]) -> str:
        self.write(files)
        self.git("add", "-A")
        self.git("-c", "commit.gpgsign=false", "commit", "--quiet", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def branch(self, name: str, start: str = "HEAD") -> None:
        self.git("checkout", "--quiet", "-B", name, start)

    def pr_ref(self, number: int, rev: str = "HEAD") -> str:
        sha = self.git("rev-parse", rev)
        self.git("update-ref", f"refs/pull/{number}/head", sha)
        return sha

    def archive(self, rev: str, into: Path) -> Path:
        """The files of `rev` written to the new folder `into`, as `git archive` leaves them."""
        into.mkdir()
        data = subprocess.run(["git", "-C", str(self.path), "archive", rev], capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(into, filter="data")
        return into


@pytest.fixture
def git_repo(tmp_path: Path) -> Iterator[GitRepo]:
    yield GitRepo(tmp_path / "repo")
