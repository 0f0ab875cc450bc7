"""Start-up of an audit of a local clone: GitHub's libraries are imported only when GitHub is asked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GitRepo


@pytest.mark.slow
def test_an_audit_of_a_clone_imports_neither_pygithub_nor_requests(git_repo: GitRepo, tmp_path: Path) -> None:
    base = git_repo.commit("base", {"pkg/mod.py": "x = 1\n"})
    head = git_repo.commit("change", {"pkg/mod.py": "x = 2\n"})
    git_repo.git("update-ref", "refs/pull/1/head", head)
    git_repo.git("update-ref", "refs/heads/main", base)
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "mod.py").write_text("x = 2\n")
    probe = ("import sys\nfrom prstack.cli import main\n"
             f"code = main(['audit', '1', '--git', {str(git_repo.path)!r}, '--tree', {str(tree)!r},"
             " '--format', 'json'])\n"
             "print(code, sorted(m for m in ('github', 'requests', 'urllib3') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert '"status": "applied"' in done.stdout  # the audit ran to its verdict
    assert done.stdout.strip().splitlines()[-1] == "0 []"
