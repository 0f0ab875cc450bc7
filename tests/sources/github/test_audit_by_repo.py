"""`prstack audit N --repo O/R` end to end against the local GitHub server, with request counts:
a cold audit of a two-PR stack of 10 commits, a warm one, and an offline one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.ghserver import GitHubServer, export_tree
from prstack.cli import main


def audit(server: GitHubServer, tree: Path, *extra: str) -> list[str]:
    return [
        "audit",
        "2",
        "--repo",
        "acme/widget",
        "--api-url",
        server.base_url,
        "--tree",
        str(tree),
        "--format",
        "json",
        *extra,
    ]


@pytest.mark.slow
def test_cold_warm_offline_request_counts(
    gh: tuple[GitHubServer, GitRepo], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, repo = gh
    tree = export_tree(repo, "refs/pull/2/head", tmp_path / "tree")

    assert main(audit(server, tree)) == 0
    report = json.loads(capsys.readouterr().out)
    assert [p["number"] for p in report["prs"]] == [1, 2]
    assert {p["status"] for p in report["prs"]} == {"applied"}
    cold = server.api_requests()
    assert len(cold) == 4 and server.counted() == 4  # pulls/2, pulls?head=acme:feature-a, pulls/1, compare

    server.log.clear()
    assert main(audit(server, tree)) == 0
    assert json.loads(capsys.readouterr().out)["prs"] == report["prs"]
    warm = server.api_requests()
    assert [s.status for s in warm] == [304, 304]  # one conditional request per PR
    assert server.counted() == 0

    server.stop()  # offline: no server, and no git remote either
    shutil.move(repo.path, tmp_path / "moved-away")
    server.log.clear()
    assert main(audit(server, tree, "--offline")) == 0
    assert json.loads(capsys.readouterr().out)["prs"] == report["prs"]
    assert server.log == []


@pytest.mark.slow
def test_missing_hunks_exit_1(
    gh: tuple[GitHubServer, GitRepo], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, repo = gh
    tree = export_tree(repo, "refs/pull/1/head", tmp_path / "tree")
    assert main(audit(server, tree)) == 1
    statuses = {p["number"]: p["status"] for p in json.loads(capsys.readouterr().out)["prs"]}
    assert statuses == {1: "applied", 2: "missing"}


@pytest.mark.slow
def test_fetch_then_offline_and_cache_commands(
    gh: tuple[GitHubServer, GitRepo], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, repo = gh
    tree = export_tree(repo, "refs/pull/2/head", tmp_path / "tree")
    assert main(["fetch", "2", "--repo", "acme/widget", "--api-url", server.base_url]) == 0
    out = capsys.readouterr().out
    assert "#1 " in out and "#2 " in out and "Scale [bold]and[/] extra" in out
    assert len(server.api_requests()) == 4  # the pulls, the branch lookup, compare
    server.stop()
    shutil.move(repo.path, tmp_path / "moved-away")
    assert main(audit(server, tree, "--offline")) == 0
    capsys.readouterr()

    assert main(["cache", "info"]) == 0
    info = capsys.readouterr().out
    assert f"cache: {tmp_path / 'cache'}" in info
    assert "git repositories: 1" in info and "127.0.0.1" in info
    assert main(["cache", "clear"]) == 0
    assert "removed" in capsys.readouterr().out
    assert main(audit(server, tree, "--offline")) == 2
    err = capsys.readouterr().err
    assert "not in the cache" in err and "prstack fetch 2" in err


@pytest.mark.slow
def test_corrupt_cache_entry_is_refetched_during_audit(
    gh: tuple[GitHubServer, GitRepo], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, repo = gh
    tree = export_tree(repo, "refs/pull/2/head", tmp_path / "tree")
    assert main(audit(server, tree)) == 0
    entry = next((tmp_path / "cache").rglob("pulls/2.json"))
    entry.write_bytes(entry.read_bytes().replace(b"feature-a", b"feature-z"))
    server.log.clear()
    assert main(audit(server, tree)) == 0
    assert sorted(s.status for s in server.api_requests()) == [200, 304]
    capsys.readouterr()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["audit", "404"], "PR #404 of acme/widget not found"),
        (["audit", "2", "--via", "api"], "No such option: --via"),
        (["audit", "2", "--repo", "nonsense"], "give the repository as OWNER/NAME"),
    ],
)
@pytest.mark.slow
def test_errors_are_one_line_exit_2(
    gh: tuple[GitHubServer, GitRepo],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    server, _ = gh
    base = ["--api-url", server.base_url, "--tree", str(tmp_path)]
    if "--repo" not in args:
        base += ["--repo", "acme/widget"]
    assert main([*args, *base]) == 2
    err = capsys.readouterr().err.replace("\n", " ")  # (rich wraps the one line at 80 columns)
    assert err.startswith("prstack: error: ") and err.count("prstack: error:") == 1
    assert message in err and "Traceback" not in err


def test_rate_limit_via_cli(
    gh: tuple[GitHubServer, GitRepo], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, _ = gh
    server.remaining = 0
    assert (
        main(
            [
                "audit",
                "2",
                "--repo",
                "acme/widget",
                "--api-url",
                server.base_url,
                "--tree",
                str(tmp_path),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "rate limit is exhausted" in err and "resets at" in err


@pytest.mark.slow
def test_repo_inferred_from_pyproject(
    gh: tuple[GitHubServer, GitRepo], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, repo = gh
    tree = export_tree(repo, "refs/pull/2/head", tmp_path / "tree")
    (tmp_path / "pyproject.toml").write_text('[tool.prstack]\nrepo = "acme/widget"\n')
    assert main(["audit", "2", "--api-url", server.base_url, "--tree", str(tree)]) == 0
    capsys.readouterr()


@pytest.mark.slow
def test_git_clone_with_repo_gets_metadata_only(
    gh: tuple[GitHubServer, GitRepo], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, repo = gh
    tree = export_tree(repo, "refs/pull/2/head", tmp_path / "tree")
    args = ["audit", "2", "--git", str(repo.path), "--tree", str(tree), "--format", "json"]
    assert main(args) == 0  # no --repo: the clone alone, no request
    assert server.log == []
    assert main([*args, "--repo", "acme/widget", "--api-url", server.base_url]) == 0
    assert len(server.api_requests()) == 3
    assert main([*args, "--repo", "acme/widget", "--api-url", server.base_url, "--offline"]) == 0
    assert len(server.api_requests()) == 3  # offline: the cached metadata, no request
    capsys.readouterr()


def test_git_clone_with_repo_offline_and_an_empty_cache_uses_the_clone(
    gh: tuple[GitHubServer, GitRepo], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, repo = gh
    tree = export_tree(repo, "refs/pull/2/head", tmp_path / "tree")
    args = ["audit", "2", "--git", str(repo.path), "--tree", str(tree), "--format", "json"]
    assert main(args) == 0
    alone = json.loads(capsys.readouterr().out)
    server.stop()  # nothing cached and nothing to ask: the clone answers
    assert main([*args, "--repo", "acme/widget", "--api-url", server.base_url, "--offline"]) == 0
    offline = json.loads(capsys.readouterr().out)
    assert offline["hunks"] == alone["hunks"] and [p["number"] for p in offline["prs"]] == [1, 2]
    assert server.log == []


@pytest.mark.slow
def test_titles_reach_the_report(gh: tuple[GitHubServer, GitRepo], tmp_path: Path) -> None:
    from prstack.audit import audit_stack
    from prstack.render import OutputFormat, render_audit
    from prstack.sources.github.access import Access
    from prstack.sources.github.cache import Cache
    from prstack.sources.open import open_clone
    from prstack.targets import TargetSpec
    from prstack.targets.repos import repo_candidates

    server, repo = gh
    tree = export_tree(repo, "refs/pull/2/head", tmp_path / "tree")
    spec = TargetSpec("tree", str(tree))
    source = open_clone([2], repo="acme/widget", access=Access(server.base_url), named=lambda: repo_candidates(spec),
                         cache=Cache(tmp_path / "c"))
    assert source.titles() == {1: "Fix the offsets", 2: "Scale [bold]and[/] extra"}
    report = audit_stack(source.git, [2], spec, metadata=source.meta)
    assert [(r.pr.title, r.pr.base_ref, r.pr.state) for r in report.prs] == [
        ("Fix the offsets", "main", "open"),
        ("Scale [bold]and[/] extra", "feature-a", "open"),
    ]
    data = render_audit(report, OutputFormat.JSON)
    assert isinstance(data, str) and '"title": "Scale [bold]and[/] extra"' in data
