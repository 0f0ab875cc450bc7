"""PRs that collect others (a merge queue's or a combined PR, by merges or by cherry-picked
copies): each hunk is counted once, under the PR whose change introduced it; the collecting PR's
own change is what it adds beyond them ("carries #1, #2, #3; no change of its own" when nothing);
its title is its own; every commit of its history is under some PR or carried from one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.lines import text
from prstack.cli import main


def collecting(repo: GitRepo, how: str, own: bool) -> None:
    """#1, #2, #3 each change one file from main; #4 collects them (merges or cherry-picks), then
    (when `own`) changes pkg/d.py itself."""
    repo.commit("base", {f"pkg/{n}.py": text(n) for n in "abcd"})
    heads = {}
    for number, name in ((1, "a"), (2, "b"), (3, "c")):
        repo.branch(f"f{number}", "main")
        repo.commit(f"change {name}", {f"pkg/{name}.py": text(name, {10: f"{name} 10 by #{number}"})})
        heads[number] = repo.pr_ref(number)
    repo.branch("queue", "main")
    for number in (1, 2, 3):
        if how == "merge":
            repo.git("merge", "--quiet", "--no-ff", "--no-edit", f"f{number}")
        else:
            repo.git("-c", "commit.gpgsign=false", "cherry-pick", heads[number])
    if own:
        repo.commit("queue's own change", {"pkg/d.py": text("d", {3: "d 3 by #4"})})
    repo.pr_ref(4)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.mark.parametrize("how", ["merge", "cherry-pick"])
@pytest.mark.parametrize("own", [False, True])
@pytest.mark.slow
def test_each_hunk_is_counted_once_under_the_pr_that_introduced_it(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str, own: bool
) -> None:
    """Merged or cherry-picked, each collected PR's hunk is under that PR only; the collecting PR has its own
    change alone (or says it carries the others), and its title is not a collected PR's subject."""
    collecting(git_repo, how, own)
    tree = git_repo.archive("refs/pull/4/head", tmp_path / "tree")
    argv = ["audit", "4", "--git", str(git_repo.path), "--tree", str(tree), "--offline"]
    code, out = run(capsys, *argv, "--format", "json")
    assert code == 0
    report = json.loads(out)
    placed = sorted((h["pr"], h["path"]) for h in report["hunks"])
    assert placed == [(1, "pkg/a.py"), (2, "pkg/b.py"), (3, "pkg/c.py"), *([(4, "pkg/d.py")] if own else [])]
    prs = {p["number"]: p for p in report["prs"]}
    assert prs[4]["depends_on"] == [1, 2, 3]
    code, table = run(capsys, *argv)
    flat = " ".join(table.split())
    if own:
        assert "queue's own change" in flat and "carries" not in flat
    else:
        assert "#4 carries #1, #2, #3; no change of its own." in flat
        assert "change a*" in flat and flat.count("change a") == 1  # #4's title is not #1's subject


@pytest.mark.parametrize("how", ["merge", "cherry-pick"])
@pytest.mark.slow
def test_a_drop_of_one_collected_pr_is_found_under_that_pr(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    """The collecting PR's tree with #2's change reverted: exit 1, exactly #2's hunk not present."""
    collecting(git_repo, how, own=True)
    tree = git_repo.archive("refs/pull/4/head", tmp_path / "tree")
    (tree / "pkg/b.py").write_text(text("b"))
    code, out = run(capsys, "audit", "4", "--git", str(git_repo.path), "--tree", str(tree), "--offline",
                    "--format", "json")
    assert code == 1
    lacking = [(h["pr"], h["path"]) for h in json.loads(out)["hunks"] if h["status"] not in ("applied", "relocated")]
    assert lacking == [(2, "pkg/b.py")]


@pytest.mark.parametrize("how", ["merge", "cherry-pick"])
@pytest.mark.slow
def test_every_commit_is_under_a_pr_or_carried_from_one(
    git_repo: GitRepo, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    """The graph gives every commit of the stack a PR that owns it or the PR it is carried from, and the
    collecting PR owns its merges and its own commit, never a collected PR's commit."""
    collecting(git_repo, how, own=True)
    code, out = run(capsys, "graph", "4", "--git", str(git_repo.path), "--offline", "--format", "json")
    assert code == 0
    graph = json.loads(out)
    commits = [c for p in graph["prs"] for c in p["commits"]]
    assert commits and all(c["pr"] is not None or c["carried_from"] is not None for c in commits)
    top = next(p for p in graph["prs"] if p["number"] == 4)
    own = [c["subject"] for c in top["commits"] if c["pr"] == 4]
    assert own[-1] == "queue's own change"
    assert not any(c["subject"].startswith("change ") for c in top["commits"] if c["pr"] == 4)
