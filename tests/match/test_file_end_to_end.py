"""The matcher's case table once more, end to end: a real repository with refs/pull/1/head, a tree
target, and `prstack audit --format json` (the statuses a user's CI would read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.matcher import INIT, OTHER, PATH, TABLE
from prstack.cli import main
from prstack.models import HunkStatus


def _audit(tmp_path: Path, base: str, head: str, target: str | None, other: str,
           capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {INIT: "", OTHER: "x = 1\n", **({PATH: base} if base else {})})
    repo.branch("pr")
    repo.commit("the change", {PATH: head or None})
    repo.pr_ref(1)
    repo.git("checkout", "--quiet", "main")
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / INIT).write_text("")
    (tree / OTHER).write_text(other)
    if target is not None:
        (tree / PATH).write_bytes(target.encode("utf-8", "surrogateescape"))
    code = main(["audit", "1", "--git", str(repo.path), "--tree", str(tree), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "prstack.audit/2"
    return code, [h["status"] for h in data["hunks"]]


@pytest.mark.parametrize(("name", "base", "head", "target", "want", "other"), TABLE,
                         ids=[c[0] for c in TABLE])
def test_case_table_through_the_cli(
    name: str, base: str, head: str, target: str | None, want: list[HunkStatus], other: str,
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    code, got = _audit(tmp_path, base, head, target, other, capsys)
    assert got == [w.value for w in want], name
    assert code == (0 if all(w.present for w in want) else 1)
