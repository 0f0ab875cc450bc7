"""Build the demo's git repository from fixtures/demo: real commits, branches and refs/pull/N/head."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from prstack.errors import PrstackError

FIXED_DATE = "2026-05-04T10:00:00+00:00"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Lindqvist",
    "GIT_AUTHOR_EMAIL": "ada@kvserve.example",
    "GIT_COMMITTER_NAME": "kvserve maintainers",
    "GIT_COMMITTER_EMAIL": "maintainers@kvserve.example",
    "GIT_AUTHOR_DATE": FIXED_DATE,
    "GIT_COMMITTER_DATE": FIXED_DATE,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def fixtures_dir() -> Path:
    """Where fixtures/demo lives: inside the installed package, or beside src/ in a checkout."""
    packaged = Path(str(resources.files("prstack"))) / "_fixtures" / "demo"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / "fixtures" / "demo"
    if checkout.is_dir():
        return checkout
    raise PrstackError("the demo fixtures are not installed with prstack; reinstall it from its source tree.")


def git(repo: Path, *args: str) -> str:
    """Run git for the fixture with a fixed identity and dates (so commit ids never change)."""
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise PrstackError(f"building the demo repository failed: git {args[0]}: {done.stderr.strip()}")
    return done.stdout.strip()


@dataclass(frozen=True)
class DemoRepo:
    """The upstream repository of the example and its interesting commits."""

    path: Path
    heads: dict[int, str]
    """PR number -> head sha (also at refs/pull/N/head)."""
    fork_point: str
    main: str
    fork_build: str
    """The fork's build commit: #40898 with #40727's runner hunk dropped."""


def _am(repo: Path, patches: Path) -> None:
    files = sorted(str(p) for p in patches.glob("*.patch"))
    git(repo, "-c", "commit.gpgsign=false", "am", "--quiet", "--committer-date-is-author-date", *files)


def build_repo(dest: Path, fixtures: Path | None = None) -> DemoRepo:
    """Create the example repository in `dest` (which must not exist or be empty)."""
    src = fixtures or fixtures_dir()
    dest.mkdir(parents=True, exist_ok=True)
    git(dest, "init", "--quiet", "--initial-branch=main")
    shutil.copytree(src / "base", dest, dirs_exist_ok=True)
    git(dest, "add", "-A")
    git(dest, "-c", "commit.gpgsign=false", "commit", "--quiet", "-m", "kvserve 0.3.0")
    fork_point = git(dest, "rev-parse", "HEAD")
    git(dest, "checkout", "--quiet", "-b", "fix-layer-offset")
    _am(dest, src / "pr40727")
    git(dest, "checkout", "--quiet", "-b", "sliding-window")
    _am(dest, src / "pr40898")
    git(dest, "checkout", "--quiet", "-b", "fork-build")
    _am(dest, src / "fork")
    git(dest, "checkout", "--quiet", "main")
    _am(dest, src / "main")
    heads = {40727: git(dest, "rev-parse", "fix-layer-offset"), 40898: git(dest, "rev-parse", "sliding-window")}
    for number, sha in heads.items():
        git(dest, "update-ref", f"refs/pull/{number}/head", sha)
    return DemoRepo(dest, heads, fork_point, git(dest, "rev-parse", "main"), git(dest, "rev-parse", "fork-build"))


def export_tree(repo: Path, rev: str, dest: Path) -> Path:
    """Write the tree of `rev` into `dest` (a plain directory, no .git)."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest
