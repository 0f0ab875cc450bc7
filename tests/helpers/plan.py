"""Helpers for the plan tests: a small upstream repository with a release tag and PR refs, and
running an emitted script or patch in a scratch clone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import GitRepo
from prstack.audit import audit_stack
from prstack.demo.fixture import GIT_ENV
from prstack.match.report import AuditReport
from prstack.sources.git.repo import GitClone
from prstack.targets import TargetSpec

CORE = "src/kvlite/core.py"
UTIL = "src/kvlite/util.py"
HEADER = '"""kvlite core values."""\n\nimport os\n\n'


def core_text(header: str = "") -> str:
    return header + "".join(f"VALUE_{i:02d} = {i}\n" for i in range(1, 31))


class Upstream:
    """kvlite: v1.0 (where the PRs fork), then main moves on (a header in core.py) and is tagged v1.1."""

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo
        self.fork = repo.commit("kvlite 1.0", {
            "src/kvlite/__init__.py": "",
            CORE: core_text(),
            UTIL: "def double(x: int) -> int:\n    return 2 * x\n",
            "tests/test_core.py": "def test_ok() -> None:\n    assert True\n",
        })
        repo.git("tag", "v1.0")
        self.v11 = repo.commit("Add a module docstring", {CORE: core_text(HEADER)})
        repo.git("tag", "v1.1")

    @property
    def path(self) -> Path:
        return self.repo.path

    def edit(self, path: str, old: str, new: str) -> dict[str, str | bytes | None]:
        """The work tree's `path` with `old` replaced by `new` (which must be there once)."""
        text = (self.repo.path / path).read_text()
        assert text.count(old) == 1, (path, old)
        return {path: text.replace(old, new)}

    def pr(self, number: int, edits: list[tuple[str, str, str]], start: str = "v1.0",
           branch: str | None = None) -> str:
        """A PR branch from `start` with one commit per (path, old, new); refs/pull/N/head at it."""
        self.repo.branch(branch or f"pr{number}", start)
        for path, old, new in edits:
            self.repo.commit(f"PR {number}: {path.rsplit('/', 1)[-1]}: {new.strip()[:30]}",
                             self.edit(path, old, new))
        sha = self.repo.pr_ref(number)
        self.repo.git("checkout", "--quiet", "main")
        return sha

    def main_commit(self, message: str, path: str, old: str, new: str) -> str:
        self.repo.git("checkout", "--quiet", "main")
        return self.repo.commit(message, self.edit(path, old, new))


def scratch_clone(upstream: Path, dest: Path) -> Path:
    done = subprocess.run(["git", "clone", "--quiet", str(upstream), str(dest)], capture_output=True,
                          text=True, env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, done.stderr
    return dest


def run_script(upstream: Path, script: str, dest: Path) -> Path:
    """Clone `upstream` into `dest` and run the emitted script there."""
    scratch = scratch_clone(upstream, dest)
    (scratch.parent / "apply.sh").write_text(script)
    done = subprocess.run(["sh", str(scratch.parent / "apply.sh")], cwd=scratch, capture_output=True,
                          text=True, env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, done.stdout + done.stderr
    return scratch


def apply_patch(upstream: Path, start: str, patch: bytes, dest: Path) -> Path:
    """Clone `upstream` into `dest`, check out `start`, and `git apply` the patch."""
    scratch = scratch_clone(upstream, dest)
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "checkout", "--quiet", "--detach", start], cwd=scratch, check=True, env=env)
    (scratch.parent / "combined.patch").write_bytes(patch)
    done = subprocess.run(["git", "apply", str(scratch.parent / "combined.patch")], cwd=scratch,
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return scratch


def audit_tree(upstream: Path, numbers: list[int], tree: Path) -> AuditReport:
    return audit_stack(GitClone(upstream), numbers, TargetSpec("tree", str(tree)))
