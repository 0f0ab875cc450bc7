"""GitHub metadata through PyGithub against a GitHub-shaped server on 127.0.0.1: caching, ETag/304,
pagination, and every failure as one line that says what to do."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from helpers.ghserver import GitHubServer
from prstack.errors import InputError, SourceError
from prstack.placement.forge import RepoId
from prstack.sources.github.access import Access, Backoff
from prstack.sources.github.api import GitHub, find_token
from prstack.sources.github.cache import Cache

REPO = RepoId("acme", "widget")
FAST = Backoff(retries=2, factor=0)


def client(server: GitHubServer, cache: Cache, **kw: object) -> GitHub:
    return GitHub(REPO, cache, Access(api_url=server.base_url, backoff=FAST, **kw))  # type: ignore[arg-type]


@pytest.mark.slow
def test_stack_metadata_cold_then_warm(server: GitHubServer, tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    metas = client(server, cache).stack([2])
    assert sorted(metas) == [1, 2]
    b = metas[2]
    assert (b.title, b.base_ref, b.head_ref, b.state, b.default_branch) == (
        "Scale [bold]and[/] extra",
        "feature-a",
        "feature-b",
        "open",
        "main",
    )
    assert b.head_sha == server._head(server.prs[2])
    assert b.clone_url == server.clone_url
    cold = [s.path.split("?")[0] for s in server.api_requests()]
    assert cold == [
        "/api/v3/repos/acme/widget/pulls/2",
        "/api/v3/repos/acme/widget/pulls",
        "/api/v3/repos/acme/widget/pulls/1",
    ]
    server.log.clear()
    assert client(server, cache).stack([2]) == metas
    warm = server.api_requests()
    assert [(s.path, s.status) for s in warm] == [
        ("/api/v3/repos/acme/widget/pulls/2", 304),
        ("/api/v3/repos/acme/widget/pulls/1", 304),
    ]
    assert all("if-none-match" in s.headers for s in warm)
    assert server.counted() == 0


def test_changed_pr_is_refetched(server: GitHubServer, tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    client(server, cache).stack([2])
    server.prs[2].title = "Renamed"
    server.log.clear()
    assert client(server, cache).pull(2).title == "Renamed"
    assert [s.status for s in server.api_requests()] == [200]
    assert client(server, cache, offline=True).pull(2).title == "Renamed"


def test_offline_uses_only_the_cache(server: GitHubServer, tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    client(server, cache).stack([2])
    server.log.clear()
    assert sorted(client(server, cache, offline=True).stack([2])) == [1, 2]
    assert server.log == []
    with pytest.raises(SourceError, match=r"PR #7 .*not in the cache.*prstack fetch 7"):
        client(server, cache, offline=True).pull(7)


def test_corrupt_cache_entry_is_refetched(server: GitHubServer, tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    client(server, cache).pull(2)
    entry = next((tmp_path / "cache").rglob("2.json"))
    entry.write_bytes(entry.read_bytes()[:-20])
    server.log.clear()
    fresh = Cache(tmp_path / "cache")
    assert client(server, fresh).pull(2).number == 2
    assert [s.status for s in server.api_requests()] == [200]  # not a conditional request
    assert "if-none-match" not in server.api_requests()[0].headers
    assert fresh.dropped == [entry]


def test_token_is_sent_and_never_cached(server: GitHubServer, tmp_path: Path) -> None:
    server.token = "s3cr3t-token-value"
    cache = Cache(tmp_path / "cache")
    client(server, cache, token="s3cr3t-token-value").stack([2])
    assert {s.headers.get("authorization") for s in server.api_requests()} == {"token s3cr3t-token-value"}
    written = [path.read_bytes() for path in (tmp_path / "cache").rglob("*") if path.is_file()]
    assert any(b"Scale [bold]and[/] extra" in data for data in written)  # PR #2's metadata was cached
    assert not [data for data in written if b"s3cr3t" in data]


def test_pull_list_is_paginated(server: GitHubServer, tmp_path: Path) -> None:
    server.per_page_cap = 2
    for n in range(10, 16):  # five more PRs from older copies of feature-a, all closed
        server.add_pr(n, "feature-a", "main", state="closed")
        server._git("update-ref", f"refs/pull/{n}/head", "refs/pull/1/head~1")
    gh = client(server, Cache(tmp_path / "cache"))
    assert gh.pull_of_branch("feature-a") == 1  # the open one wins, found on the last page
    pages = [s.path for s in server.api_requests() if "/pulls?" in s.path]
    assert len(pages) == 4 and "page=4" in pages[-1]


def test_body_names_a_parent(server: GitHubServer, tmp_path: Path) -> None:
    server.prs[2].base_ref = "main"
    server.prs[2].body = "Stacked on #1. Also depends on #99 (an issue, not a PR)."
    assert sorted(client(server, Cache(tmp_path / "c")).stack([2])) == [1, 2]


@pytest.mark.parametrize("body", [
    "Builds on #1.",
    "Depends on PR #1",
    "Stacked on https://github.com/acme/widget/pull/1",
    "Stack:\n- #2\n- #1\n",
])
def test_body_names_a_parent_in_the_grammar_graph_reads(server: GitHubServer, tmp_path: Path, body: str) -> None:
    server.prs[2].base_ref = "main"
    server.prs[2].body = body
    assert sorted(client(server, Cache(tmp_path / "c")).stack([2])) == [1, 2]


def test_a_body_naming_no_parent_fetches_none(server: GitHubServer, tmp_path: Path) -> None:
    server.prs[2].base_ref = "main"
    server.prs[2].body = "Fixes #1 (the issue); see the discussion in #1."
    assert sorted(client(server, Cache(tmp_path / "c")).stack([2])) == [2]


def test_unknown_pr(server: GitHubServer, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"PR #404 of acme/widget not found .*404.*check the number"):
        client(server, Cache(tmp_path / "c")).pull(404)


def test_unknown_repository(server: GitHubServer, tmp_path: Path) -> None:
    gh = GitHub(RepoId("acme", "nope"), Cache(tmp_path / "c"), Access(api_url=server.base_url, backoff=FAST))
    with pytest.raises(InputError, match=r"acme/nope not found.*private.*GITHUB_TOKEN"):
        gh.pull(1)


def test_private_repository_without_token(server: GitHubServer, tmp_path: Path) -> None:
    server.private, server.token = True, "t0k"
    with pytest.raises(InputError, match=r"if the repository is private, set GITHUB_TOKEN"):
        client(server, Cache(tmp_path / "c")).pull(1)
    assert client(server, Cache(tmp_path / "d"), token="t0k").pull(1).number == 1


def test_bad_token(server: GitHubServer, tmp_path: Path) -> None:
    server.token = "right"
    with pytest.raises(SourceError, match=r"refused the token \(401 .*GITHUB_TOKEN") as err:
        client(server, Cache(tmp_path / "c"), token="wrong-token").pull(1)
    assert "wrong-token" not in str(err.value)


def test_rate_limit_exhausted_unauthenticated(server: GitHubServer, tmp_path: Path) -> None:
    server.remaining = 0
    with pytest.raises(SourceError) as err:
        client(server, Cache(tmp_path / "c")).pull(1)
    message = str(err.value)
    assert "rate limit is exhausted (60 requests/hour for unauthenticated use)" in message
    reset = time.strftime("%H:%M", time.gmtime(server.reset_at))
    assert f"resets at {reset} UTC" in message and "GITHUB_TOKEN" in message
    assert len(server.api_requests()) == 1  # no retries against a rate limit


def test_secondary_rate_limit_429(server: GitHubServer, tmp_path: Path) -> None:
    server.fail(
        "/pulls/1$",
        429,
        headers={"Retry-After": "60"},
        body={"message": "You have exceeded a secondary rate limit."},
    )
    with pytest.raises(SourceError, match=r"rate limit is exhausted.*retry after 60 s"):
        client(server, Cache(tmp_path / "c"), token=None).pull(1)


def test_5xx_is_retried_then_succeeds(server: GitHubServer, tmp_path: Path) -> None:
    server.fail("/pulls/1$", 502, times=2)
    assert client(server, Cache(tmp_path / "c")).pull(1).number == 1
    assert [s.status for s in server.api_requests()] == [502, 502, 200]


def test_5xx_gives_up_after_bounded_retries(server: GitHubServer, tmp_path: Path) -> None:
    server.fail("/pulls/1$", 503, times=10)
    with pytest.raises(SourceError, match=r"GitHub failed \(503\) for PR #1 after 3 tries; try again"):
        client(server, Cache(tmp_path / "c")).pull(1)
    assert len(server.api_requests()) == 3


def test_no_network(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    gh = GitHub(REPO, Cache(tmp_path / "c"), Access(api_url=f"http://127.0.0.1:{port}/api/v3", backoff=FAST))
    with pytest.raises(SourceError, match=r"cannot reach GitHub .*`offline`.*`git` PATH"):
        gh.pull(1)


@pytest.mark.slow
def test_timeout(tmp_path: Path) -> None:
    with socket.socket() as s:  # accepts connections, never answers
        s.bind(("127.0.0.1", 0))
        s.listen()
        url = f"http://127.0.0.1:{s.getsockname()[1]}/api/v3"
        gh = GitHub(REPO, Cache(tmp_path / "c"), Access(api_url=url, backoff=FAST, timeout=1))
        with pytest.raises(SourceError, match=r"did not answer within 1 s.*`offline`"):
            gh.pull(1)


def test_find_token() -> None:
    assert find_token({"GITHUB_TOKEN": "a", "GH_TOKEN": "b"}, use_gh=False) == "a"
    assert find_token({"GH_TOKEN": " b "}, use_gh=False) == "b"
    assert find_token({}, use_gh=False) is None


def test_enterprise_api_url_from_the_repository_host(tmp_path: Path) -> None:
    from prstack.sources.open import _github

    gh = _github(RepoId("a", "b", "ghe.corp"), Cache(tmp_path), Access(None, "t", True, FAST, 1))
    assert (gh.api_url, gh.host) == ("https://ghe.corp/api/v3", "ghe.corp")


def test_cache_entry_of_another_shape_is_refetched(server: GitHubServer, tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    cache.put(f"github/127.0.0.1:{server.port}/acme/widget/pulls", "1", {"raw": {"old": 1}})
    assert client(server, cache).pull(1).title == "Fix the offsets"
    assert [s.status for s in server.api_requests()] == [200]


def test_answer_that_is_not_a_pull_request(server: GitHubServer, tmp_path: Path) -> None:
    server.fail("/pulls/1$", 200, body={"message": "hello"})
    with pytest.raises(SourceError, match=r"is not a pull request: number is missing.*; check `api_url`"):
        client(server, Cache(tmp_path / "c")).pull(1)
