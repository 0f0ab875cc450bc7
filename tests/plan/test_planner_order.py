"""Two independent PRs that conflict are found in conflict whatever the order they are given in;
the order only decides which one goes first."""

from __future__ import annotations

import json

import pytest

from conftest import GitRepo
from prstack.cli import main


def _two_adders(repo: GitRepo) -> None:
    """#911 adds pkg/new.py; #928 adds the same file (one commit, with another edit) and then
    extends it: picked after #911 its commits go on one by one, before it #911's add does not."""
    repo.commit("base", {"pkg/__init__.py": "", "pkg/o.py": "o = 1\n"})
    repo.branch("a")
    repo.commit("Add new", {"pkg/new.py": "a = 1\nb = 2\n"})
    repo.pr_ref(911)
    repo.branch("b", "main")
    repo.commit("Add new and edit o", {"pkg/new.py": "a = 1\nb = 2\n", "pkg/o.py": "o = 2\n"})
    repo.commit("Extend new", {"pkg/new.py": "a = 1\nb = 2\nc = 3\n"})
    repo.pr_ref(928)
    repo.branch("main", "main")


def _plan(capsys: pytest.CaptureFixture[str], repo: GitRepo, *prs: str) -> tuple[int, dict[str, object]]:
    code = main(["plan", *prs, "--git", str(repo.path), "--onto", "main", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_conflicts_do_not_depend_on_the_order_given(git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    _two_adders(git_repo)
    seen = {}
    for order in (("911", "928"), ("928", "911")):
        code, data = _plan(capsys, git_repo, *order)
        prs = data["prs"]
        assert isinstance(prs, list)
        assert code == 1 and [p["number"] for p in prs] == [int(n) for n in order]  # the order given
        assert [p["status"] for p in prs] == ["clean", "conflict"]  # the first goes on, the second does not
        (conflict,) = prs[1]["conflicts"]
        assert conflict["path"] == "pkg/new.py" and conflict["with_prs"] == [prs[0]["number"]]
        seen[order] = {frozenset((p["number"], *c["with_prs"])) for p in prs for c in p["conflicts"]}
    assert seen[("911", "928")] == seen[("928", "911")] == {frozenset((911, 928))}


@pytest.mark.slow
def test_unrelated_prs_stay_clean_in_either_order(git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/o.py": "o = 1\n", "pkg/p.py": "p = 1\n"})
    git_repo.branch("a")
    git_repo.commit("Edit o", {"pkg/o.py": "o = 2\n"})
    git_repo.pr_ref(1)
    git_repo.branch("b", "main")
    git_repo.commit("Edit p", {"pkg/p.py": "p = 2\n"})
    git_repo.pr_ref(2)
    git_repo.branch("main", "main")
    for order in (("1", "2"), ("2", "1")):
        code, data = _plan(capsys, git_repo, *order)
        assert code == 0 and data["clean"] is True
