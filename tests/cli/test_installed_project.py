"""`prstack audit N --installed` with no other option, in a fresh environment holding prstack and a
project installed from a PR: the project, its repository and its clone are found from the
environment's own install records (PEP 610 direct_url.json as pip writes it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.ghserver import GitHubServer, export_tree
from helpers.targets import install_into, make_wheel
from helpers.venvs import Venv, fresh_venv


def pr_files(repo: GitRepo, rev: str) -> dict[str, bytes]:
    """The package files of `rev` as a wheel ships them (src/ cut)."""
    names = repo.git("ls-tree", "-r", "--name-only", rev, "src/").splitlines()
    return {n.removeprefix("src/"): subprocess.run(["git", "-C", str(repo.path), "show", f"{rev}:{n}"],
                                                   capture_output=True, check=True).stdout for n in names}


def vcs_install(venv: Venv, name: str, files: dict[str, bytes], url: str, revision: str | None,
                commit: str) -> None:
    """`pip install git+URL@REVISION` as it leaves the environment: the files, and direct_url.json."""
    vcs: dict[str, object] = {"vcs": "git", "commit_id": commit}
    if revision is not None:
        vcs["requested_revision"] = revision
    wheel = make_wheel(venv.root.parent / f"wheels-{name}", name, "0.1", files)
    install_into(wheel, venv.site, direct_url={"url": url, "vcs_info": vcs})


def audited(venv: Venv, *args: str) -> tuple[int, dict[str, object], str]:
    done = venv.run("-m", "prstack", "audit", *args, "--format", "json")
    return done.returncode, (json.loads(done.stdout) if done.stdout.strip() else {}), done.stderr


def statuses(report: dict[str, object]) -> dict[int, str]:
    prs = report["prs"]
    assert isinstance(prs, list)
    return {p["number"]: p["status"] for p in prs}


def header(report: dict[str, object]) -> str:
    target = report["target"]
    assert isinstance(target, dict)
    return str(target["build"]["header"])


@pytest.mark.slow
def test_a_project_pip_installed_from_the_pr_ref_is_audited_from_github(
        gh: tuple[GitHubServer, GitRepo], tmp_path: Path) -> None:
    """direct_url.json naming refs/pull/2/head of a GitHub repository is enough: no --repo, no --git."""
    server, repo = gh
    venv = fresh_venv(tmp_path / "venv")
    head = repo.git("rev-parse", "refs/pull/2/head")
    files = pr_files(repo, "refs/pull/2/head")
    vcs_install(venv, "widget", files, "https://github.com/acme/widget.git", "refs/pull/2/head", head)

    code, report, err = audited(venv, "2", "--installed", "--api-url", server.base_url)
    assert (code, err) == (0, "")
    assert statuses(report) == {1: "applied", 2: "applied"}
    assert report["target"]["distribution"] == "widget"  # type: ignore[index]
    assert "the PRs were read from github.com/acme/widget" in header(report)
    assert "widget was installed from refs/pull/2/head of github.com/acme/widget" in header(report)
    assert any("/pulls/2" in s.path for s in server.api_requests())


@pytest.mark.slow
def test_a_dropped_hunk_in_the_pr_install_is_found(gh: tuple[GitHubServer, GitRepo], tmp_path: Path) -> None:
    server, repo = gh
    venv = fresh_venv(tmp_path / "venv")
    head = repo.git("rev-parse", "refs/pull/2/head")
    files = pr_files(repo, "refs/pull/2/head")
    core = files["widget/core.py"].decode()
    assert "return x * 5\n" in core
    files["widget/core.py"] = core.replace("return x * 5\n", "return x + 5\n").encode()  # one hunk of #2 dropped
    vcs_install(venv, "widget", files, "https://github.com/acme/widget.git", "refs/pull/2/head", head)

    code, report, _ = audited(venv, "2", "--installed", "--api-url", server.base_url)
    assert code == 1
    assert statuses(report) == {1: "applied", 2: "partial"}
    assert [h["status"] for h in report["hunks"] if h["status"] != "applied"  # type: ignore[attr-defined]
            and h["status"] != "not-shipped"] == ["partial"]  # the hunk of f4..f8 lacks f5's line


@pytest.mark.slow
def test_offline_without_a_cache_names_the_fetch_command(gh: tuple[GitHubServer, GitRepo], tmp_path: Path) -> None:
    server, repo = gh
    venv = fresh_venv(tmp_path / "venv")
    head = repo.git("rev-parse", "refs/pull/2/head")
    vcs_install(venv, "widget", pr_files(repo, "refs/pull/2/head"), "https://github.com/acme/widget.git",
                "refs/pull/2/head", head)
    code, _, err = audited(venv, "2", "--installed", "--offline", "--api-url", server.base_url)
    assert code == 2
    assert "prstack fetch 2 --repo acme/widget" in err and err.count("\n") == 1
    assert server.log == []


@pytest.mark.slow
def test_an_editable_install_of_a_clone_holding_the_prs_is_read_as_git_offline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The clone `pip install -e` was given holds refs/pull/N/head: it is the PR source, no network."""
    from helpers.ghserver import build_stack

    monkeypatch.setenv("PRSTACK_CACHE_DIR", str(tmp_path / "cache"))
    clone = GitRepo(tmp_path / "src" / "widget")
    build_stack(clone)
    clone.git("checkout", "--quiet", "--detach", "refs/pull/2/head")
    venv = fresh_venv(tmp_path / "venv")
    wheel = make_wheel(tmp_path / "dist", "widget", "0.1", {"_widget.pth": f"{clone.path / 'src'}\n".encode()})
    install_into(wheel, venv.site, direct_url={"url": clone.path.as_uri(), "dir_info": {"editable": True}})

    code, report, err = audited(venv, "2", "--installed", "--offline")
    assert (code, err) == (0, "")
    assert statuses(report) == {1: "applied", 2: "applied"}
    assert (f"widget was installed from the clone {clone.path}, checked out at #2's head: the PRs were read "
            "from that clone, as --git reads one") in header(report)

    tree = export_tree(clone, "refs/pull/2/head", tmp_path / "tree")  # and a matrix with one more target
    code, matrix, err = audited(venv, "2", "--installed", "--tree", str(tree), "--offline")
    assert (code, err) == (0, "")
    reports = matrix["reports"]
    assert isinstance(reports, list) and "as --git reads one" in header(reports[0])

    core = clone.path / "src" / "widget" / "core.py"  # the editable source loses one hunk of #1
    core.write_text(core.read_text().replace("return x + 2 + 1  # fixed 2\n", "return x + 2\n"))
    code, report, _ = audited(venv, "2", "--installed", "--offline")
    assert code == 1
    assert statuses(report) == {1: "partial", 2: "applied"}
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.git"))


