"""A PR URL (or --repo) naming another repository than the target's Project-URL is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.targets import install_into, make_tests_only, package, wheel_of

URL = ("Project-URL: Source, https://github.com/acme/kvs",)


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRSTACK_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "prstack", *args], capture_output=True, text=True, env=env)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.strip()]
    return line


@pytest.mark.slow
def test_a_pr_url_of_another_repository_than_the_wheel_s_is_refused(tmp_path: Path) -> None:
    """A tests-only PR would be `not-shipped` against any wheel: the URL is what tells it is another project's."""
    repo, _ = make_tests_only(tmp_path)  # no remote: the clone says nothing of the repository
    wheel = wheel_of(tmp_path, "kvs", package(), URL)
    done = run(tmp_path, "audit", "https://github.com/else/other/pull/7", "--git", str(repo.path),
               "--wheel", str(wheel), "--offline")
    line = one_line(done)
    assert "else/other is not the repository of the target kvs" in line and "acme/kvs" in line


@pytest.mark.slow
def test_repo_option_of_another_repository_than_the_site_s_one_distribution_is_refused(tmp_path: Path) -> None:
    repo, _ = make_tests_only(tmp_path)
    site = tmp_path / "site"
    install_into(wheel_of(tmp_path, "kvs", package(), URL), site)
    done = run(tmp_path, "audit", "7", "--repo", "else/other", "--git", str(repo.path), "--site-packages", str(site),
               "--offline")
    assert "else/other is not the repository of the target kvs" in one_line(done)


@pytest.mark.parametrize("url", ["https://github.com/acme/kvs/pull/7", "https://github.com/someone/KVS/pull/7"])
@pytest.mark.slow
def test_the_target_s_repository_or_a_fork_of_it_is_audited(tmp_path: Path, url: str) -> None:
    """The same project by name (upstream, or a fork of it) passes; the audit runs."""
    repo, _ = make_tests_only(tmp_path)
    wheel = wheel_of(tmp_path, "kvs", package(), URL)
    done = run(tmp_path, "audit", url, "--git", str(repo.path), "--wheel", str(wheel), "--offline", "--format", "json")
    assert done.returncode == 0, done.stderr
    [pr] = json.loads(done.stdout)["prs"]
    assert (pr["number"], pr["status"]) == (7, "not-shipped")


@pytest.mark.slow
def test_a_target_naming_no_repository_leaves_the_url_alone(tmp_path: Path) -> None:
    repo, _ = make_tests_only(tmp_path)
    wheel = wheel_of(tmp_path, "kvs", package())  # no Project-URL
    done = run(tmp_path, "audit", "https://github.com/else/other/pull/7", "--git", str(repo.path),
               "--wheel", str(wheel), "--offline", "--format", "json")
    assert done.returncode == 0, done.stderr
