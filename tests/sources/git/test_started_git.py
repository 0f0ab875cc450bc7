"""A git process started ahead of its answer: what it wrote, or its failure in git's words."""

from __future__ import annotations

import pytest

from conftest import GitRepo
from prstack.errors import SourceError
from prstack.sources.git.repo import GitClone
from prstack.sources.git.runner import Started


def test_a_started_git_answers_what_it_wrote_or_fails_in_its_own_words(git_repo: GitRepo) -> None:
    sha = git_repo.commit("base", {"m.py": "x = 1\n"})
    size = git_repo.git("cat-file", "-s", sha)
    started = Started(git_repo.path, ["cat-file", "--batch-check"], None, f"{sha}\n".encode())
    assert started.output() == f"{sha} commit {size}\n".encode()
    failing = Started(git_repo.path, ["log", "--stdin", "--no-walk"], None, b"no-such-rev\n")
    with pytest.raises(SourceError, match=r"git log --stdin --no-walk failed in .*no-such-rev"):
        failing.output()


def test_commit_diffs_started_ahead_are_those_asked_when_needed(git_repo: GitRepo) -> None:
    """Each commit's diff, in the order asked, whether git was started ahead or asked at once."""
    git_repo.commit("base", {"m.py": "a\nb\n"})
    one = git_repo.commit("one", {"m.py": "a\nB\n"})
    two = git_repo.commit("two", {"m.py": "A\nB\n", "n.py": "new\n"})
    objects = GitClone(git_repo.path).objects
    ahead = objects.start_commit_diffs([two, one])
    asked = objects.commit_diffs([two, one])
    assert ahead() == asked and [sha for sha, _ in asked] == [two, one]
    assert b"+new" in asked[0][1] and b"-b\n+B" in asked[1][1]
    assert objects.start_commit_diffs([])() == []
