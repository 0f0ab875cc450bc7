"""The git transport: PR heads fetched blobless from a local remote into the managed cache repo."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.ghserver import build_stack
from prstack.errors import InputError, SourceError
from prstack.sources.git.changes import load_changes
from prstack.sources.github.fetch import CacheRepo, auth_env


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    repo = GitRepo(tmp_path_factory.mktemp("tr") / "upstream")
    heads = build_stack(repo)
    return repo.path, heads


def missing_objects(path: Path) -> int:
    out = subprocess.run(
        ["git", "-C", str(path), "rev-list", "--objects", "--missing=print", "--all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sum(1 for line in out.splitlines() if line.startswith("?"))


@pytest.mark.slow
def test_fetch_blobless_then_audit_reads_lazily(
    upstream: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    path, heads = upstream
    store = CacheRepo(tmp_path / "cache.git", path.as_uri())
    assert store.head_of(2) is None
    store.fetch([1, 2], "main")
    assert (store.head_of(1), store.head_of(2)) == (heads["a"], heads["b"])
    assert missing_objects(store.path) > 0  # blobless: no file contents yet
    source = store.source()
    assert source.default_ref == "refs/remotes/origin/HEAD"
    changes = load_changes(source, [2])
    assert [pr.number for pr in changes.prs] == [1, 2]
    assert [len(pr.commits) for pr in changes.prs] == [4, 6]
    assert changes.prs[1].depends_on == (1,)
    assert {h.path for h in changes.hunks} == {
        "src/widget/core.py",
        "src/widget/extra.py",
        "tests/test_extra.py",
    }
    assert source.objects.file_at(heads["b"], "src/widget/extra.py") == b"VALUE = 42\n"
    objects = {stat.S_IMODE(p.lstat().st_mode) for p in (store.path / "objects").rglob("*")}
    assert objects and not any(mode & 0o077 for mode in objects)  # (no fetched code is readable by others)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o700


def test_refetch_moves_a_force_pushed_head(
    upstream: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    path, heads = upstream
    store = CacheRepo(tmp_path / "cache.git", path.as_uri())
    store.fetch([2], "main")
    subprocess.run(
        ["git", "-C", str(path), "update-ref", "refs/pull/2/head", heads["a"]], check=True
    )
    try:
        store.fetch([2], "main")
        assert store.head_of(2) == heads["a"]
    finally:
        subprocess.run(
            ["git", "-C", str(path), "update-ref", "refs/pull/2/head", heads["b"]], check=True
        )


def test_unknown_pr_ref(upstream: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    store = CacheRepo(tmp_path / "cache.git", upstream[0].as_uri())
    with pytest.raises(InputError, match=r"no refs/pull/N/head for PR #77; check the PR numbers"):
        store.fetch([77], "main")


def test_unreachable_remote(tmp_path: Path) -> None:
    store = CacheRepo(tmp_path / "cache.git", (tmp_path / "nowhere").as_uri())
    with pytest.raises(SourceError, match=r"cannot fetch from .*`offline`.*`git` PATH"):
        store.fetch([1], "main")


def test_token_goes_in_the_environment_only_for_https() -> None:
    env = auth_env("https://github.com/acme/widget.git", "tok")
    assert env["GIT_CONFIG_KEY_0"] == "http.https://github.com/.extraheader"
    assert env["GIT_CONFIG_VALUE_0"].startswith("AUTHORIZATION: basic ")
    assert "tok" not in env["GIT_CONFIG_VALUE_0"]  # base64, and never on a command line
    assert auth_env("file:///tmp/x", "tok") == {} and auth_env("https://h/x", None) == {}


def test_offline_source_never_fetches_lazily(
    upstream: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    path, heads = upstream
    store = CacheRepo(tmp_path / "cache.git", path.as_uri())
    store.fetch([1, 2], "main")
    assert store.source(offline=True).objects.file_at(heads["b"], "src/widget/extra.py") is None
    assert store.source().objects.file_at(heads["b"], "src/widget/extra.py") == b"VALUE = 42\n"
    assert store.source(offline=True).objects.file_at(heads["b"], "src/widget/extra.py") == b"VALUE = 42\n"
