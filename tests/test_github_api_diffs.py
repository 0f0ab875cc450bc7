"""Diffs through the REST API and the limits GitHub puts on them: the .diff media type refused
as too large (406), patches the files API omits, the commits API's 250, pagination."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghserver import GitHubServer
from prstack.forge import RepoId
from prstack.hunks import parse_diff
from prstack.sources.github.api import Backoff, GitHub
from prstack.sources.github.cache import Cache


def client(server: GitHubServer, tmp_path: Path, offline: bool = False) -> GitHub:
    return GitHub(
        RepoId("acme", "widget"),
        Cache(tmp_path / "cache"),
        api_url=server.base_url,
        backoff=Backoff(retries=1, factor=0),
        offline=offline,
    )


def paths(text: str) -> set[str]:
    return {h.path for h in parse_diff(text, 2)}


NET = {"src/widget/core.py", "src/widget/extra.py", "tests/test_extra.py"}


def test_pull_diff_and_its_cache(server: GitHubServer, tmp_path: Path) -> None:
    gh = client(server, tmp_path)
    found = gh.api_diff(gh.pull(2))
    assert (found.via, found.reason) == ("pull diff", None)
    assert found.text is not None and paths(found.text) == NET
    assert server.api_requests()[-1].headers["accept"] == "application/vnd.github.v3.diff"
    server.log.clear()
    again = client(server, tmp_path)
    assert again.api_diff(again.pull(2)) == found
    assert [s.status for s in server.api_requests()] == [304]  # the PR's revalidation only
    offline = client(server, tmp_path, offline=True)
    assert offline.api_diff(offline.pull(2)) == found


def test_406_falls_back_to_the_files_api(server: GitHubServer, tmp_path: Path) -> None:
    server.diff_file_limit = 2
    gh = client(server, tmp_path)
    found = gh.api_diff(gh.pull(2))
    assert found.via == "files API" and "406" in (found.reason or "")
    assert found.text is not None and paths(found.text) == NET
    added = [h for h in parse_diff(found.text, 2) if h.path == "src/widget/extra.py"]
    assert added[0].old_path is None  # a new file stays a new file


def test_omitted_patch_falls_back_to_per_commit_diffs(server: GitHubServer, tmp_path: Path) -> None:
    server.diff_file_limit = 2
    server.omit_patch = {"src/widget/core.py"}
    server.per_page_cap = 2  # the commits come in three pages
    gh = client(server, tmp_path)
    found = gh.api_diff(gh.pull(2))
    assert found.via == "per-commit diffs"
    assert found.reason == "the files API omits the patch of src/widget/core.py"
    assert found.text is not None and found.text.count("diff --git a/src/widget/core.py") == 5
    pages = [s.path for s in server.api_requests() if "/commits" in s.path and "pulls" in s.path]
    assert len(pages) == 3


def test_nothing_complete_means_git_transport(
    server: GitHubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.diff_file_limit = 1
    server.omit_patch = {"src/widget/core.py"}
    gh = client(server, tmp_path)
    found = gh.api_diff(gh.pull(2))
    assert found.text is None and found.via == "none"
    assert "is too large" in (found.reason or "")
    monkeypatch.setattr("prstack.sources.github.api.COMMITS_API_LIMIT", 6)
    gh = client(server, tmp_path / "other")
    assert "commits API stops at 6 commits" in (gh.api_diff(gh.pull(2)).reason or "")
