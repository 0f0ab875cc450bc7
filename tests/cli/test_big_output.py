"""Big audits through the real CLI: markdown within GitHub's comment limit, a line per hunk in the table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.render.titles import FALLBACK_FOOTNOTE

HUNKS = 240


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A PR that changes every 10th line of a 2,400-line module; the target still holds the old file."""
    root = tmp_path_factory.mktemp("big")
    repo = GitRepo(root / "repo")
    old = [f"value_{i} = compute('{'x' * 80}', {i})\n" for i in range(HUNKS * 10)]
    new = [line.replace("compute(", "compute_v2(") if i % 10 == 5 else line for i, line in enumerate(old)]
    repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": "".join(old)})
    repo.branch("feature")
    repo.commit("Use compute_v2 everywhere", {"pkg/core.py": "".join(new)})
    repo.pr_ref(7)
    repo.branch("main", "main")
    tree = root / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "core.py").write_text("".join(old))
    return repo.path, tree


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "prstack", *args], capture_output=True, text=True, env=env)


@pytest.mark.slow
def test_markdown_stays_within_githubs_comment_limit(big: tuple[Path, Path]) -> None:
    repo, tree = big
    done = run("audit", "7", "--git", str(repo), "--tree", str(tree), "--format", "markdown")
    assert done.returncode == 1, done.stderr
    text = done.stdout
    assert len(text) <= 65_536
    assert "more not shown" in text and "--format json" in text
    assert str(tree) not in text and str(repo) not in text  # no local absolute paths
    assert "| Use compute_v2 everywhere\\* |" in text  # the title column is filled, marked as a commit subject
    assert text.index("| PR |") < text.index("**missing**")  # the summary first


@pytest.mark.slow
def test_table_gives_a_line_per_hunk_past_a_few_dozen(big: tuple[Path, Path]) -> None:
    repo, tree = big
    done = run("audit", "7", "--git", str(repo), "--tree", str(tree))
    assert done.returncode == 1, done.stderr
    assert f"{HUNKS} hunks to look at" in done.stdout
    assert len(done.stdout.splitlines()) < HUNKS + 40
    assert "compute_v2(" not in done.stdout  # no diffs
    verbose = run("audit", "7", "--git", str(repo), "--tree", str(tree), "--verbose")
    assert verbose.returncode == 1 and verbose.stdout.count("compute_v2(") >= HUNKS


@pytest.mark.slow
def test_plan_and_audit_show_the_same_title(big: tuple[Path, Path]) -> None:
    repo, tree = big
    plan = run("plan", "7", "--git", str(repo), "--onto", "main")
    audit = run("audit", "7", "--git", str(repo), "--tree", str(tree), "--format", "markdown")
    assert "Use compute_v2" in plan.stdout and "everywhere*" in plan.stdout, plan.stdout
    assert "Use compute_v2 everywhere\\*" in audit.stdout and FALLBACK_FOOTNOTE in plan.stdout.replace("\n", " ")


@pytest.mark.slow
def test_a_whole_file_rewrite_is_a_short_panel(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    old = "".join(f"line_{i} = {i}\n" for i in range(1200))
    repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": old})
    repo.branch("feature")
    repo.commit("CRLF", {"pkg/core.py": old.replace("\n", "\r\n").encode()})
    repo.pr_ref(8)
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "core.py").write_text(old.replace("line_5 ", "line_five "))
    done = run("audit", "8", "--git", str(repo.path), "--tree", str(tree))
    assert done.returncode == 1, done.stderr
    assert len(done.stdout.splitlines()) < 120 and "more lines (--verbose shows them)" in done.stdout
    verbose = run("audit", "8", "--git", str(repo.path), "--tree", str(tree), "--verbose")
    assert len(verbose.stdout.splitlines()) > 2400


@pytest.mark.slow
def test_json_title_from_a_clone_is_the_first_commits_subject_and_says_so(big: tuple[Path, Path]) -> None:
    repo, tree = big
    done = run("audit", "7", "--git", str(repo), "--tree", str(tree), "--format", "json")
    assert done.returncode == 1, done.stderr
    (pr,) = json.loads(done.stdout)["prs"]
    assert (pr["title"], pr["title_source"]) == ("Use compute_v2 everywhere", "first-commit")
