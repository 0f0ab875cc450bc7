"""Lines a PR's own commits wrote and took back again are in no net diff. A target that holds them
among the PR's changed lines lacks the commit that removed them: the hunk is not present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.cli import main
from prstack.diff.lineage import replay
from prstack.sources.git.repo import GitClone

BODY = "\n\ndef ask(q):\n    return OpenAI().ask(q)\n"
IMPORTS = "import json\nimport os\nfrom typing import Any\n"



def _stack(repo: GitRepo) -> dict[str, str]:
    """PR 1 adds pkg/client.py with three imports, then a second commit removes two of them; PR 2,
    on PR 1, adds one of those two back (its own change)."""
    base = repo.commit("base", {"pkg/__init__.py": ""})
    repo.branch("p1")
    c1 = repo.commit("add the client", {"pkg/client.py": "from openai import OpenAI\n" + IMPORTS + BODY})
    c2 = repo.commit("drop unused imports", {"pkg/client.py": "from openai import OpenAI\nimport json\n" + BODY})
    repo.pr_ref(1)
    repo.branch("p2")
    p2 = repo.commit("use os", {"pkg/client.py": "from openai import OpenAI\nimport json\nimport os\n" + BODY})
    repo.pr_ref(2)
    return {"base": base, "c1": c1, "c2": c2, "p2": p2}


def _audit(capsys: pytest.CaptureFixture[str], repo: GitRepo, pr: int, tree: Path) -> tuple[int, list[dict]]:
    code = main(["audit", str(pr), "--git", str(repo.path), "--tree", str(tree), "--format", "json"])
    out, _ = capsys.readouterr()
    return code, json.loads(out)["hunks"]


def test_replay_names_the_lines_one_commit_wrote_and_a_later_one_removed(git_repo: GitRepo) -> None:
    shas = _stack(git_repo)
    got = replay(GitClone(git_repo.path).objects.commit_diffs([shas["c1"], shas["c2"]]))
    assert got.taken_back == {"pkg/client.py": frozenset({"import os", "from typing import Any"})}
    assert replay(GitClone(git_repo.path).objects.commit_diffs([shas["c1"]])).taken_back == {}


def test_the_head_of_a_pr_that_took_lines_back_is_present(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shas = _stack(git_repo)
    code, hunks = _audit(capsys, git_repo, 1, git_repo.archive(shas["c2"], tmp_path / "head"))
    assert code == 0
    assert [h["status"] for h in hunks] == ["applied"]


def test_the_removing_commit_dropped_leaves_the_hunk_partial(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shas = _stack(git_repo)
    code, hunks = _audit(capsys, git_repo, 1, git_repo.archive(shas["c1"], tmp_path / "c1"))
    assert code == 1
    (hunk,) = hunks
    assert hunk["status"] == "partial"
    assert "2 lines that a later commit of the PR removed are back" in hunk["note"]


def test_a_taken_back_line_another_pr_adds_again_is_no_evidence(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shas = _stack(git_repo)
    code, hunks = _audit(capsys, git_repo, 2, git_repo.archive(shas["p2"], tmp_path / "top"))
    assert code == 0, hunks
    assert {h["pr"] for h in hunks} == {1, 2}
    assert all(h["status"] == "applied" for h in hunks)
