"""The git processes an audit of a clone starts: one per kind of question for the whole audit, not one
per PR, counted through a logging `git` first on PATH."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from prstack.demo.example import DemoBuild

GIT_PROCESS_BUDGET = 24
"""git processes a 2-PR offline JSON audit of the demo's clone starts."""
ASKED_ONCE = (
    "config --get-regexp",
    "for-each-ref --format=%(refname) %(objectname) refs/pull/",
    "cat-file --batch",
    "rev-parse --verify",
    "rev-list --objects --missing=print",
    "diff-tree --stdin --always -r --root --no-color --no-ext-diff --no-renames --name-only",
)
"""Questions whose answer serves the whole audit: each is asked of git once (their arguments after
the repository's path are these words, then more or none): the clone's remotes, its refs, the files
read, the built-from commit, the blobs the stack's history lacks, the paths its commits change."""


def _git_calls(demo: DemoBuild, tmp_path: Path) -> list[str]:
    """The arguments (after `-C REPO`) of every git the audit started, in order (each call's
    arguments ended by a NUL, which no argument holds)."""
    real_git = shutil.which("git")
    assert real_git is not None
    bin_dir, log = tmp_path / "bin", tmp_path / "git-calls.log"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(f"#!/bin/sh\nprintf '%s\\000' \"$*\" >> '{log}'\nexec '{real_git}' \"$@\"\n")
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-m", "prstack", "audit", "40898", "--git", str(demo.repo.path),
                           "--site-packages", str(demo.site_packages), "--format", "json", "--offline"],
                          capture_output=True, text=True, env=env, check=False)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert '"pr": 40727' in done.stdout and '"pr": 40898' in done.stdout  # both PRs were judged
    prefix = f"-C {demo.repo.path} "
    return [call.removeprefix(prefix) for call in log.read_text().split("\0")[:-1]]


def test_a_two_pr_clone_audit_starts_few_git_processes(demo_build: DemoBuild, tmp_path: Path) -> None:
    """An offline audit of a 2-PR stack starts at most the budgeted git processes, and asks the
    questions whose answer serves the whole audit (`ASKED_ONCE`) of one git each."""
    calls = _git_calls(demo_build, tmp_path)
    assert len(calls) <= GIT_PROCESS_BUDGET, "\n".join(calls)
    for question in ASKED_ONCE:
        assert sum(call == question or call.startswith(f"{question} ") for call in calls) == 1, (question, calls)
