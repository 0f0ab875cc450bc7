"""The matcher's case table once more, end to end: a real repository with refs/pull/1/head, a tree
target, and `prstack audit --format json` (the statuses a user's CI would read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from matcher_helpers import BASE, CASES, FM, HEAD, PATH, A, D, M, P, R
from prstack.cli import main
from prstack.models import HunkStatus

OTHER = "pkg/other.py"
INIT = "pkg/__init__.py"
BLOCK = "def helper(value):\n    scaled = value * factor\n    return clamp(scaled, low, high)\n"
NUMBERS = "".join(f"line {i}\n" for i in range(30))

EXTRA: list[tuple[str, str, str, str | None, list[HunkStatus], str]] = [
    ("relocated", NUMBERS, NUMBERS.replace("line 10\n", "line 10\n" + BLOCK), NUMBERS,
     [R], "import x\n\n" + BLOCK),
    ("file missing", BASE, HEAD, None, [FM, FM], "x = 1\n"),
    ("moved module", BASE, HEAD, None, [R, R], HEAD),
    ("partial", NUMBERS, NUMBERS.replace("line 10\n", "LINE 10\n").replace("line 12\n", "LINE 12\n"),
     NUMBERS.replace("line 10\n", "LINE 10\n"), [P], "x = 1\n"),
    ("deleted file, gone", BASE, "", None, [A], "x = 1\n"),
    ("deleted file, kept", BASE, "", BASE, [M], "x = 1\n"),
    ("new file", "", HEAD, HEAD, [A], "x = 1\n"),
    ("new file, rewritten", "", "def f():\n    return 1\n", "def g():\n    return 2\n", [D],
     "x = 1\n"),
]
TABLE = [(name, b, h, t, want, "x = 1\n") for name, b, h, t, want, _ in CASES] + EXTRA


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
    assert data["schema"] == "prstack.audit/1"
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
