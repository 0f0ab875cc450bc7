"""A shallow clone (`git clone --depth`, PR refs fetched) audits like a full one, or says it is too shallow."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.targets import MODEL, MODEL_FIXED, RUNNER, make_wheel


def upstream(root: Path) -> GitRepo:
    """src/kvs, five commits of history; PR #7 fixes model.py, forking before six later commits of main."""
    repo = GitRepo(root / "upstream")
    for i in range(5):
        repo.commit(f"early {i}", {"src/kvs/__init__.py": "", "CHANGES.md": f"{i}\n"})
    base = repo.commit("base", {"src/kvs/model.py": MODEL, "src/kvs/runner.py": RUNNER})
    repo.branch("fix")
    repo.commit("Fix the layer offset", {"src/kvs/model.py": MODEL_FIXED})
    repo.pr_ref(7)
    repo.branch("main", base)
    for i in range(6):
        repo.commit(f"docs {i}", {"docs/index.md": f"# kvs {i}\n"})
    return repo


def shallow_clone(repo: GitRepo, dest: Path, depth: int, pr_depth: int) -> Path:
    url = f"file://{repo.path}"
    subprocess.run(["git", "clone", "-q", "--no-checkout", f"--depth={depth}", "--branch", "main", url, str(dest)],
                   check=True)
    subprocess.run(["git", "-C", str(dest), "fetch", "-q", f"--depth={pr_depth}", "origin",
                    "+refs/pull/*/head:refs/pull/*/head"], check=True)
    assert (dest / ".git" / "shallow").is_file()
    return dest


def audit(clone: Path, wheel: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prstack", "audit", "7", "--git", str(clone), "--wheel", str(wheel),
                           "--format", "json"], capture_output=True, text=True)


def verdicts(done: subprocess.CompletedProcess[str]) -> list[tuple[str, str, str]]:
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    return [(pr["status"], "", "") for pr in data["prs"]] + [
        (h["path"], h["status"], h["installed_path"]) for h in data["hunks"]]


@pytest.mark.slow
def test_a_shallow_clone_deep_enough_gives_the_full_clone_s_verdicts(tmp_path: Path) -> None:
    repo = upstream(tmp_path)
    wheel = make_wheel(tmp_path / "w", "kvs", "1.0", {"kvs/__init__.py": b"", "kvs/model.py": MODEL_FIXED.encode(),
                                                       "kvs/runner.py": RUNNER.encode()})
    full = audit(repo.path, wheel)
    shallow = audit(shallow_clone(repo, tmp_path / "shallow", 8, 3), wheel)
    assert verdicts(shallow) == verdicts(full)
    assert verdicts(full)[0] == ("applied", "", "") and full.returncode == 0


@pytest.mark.slow
def test_a_clone_too_shallow_for_the_fork_point_says_so(tmp_path: Path) -> None:
    repo = upstream(tmp_path)
    wheel = make_wheel(tmp_path / "w", "kvs", "1.0", {"kvs/__init__.py": b"", "kvs/model.py": MODEL.encode()})
    clone = shallow_clone(repo, tmp_path / "shallow", 1, 1)
    done = audit(clone, wheel)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.strip()]
    assert "is shallow" in line and "fetch --unshallow" in line and "--base" in line


@pytest.mark.slow
def test_the_deepening_command_names_the_clone_s_own_remote(tmp_path: Path) -> None:
    repo = upstream(tmp_path)
    wheel = make_wheel(tmp_path / "w", "kvs", "1.0", {"kvs/__init__.py": b"", "kvs/model.py": MODEL.encode()})
    clone = shallow_clone(repo, tmp_path / "shallow", 1, 1)
    subprocess.run(["git", "-C", str(clone), "remote", "rename", "origin", "upstream"], check=True)
    done = audit(clone, wheel)
    assert done.returncode == 2
    assert f"git -C {clone} fetch --unshallow upstream)" in done.stderr
