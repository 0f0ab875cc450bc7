"""A move explained otherwise, end to end: a real repository and a tree target; a dropped hunk whose block is in
another module is relocated only when neither the PR's base nor another PR explains it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.cli import main

BLOCK = ("    log.debug('enter %s', self.name)\n    metrics.incr('calls.' + self.kind)\n"
         "    self.trail.append((self.name, clock()))\n")
MOD = "".join(f"    step_{i}(x)\n" for i in range(20))
OTHER = "".join(f"    other_{i}(x)\n" for i in range(20))


def _audit(tmp_path: Path, *, other_at_base: str, other_in_target: str,
           capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": MOD, "pkg/other.py": other_at_base})
    repo.branch("pr")
    repo.commit("the change", {"pkg/mod.py": MOD.replace("    step_10(x)\n", BLOCK + "    step_10(x)\n")})
    repo.pr_ref(1)
    repo.git("checkout", "--quiet", "main")
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg/__init__.py").write_text("")
    (tree / "pkg/mod.py").write_text(MOD)  # (the hunk dropped)
    (tree / "pkg/other.py").write_text(other_in_target)
    main(["audit", "1", "--git", str(repo.path), "--tree", str(tree), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    (hunk,) = data["hunks"]
    return hunk  # type: ignore[no-any-return]


@pytest.mark.slow
def test_a_block_there_at_the_base_is_no_move(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = OTHER[:30] + BLOCK + OTHER[30:]
    hunk = _audit(tmp_path, other_at_base=copy, other_in_target=copy, capsys=capsys)
    assert hunk["status"] == "missing"
    assert hunk["found_path"] is None


def test_a_block_new_in_another_module_is_a_move(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = OTHER[:30] + BLOCK + OTHER[30:]
    hunk = _audit(tmp_path, other_at_base=OTHER, other_in_target=copy, capsys=capsys)
    assert hunk["status"] == "relocated"
    assert hunk["found_path"] == "pkg/other.py"
