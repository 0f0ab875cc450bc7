"""The package at a PR's base: a block's presence there, read only from the files the target changed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from conftest import GitRepo
from prstack.match.base_package import PackageAtBase
from prstack.match.package import PackageIndex
from prstack.sources.git.repo import GitClone

BLOCK = ["    record_metric('requests', count)", "    log.info('handled %s', count)"]
SAME = "def same(count):\n" + "\n".join(BLOCK) + "\n"
CHANGED_AT_BASE = "def changed(count):\n" + "\n".join(BLOCK) + "\n    return count\n"
OTHER = "def other():\n    return 1\n"


def _at_base(git_repo: GitRepo, target: Mapping[str, bytes]) -> tuple[PackageAtBase, list[list[str]]]:
    """The package at the repository's HEAD, against a target of `target`'s files (installed at
    the repository's paths under site/), and the blob ids each read was asked for."""
    source = GitClone(git_repo.path)
    asked: list[list[str]] = []

    def read(blobs: Sequence[str]) -> dict[str, bytes]:
        asked.append(list(blobs))
        return {blob: data for blob in blobs if (data := source.objects.file_at(blob, "")) is not None}

    rev = source.resolve("HEAD")
    at_base = PackageAtBase(lambda: source.objects.tree_blobs(rev), read, PackageIndex(lambda: dict(target)),
                            lambda path: f"site/{path}")
    return at_base, asked


def test_a_block_in_a_file_the_target_holds_as_it_was_is_found_without_reading(git_repo: GitRepo) -> None:
    git_repo.commit("base", {"pkg/same.py": SAME, "pkg/changed.py": CHANGED_AT_BASE, "pkg/other.py": OTHER})
    target = {"site/pkg/same.py": SAME.encode(), "site/pkg/changed.py": b"def changed(count):\n    pass\n",
              "site/pkg/other.py": OTHER.encode()}
    at_base, asked = _at_base(git_repo, target)
    assert at_base.find_block(BLOCK) == ("site/pkg/same.py", 2)
    assert asked == []  # no file of the base was read: the target's copy is the base's


def test_a_block_only_in_a_file_changed_since_is_read_from_the_base_alone(git_repo: GitRepo) -> None:
    git_repo.commit("base", {"pkg/changed.py": CHANGED_AT_BASE, "pkg/other.py": OTHER, "pkg/gone.py": OTHER + "#\n"})
    target = {"site/pkg/changed.py": b"def changed(count):\n    pass\n", "site/pkg/other.py": OTHER.encode()}
    at_base, asked = _at_base(git_repo, target)
    assert at_base.find_block(BLOCK) == ("pkg/changed.py", 2)
    changed, gone = (git_repo.git("rev-parse", f"HEAD:pkg/{name}") for name in ("changed.py", "gone.py"))
    assert asked == [sorted([changed, gone])]  # one batch: the files the target lacks or changed, not other.py
    assert at_base.find_block(["    never_there(count)", "    nor_this(count)"]) is None
    assert len(asked) == 1  # read once


def test_a_block_the_target_holds_only_in_a_changed_file_was_not_at_the_base(git_repo: GitRepo) -> None:
    git_repo.commit("base", {"pkg/changed.py": "def changed(count):\n    pass\n", "pkg/other.py": OTHER})
    target = {"site/pkg/changed.py": CHANGED_AT_BASE.encode(), "site/pkg/other.py": OTHER.encode()}
    at_base, _ = _at_base(git_repo, target)
    assert at_base.find_block(BLOCK) is None