@pytest.mark.slow
def test_two_projects_installed_from_repositories_are_asked_about_by_name(
        gh: tuple[GitHubServer, GitRepo], tmp_path: Path) -> None:
    """Neither names the PR, nor was built from its head: prstack asks, naming those two and none
    of its own dependencies."""
    server, repo = gh
    venv = fresh_venv(tmp_path / "venv")
    vcs_install(venv, "widget", pr_files(repo, "refs/pull/2/head"), "https://github.com/acme/widget.git",
                "main", repo.git("rev-parse", "main"))
    vcs_install(venv, "gadget", {"gadget/__init__.py": b""}, "https://github.com/other/gadget", None, "0" * 40)

    code, _, err = audited(venv, "2", "--installed", "--api-url", server.base_url)
    assert code == 2 and err.count("\n") == 1
    assert "2 installed distributions" in err
    assert "gadget was installed from github.com/other/gadget" in err
    assert "widget was installed from github.com/acme/widget" in err
    for dependency in ("rich", "typer", "PyGithub", "GitPython", "prstack was"):
        assert dependency not in err
    asked = sorted(s.path for s in server.log)
    assert asked == ["/api/v3/repos/acme/widget/pulls/2", "/api/v3/repos/other/gadget/pulls/2"]  # nothing fetched

    code, report, err = audited(venv, "2", "--installed", "--dist", "widget", "--api-url", server.base_url)
    assert (code, err) == (0, "")
    assert statuses(report) == {1: "applied", 2: "applied"}


@pytest.mark.slow
def test_a_build_from_the_prs_head_commit_is_told_apart_by_asking_github(
        gh: tuple[GitHubServer, GitRepo], tmp_path: Path) -> None:
    """Two projects installed from repositories; GitHub says PR #2's head is the commit one of them
    was built from (`+g<sha>` in its version): that one is the project."""
    server, repo = gh
    venv = fresh_venv(tmp_path / "venv")
    head = repo.git("rev-parse", "refs/pull/2/head")
    wheel = make_wheel(tmp_path / "fork", "widget", f"0.1.dev5+g{head[:9]}", pr_files(repo, "refs/pull/2/head"),
                       metadata=("Project-URL: Source, https://github.com/acme/widget",))
    install_into(wheel, venv.site)
    vcs_install(venv, "gadget", {"gadget/__init__.py": b""}, "https://github.com/other/gadget", None, "0" * 40)

    code, report, err = audited(venv, "2", "--installed", "--api-url", server.base_url)
    assert (code, err) == (0, "")
    assert statuses(report) == {1: "applied", 2: "applied"}
    assert f"widget was built from #2's head {head[:9]} of github.com/acme/widget" in header(report)


@pytest.mark.slow
def test_plan_and_upkeep_onto_the_installed_target_find_the_clone_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers.ghserver import build_stack

    monkeypatch.setenv("PRSTACK_CACHE_DIR", str(tmp_path / "cache"))
    clone = GitRepo(tmp_path / "src" / "widget")
    build_stack(clone)
    clone.git("tag", "v0.1", "main~1")
    clone.git("checkout", "--quiet", "--detach", "refs/pull/2/head")
    venv = fresh_venv(tmp_path / "venv")
    wheel = make_wheel(tmp_path / "dist", "widget", "0.1", {"_widget.pth": f"{clone.path / 'src'}\n".encode()})
    install_into(wheel, venv.site, direct_url={"url": clone.path.as_uri(), "dir_info": {"editable": True}})

    done = venv.run("-m", "prstack", "plan", "2", "--installed", "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    assert {p["number"]: p["status"] for p in json.loads(done.stdout)["prs"]} == {1: "present", 2: "present"}

    done = venv.run("-m", "prstack", "upkeep", "1", "--installed", "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    items = json.loads(done.stdout)["items"]
    assert [(i["pr"], i["verdict"]) for i in items] == [(1, "retire")]
