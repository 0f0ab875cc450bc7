"""The matcher's case table once more, end to end: a real repository with refs/pull/1/head, a tree
target, and `prstack audit --format json` (the statuses a user's CI would read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.matcher import TABLE, case_repo
from prstack.cli import main
from prstack.models import HunkStatus


def _audit(tmp_path: Path, base: str, head: str, target: str | None, other: str,
           capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    repo, tree = case_repo(tmp_path, base, head, target, other)
    code = main(["audit", "1", "--git", str(repo), "--tree", str(tree), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "prstack.audit/2"
    return code, [h["status"] for h in data["hunks"]]


@pytest.mark.parametrize(("name", "base", "head", "target", "want", "other"), TABLE,
                         ids=[c[0] for c in TABLE])
@pytest.mark.slow
def test_case_table_through_the_cli(
    name: str, base: str, head: str, target: str | None, want: list[HunkStatus], other: str,
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    code, got = _audit(tmp_path, base, head, target, other, capsys)
    assert got == [w.value for w in want], name
    assert code == (0 if all(w.present for w in want) else 1)
