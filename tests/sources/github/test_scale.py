"""The GitHub path on a big repository (20,000 commits, 2,000 files, served by git http-backend):
what a cold and a warm audit of a 2-PR stack cost at the server, and that they judge as --git does;
titles and bodies from GitHub with --git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import GitRepo
from helpers.ghserver import GitHubServer, build_stack, serve_stack
from helpers.gitserver import BIG_COMMITS, BIG_FILES, BigRepo, GitHttpServer
from prstack.cli import main

MB = 1_000_000


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRSTACK_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "PRSTACK_REPO"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no `gh` to ask for a token
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def big_tree(big_repo: BigRepo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PR #1's head as an installed tree: PR #1 applied, PR #2 missing."""
    dest = tmp_path_factory.mktemp("bigtree")
    archive = subprocess.run(["git", "-C", str(big_repo.path), "archive", "refs/pull/1/head"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(list(args))
    return code, json.loads(capsys.readouterr().out)


def github_audit(server: GitHubServer, tree: Path, *extra: str) -> list[str]:
    return ["audit", "2", "--repo", "acme/widget", "--api-url", server.base_url, "--tree", str(tree),
            "--format", "json", *extra]


def verdicts(report: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    prs = [(p["number"], p["status"], p["counts"]) for p in report["prs"]]
    return prs, report["hunks"]


@pytest.mark.slow
def test_the_big_repository_is_big(big_repo: BigRepo) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(big_repo.path), *args], capture_output=True, text=True,
                              check=True).stdout

    assert int(git("rev-list", "--count", "refs/heads/main")) >= 20_000 == BIG_COMMITS
    assert len(git("ls-tree", "-r", "--name-only", "refs/heads/main").split()) >= 2_000 == BIG_FILES
    assert git("merge-base", "refs/heads/main", "refs/pull/2/head").strip() == big_repo.fork


@pytest.mark.slow
def test_cold_audit_of_a_big_repository_is_a_few_requests(
    big_server: GitHttpServer, big_repo: BigRepo, big_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, cold = run_json(capsys, *github_audit(big_server, big_tree))
    requests, sent = big_server.totals()
    git_hits = [h for h in big_server.hits if h.path.startswith("/git/")]
    assert requests <= 10 and sent <= 5 * MB, big_server.hits
    assert len(git_hits) <= 5  # one bounded fetch of commits and trees, one of the touched blobs
    assert len(list((Path.cwd() / "cache" / "meta").glob("*/*/acme/widget/forks/*"))) == 1  # the merge base, kept
    [store] = (Path.cwd() / "cache").glob("git/*/acme/widget.git")
    assert (store / "shallow").read_text().split() == [big_repo.fork]  # history cut at the fork
    assert code == 1 and [(p["number"], p["status"]) for p in cold["prs"]] == [(1, "applied"), (2, "missing")]

    big_server.reset()  # warm: one conditional request per PR, nothing from git
    code, warm = run_json(capsys, *github_audit(big_server, big_tree))
    assert [(h.method, h.status) for h in big_server.hits] == [("GET", 304), ("GET", 304)]
    assert code == 1 and verdicts(warm) == verdicts(cold)

    big_server.reset()  # offline: the cache holds every blob the audit reads
    code, offline = run_json(capsys, *github_audit(big_server, big_tree, "--offline"))
    assert big_server.hits == [] and verdicts(offline) == verdicts(cold)

    code, clone = run_json(capsys, "audit", "2", "--git", str(big_repo.path), "--tree", str(big_tree),
                           "--format", "json")
    assert code == 1 and verdicts(clone) == verdicts(cold)  # the cold GitHub audit judges as --git does


@pytest.mark.slow
def test_without_the_compare_endpoint_the_whole_history_is_fetched(
    big_server: GitHttpServer, big_repo: BigRepo, big_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big_server.fail(r"/compare/", 404)  # (an Enterprise server without it, say)
    code, report = run_json(capsys, *github_audit(big_server, big_tree))
    assert code == 1 and [(p["number"], p["status"]) for p in report["prs"]] == [(1, "applied"), (2, "missing")]
    _, sent = big_server.totals()
    assert sent > 5 * MB  # what a cold audit cost before the bounded fetch
    code, clone = run_json(capsys, "audit", "2", "--git", str(big_repo.path), "--tree", str(big_tree),
                           "--format", "json")
    assert verdicts(clone) == verdicts(report)


@pytest.mark.slow
def test_a_second_stack_forking_later_keeps_the_first_auditable(
    big_server: GitHttpServer, big_repo: BigRepo, big_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, first = run_json(capsys, *github_audit(big_server, big_tree))
    git = ["git", "-C", str(big_repo.path)]
    tree = subprocess.run([*git, "rev-parse", "refs/heads/main~3^{tree}"], capture_output=True, text=True,
                          check=True).stdout.strip()
    head = subprocess.run([*git, "commit-tree", tree, "-p", "refs/heads/main~3", "-m", "newer"],
                          capture_output=True, text=True, check=True).stdout.strip()
    for ref in ("refs/pull/3/head", "refs/heads/newer"):
        subprocess.run([*git, "update-ref", ref, head], check=True)
    try:  # a PR forking 37 commits later than the stack: the history is never cut shorter
        big_server.add_pr(3, "newer", "main", title="Newer fork")
        assert main(["fetch", "3", "--repo", "acme/widget", "--api-url", big_server.base_url]) == 0
        capsys.readouterr()
        big_server.reset()
        _, again = run_json(capsys, *github_audit(big_server, big_tree, "--offline"))
        assert big_server.hits == [] and verdicts(again) == verdicts(first)
    finally:
        for ref in ("refs/pull/3/head", "refs/heads/newer"):
            subprocess.run([*git, "update-ref", "-d", ref], check=True)


@pytest.fixture
def clone(tmp_path: Path) -> GitRepo:
    """The small test stack in a clone whose origin is github.com/acme/widget."""
    repo = GitRepo(tmp_path / "clone")
    build_stack(repo)
    repo.git("remote", "add", "origin", "https://github.com/acme/widget.git")
    return repo


@pytest.mark.slow
def test_git_clone_titles_and_bodies_come_from_github(
    clone: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serve_stack(clone.path)
    try:
        args = ["audit", "2", "--git", str(clone.path), "--tree", str(clone.path), "--format", "json"]
        _, report = run_json(capsys, *args, "--api-url", server.base_url)  # the repository from origin
        assert [(p["title"], p["title_source"]) for p in report["prs"]] == [
            ("Fix the offsets", "github"), ("Scale [bold]and[/] extra", "github")]
        assert len(server.api_requests()) == 3
        _, again = run_json(capsys, *args, "--repo", "acme/widget", "--api-url", server.base_url, "--offline")
        assert [p["title"] for p in again["prs"]] == ["Fix the offsets", "Scale [bold]and[/] extra"]
        assert len(server.api_requests()) == 3  # offline: from the cache
    finally:
        server.stop()
    _, alone = run_json(capsys, *args, "--api-url", server.base_url)  # GitHub gone: the clone answers
    assert [p["title_source"] for p in alone["prs"]] == ["first-commit", "first-commit"]
    assert alone["hunks"] == report["hunks"]


@pytest.mark.slow
def test_a_pr_to_another_branch_than_main_falls_back_to_the_whole_history(
    big_server: GitHttpServer, big_repo: BigRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git = ["git", "-C", str(big_repo.path)]

    def commit(parent: str, message: str) -> str:
        tree = subprocess.run([*git, "rev-parse", f"{parent}^{{tree}}"], capture_output=True, text=True,
                              check=True).stdout.strip()
        return subprocess.run([*git, "commit-tree", tree, "-p", parent, "-m", message], capture_output=True,
                              text=True, check=True).stdout.strip()

    side = commit("refs/heads/main~100", "a release branch")
    head = commit(side, "a fix for the release")
    refs = {"refs/heads/release": side, "refs/heads/fix": head, "refs/pull/5/head": head}
    for ref, sha in refs.items():
        subprocess.run([*git, "update-ref", ref, sha], check=True)
    try:  # its fork (the release branch's tip) is not on main's recent history: the cut cannot join
        big_server.add_pr(5, "fix", "release", title="Release fix")
        assert main(["fetch", "5", "--repo", "acme/widget", "--api-url", big_server.base_url]) == 0
        capsys.readouterr()
        store = next((tmp_path / "cache").glob("git/*/acme/widget.git"))
        assert not (store / "shallow").exists()  # unshallowed: the whole history
        code, report = run_json(capsys, "graph", "5", "--repo", "acme/widget", "--api-url", big_server.base_url,
                                "--offline", "--format", "json")
        assert code == 0, report
    finally:
        for ref in refs:
            subprocess.run([*git, "update-ref", "-d", ref], check=True)


@pytest.mark.parametrize("body", [{"merge_base_commit": {"sha": "HEAD~3", "commit": {}}}, ["not", "an", "object"],
                                  {"merge_base_commit": {"sha": "a" * 40, "commit": {"committer": {"date": "x"}}}}])
@pytest.mark.slow
def test_a_malformed_compare_answer_is_not_trusted(
    server: GitHubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], body: Any
) -> None:
    from helpers.ghserver import export_tree

    server.fail(r"/compare/", 200, body=body)
    tree = export_tree(GitRepoAt(server.repo), "refs/pull/2/head", tmp_path / "tree")
    code, report = run_json(capsys, *github_audit(server, tree))
    assert code == 0 and {p["status"] for p in report["prs"]} == {"applied"}
    [store] = (tmp_path / "cache").glob("git/*/acme/widget.git")
    assert not (store / "shallow").exists()  # no merge base to cut at: the whole history
    assert not list((tmp_path / "cache" / "meta").glob("*/*/acme/widget/forks"))  # and nothing cached of it


class GitRepoAt:
    def __init__(self, path: Path) -> None:
        self.path = path
