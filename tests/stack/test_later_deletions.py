"""Files a lower PR adds that a later commit of the top's own branch deletes or moves (a package's
`__init__.py`, a module moved into another folder, an example, a dataset module): the top's own tree
holds the stack, every hunk present; a build without the moved file lacks it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.cli import main


def module(name: str, n: int = 30) -> str:
    return "".join(f"def {name}_{i}(x):\n    return x + {i}\n\n\n" for i in range(n))


@pytest.fixture
def stack(git_repo: GitRepo) -> GitRepo:
    """#1 adds a package with its __init__.py, a module, an example and a dataset module; #2 on it
    edits the core, then deletes the package's __init__.py and the example, moves the module into
    another folder and the dataset module into `datasets/` (edited a little), then edits the core again."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": module("core")})
    git_repo.branch("feature")
    git_repo.commit("#1: transforms, an example, a dataset", {
        "pkg/transforms/__init__.py": "from pkg.transforms.utils import utils_0\n",
        "pkg/transforms/utils.py": module("utils"),
        "examples/recipe.py": module("recipe", 8),
        "pkg/data/ds.py": module("ds", 20),
        "pkg/core.py": module("core").replace("return x + 3\n", "return x + 3  # by #1\n"),
    })
    git_repo.pr_ref(1)
    core = module("core").replace("return x + 3\n", "return x + 3  # by #1\n")
    git_repo.commit("#2: core", {"pkg/core.py": core.replace("return x + 20\n", "return x + 20  # by #2\n")})
    git_repo.git("rm", "-q", "pkg/transforms/__init__.py", "examples/recipe.py")
    git_repo.git("mv", "pkg/transforms/utils.py", "pkg/utils.py")
    (git_repo.path / "pkg/datasets").mkdir()
    git_repo.git("mv", "pkg/data/ds.py", "pkg/datasets/ds.py")
    git_repo.commit("#2: flatten the package", {
        "pkg/datasets/ds.py": module("ds", 20).replace("return x + 7\n", "return x + 7  # moved\n")})
    git_repo.commit("#2: core again", {"pkg/core.py": core.replace("return x + 20\n", "return x + 21\n")})
    git_repo.pr_ref(2)
    return git_repo


def audit(capsys: pytest.CaptureFixture[str], repo: GitRepo, tree: Path) -> tuple[int, list[dict[str, object]]]:
    code = main(["audit", "2", "--git", str(repo.path), "--tree", str(tree), "--offline", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)["hunks"]


def test_the_tops_own_tree_holds_the_files_its_branch_deleted_or_moved_as_it_left_them(
    stack: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The top's head tree: exit 0, every hunk of a shipped file present, none of the lower PR's
    added files missing."""
    tree = stack.archive("refs/pull/2/head", tmp_path / "tree")
    code, hunks = audit(capsys, stack, tree)
    assert code == 0, [(h["pr"], h["path"], h["status"]) for h in hunks]
    assert all(h["status"] in ("applied", "relocated") for h in hunks if h["path"] != "examples/recipe.py")
    # (the example's folder is gone with it: the tree ships no examples/, so its hunks are not shipped)
    assert {h["status"] for h in hunks if h["path"] == "examples/recipe.py"} == {"not-shipped"}
    assert {h["path"] for h in hunks if h["pr"] == 1} >= {"pkg/transforms/utils.py", "pkg/data/ds.py"}


@pytest.mark.parametrize("gone", ["pkg/utils.py", "pkg/datasets/ds.py"])
def test_a_build_without_a_moved_file_lacks_the_lower_prs_lines(
    stack: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], gone: str
) -> None:
    """Without the moved file, the lines the lower PR added in it are not present: exit 1."""
    tree = stack.archive("refs/pull/2/head", tmp_path / "tree")
    (tree / gone).unlink()
    code, hunks = audit(capsys, stack, tree)
    assert code == 1
    assert any(h["status"] not in ("applied", "relocated") for h in hunks if h["pr"] == 1)


def test_a_build_still_holding_a_deleted_file_lacks_the_tops_deletion(
    stack: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example the top deleted still there: the top's deletion is not present (exit 1)."""
    tree = stack.archive("refs/pull/2/head", tmp_path / "tree")
    shutil.copytree(stack.archive("refs/pull/1/head", tmp_path / "lower") / "examples", tree / "examples")
    code, hunks = audit(capsys, stack, tree)
    assert code == 1
    assert any(h["path"] == "examples/recipe.py" and h["status"] not in ("applied", "relocated") for h in hunks)
