"""Which repository: --repo, remote URLs, distribution metadata, PRSTACK_REPO, pyproject."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.errors import InputError
from prstack.placement.forge import RepoId, parse_repo, repo_from_url
from prstack.sources.github.repo_id import infer_repo, repo_from_git
from prstack.targets.repos import repos_from_metadata


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/vllm-project/vllm",
        "https://github.com/vllm-project/vllm.git",
        "https://github.com/vllm-project/vllm/tree/main/docs",
        "git@github.com:vllm-project/vllm.git",
        "ssh://git@github.com/vllm-project/vllm.git",
        "git+https://github.com/vllm-project/vllm@3cfc8f8b7",
        "https://www.github.com/vllm-project/vllm#readme",
    ],
)
def test_urls(url: str) -> None:
    assert repo_from_url(url) == RepoId("vllm-project", "vllm")


def test_other_hosts_only_when_asked() -> None:
    assert repo_from_url("https://gitlab.com/a/b") is None
    assert repo_from_url("https://ghe.corp/a/b.git", any_host=True) == RepoId("a", "b", "ghe.corp")
    assert repo_from_url("https://github.com/sponsors") is None


def test_parse_repo() -> None:
    assert parse_repo("pypa/pip") == RepoId("pypa", "pip")
    assert parse_repo("https://github.com/pypa/pip") == RepoId("pypa", "pip")
    with pytest.raises(InputError, match="OWNER/NAME"):
        parse_repo("pip")


def test_metadata() -> None:
    text = (
        "Metadata-Version: 2.1\nName: kvserve\nHome-page: https://kvserve.dev\n"
        "Project-URL: Source, https://github.com/acme/kvserve\n"
        "Project-URL: Docs, https://docs.example/kvserve\n\nbody\n"
    )
    assert repos_from_metadata(text) == {RepoId("acme", "kvserve")}
    direct = json.dumps({"url": "https://github.com/fork/kvserve.git", "vcs_info": {"vcs": "git"}})
    assert repos_from_metadata("Name: x\n", direct) == {RepoId("fork", "kvserve")}


def test_from_git_remote(git_repo: GitRepo) -> None:
    git_repo.commit("c", {"a": "1"})
    git_repo.git("remote", "add", "origin", "git@github.com:me/widget.git")
    assert repo_from_git(git_repo.path) == RepoId("me", "widget")
    git_repo.git("remote", "add", "upstream", "https://github.com/acme/widget")
    assert repo_from_git(git_repo.path) == RepoId("acme", "widget")
    assert infer_repo(git_path=git_repo.path, env={}) == RepoId("acme", "widget")


def test_inference_order(tmp_path: Path) -> None:
    one = [("kvserve", frozenset({RepoId("acme", "kvserve")}))]
    assert infer_repo(explicit="a/b", dists=one, env={"PRSTACK_REPO": "c/d"}) == RepoId("a", "b")
    assert infer_repo(dists=one, env={"PRSTACK_REPO": "c/d"}, cwd=tmp_path) == RepoId(
        "acme", "kvserve"
    )
    assert infer_repo(env={"PRSTACK_REPO": "c/d"}, cwd=tmp_path) == RepoId("c", "d")
    (tmp_path / "pyproject.toml").write_text('[tool.prstack]\nrepo = "e/f"\n')
    assert infer_repo(env={}, cwd=tmp_path) == RepoId("e", "f")


def test_ambiguity_lists_the_candidates(tmp_path: Path) -> None:
    two = [("a", frozenset({RepoId("acme", "a")})), ("b", frozenset({RepoId("acme", "b")}))]
    with pytest.raises(InputError, match=r"acme/a \(a\), acme/b \(b\).*`repo` OWNER/NAME"):
        infer_repo(dists=two, env={}, cwd=tmp_path)
    with pytest.raises(InputError, match=r"none found.*`repo` OWNER/NAME"):
        infer_repo(env={}, cwd=tmp_path)
