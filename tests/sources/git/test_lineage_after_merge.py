"""Lineage after merge on real repositories built here: a merged PR is present in every release whose
history holds its landing commit, however upstream rewrote, moved or took back its lines since; the
target is tied to a release by its version's tag or by content, and judged by text where it cannot be."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.targets import make_wheel
from prstack.cli import main

MOD = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(1, 13))


def _audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["audit", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _upkeep(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["upkeep", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _wheel(repo: GitRepo, tag: str, out: Path, version: str | None = None,
           edit: dict[str, bytes] | None = None) -> Path:
    """The wheel of the release `tag`: its pkg/ files as the tag holds them (with `edit` over them)."""
    names = repo.git("ls-tree", "-r", "--name-only", tag, "pkg").split()
    files = {n: _blob(repo, tag, n) for n in names} | (edit or {})
    return make_wheel(out, "pkg", version or tag.removeprefix("v"), files)


def _blob(repo: GitRepo, tag: str, name: str) -> bytes:
    import subprocess

    return subprocess.run(["git", "-C", str(repo.path), "show", f"{tag}:{name}"], capture_output=True,
                          check=True).stdout


def _squash_pr(r: GitRepo) -> str:
    """main: base (v1.0); PR #5 changes f3 and adds a helper; squash-merged as "(#5)"; returns its head."""
    r.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": MOD, "README.md": "x\n"})
    r.git("tag", "v1.0")
    r.branch("fix")
    fixed = MOD.replace("return x + 3\n", "return x + 3 + 1  # off by one\n")
    fixed += "def helper(value):\n    return value * 2\n"
    r.commit("Fix the off-by-one in f3", {"pkg/mod.py": fixed})
    head = r.pr_ref(5)
    r.git("checkout", "-q", "main")
    r.git("merge", "--squash", "fix")
    r.git("-c", "commit.gpgsign=false", "commit", "-q", "-m", "Fix the off-by-one in f3 (#5)")
    return head


@pytest.mark.slow
def test_a_squash_merged_pr_rewritten_upstream_before_the_release_is_present_through_the_rewrite(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A later upstream commit (#9) rewrites the PR's line before the release: the release's wheel
    holds the PR (exit 0), the hunk applied and `superseded_by` that commit with its PR; the release
    before the squash does not (exit 1); the PR's landing and first release are in the JSON."""
    r = git_repo
    _squash_pr(r)
    text = (r.path / "pkg/mod.py").read_text()
    r.commit("Reword f3 (#9)", {"pkg/mod.py": text.replace("return x + 3 + 1  # off by one", "return x + 4")})
    rewrite = r.git("rev-parse", "HEAD")
    r.git("tag", "v1.1")
    code, data = _audit(capsys, "5", "--git", str(r.path), "--wheel", str(_wheel(r, "v1.1", tmp_path / "a")))
    assert code == 0, data["hunks"]
    assert data["target"]["build"]["placed"]["how"] == "version-tag"
    assert data["prs"][0]["landed"]["how"] == "squash" and data["prs"][0]["landed"]["first_release"] == "v1.1"
    rewritten = [h for h in data["hunks"] if h["superseded_by"]]
    assert rewritten and rewritten[0]["superseded_by"] == {"pr": 9, "commit": rewrite, "upstream": True}
    assert "since rewritten by" in rewritten[0]["note"]
    assert main(["audit", "5", "--git", str(r.path), "--wheel", str(_wheel(r, "v1.1", tmp_path / "v")),
                 "--verbose"]) == 0
    table = capsys.readouterr().out
    assert f"as {rewrite[:10]} rewrote it since:" in table and "+    return x + 4" in table
    assert "merged in v1.1" in table
    code, data = _audit(capsys, "5", "--git", str(r.path), "--wheel", str(_wheel(r, "v1.0", tmp_path / "c")))
    assert code == 1
    assert any(h["status"] == "missing" for h in data["hunks"])


def test_a_merged_pr_whose_file_was_moved_and_edited_later_is_relocated_with_the_commit_that_moved_it(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Upstream moves pkg/mod.py to pkg/legacy/mod.py and edits it after the merge: against the
    newest release every shipped hunk is present, relocated to the new path, naming the move."""
    r = git_repo
    _squash_pr(r)
    r.git("tag", "v1.1")
    text = (r.path / "pkg/mod.py").read_text()
    r.git("mv", "pkg/mod.py", "pkg/legacy_mod.py")
    r.commit("Move mod to legacy_mod (#12)", {"pkg/legacy_mod.py": "# kept for old callers\n" + text
                                              .replace("return value * 2", "return value * 2  # doubled")})
    move = r.git("rev-parse", "HEAD")
    r.git("tag", "v2.0")
    code, data = _audit(capsys, "5", "--git", str(r.path), "--wheel", str(_wheel(r, "v2.0", tmp_path / "b")))
    assert code == 0, data["hunks"]
    shipped = [h for h in data["hunks"] if h["status"] != "not-shipped"]
    assert shipped and all(h["status"] == "relocated" for h in shipped)
    assert {h["found_path"] for h in shipped} == {"pkg/legacy_mod.py"}
    assert any(move[:10] in h["note"] for h in shipped)


@pytest.mark.slow
def test_a_reverted_pr_is_missing_with_the_revert_named_and_present_again_once_re_landed(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """v1.1 holds the squash, v1.2 its revert, v1.3 the revert of the revert: v1.2 exits 1 naming
    the revert; v1.1 and v1.3 exit 0; upkeep's first release is v1.1 and v1.3 retires it."""
    r = git_repo
    _squash_pr(r)
    squash = r.git("rev-parse", "HEAD")
    r.git("tag", "v1.1")
    r.git("revert", "--no-edit", squash)
    revert = r.git("rev-parse", "HEAD")
    r.git("tag", "v1.2")
    code, data = _audit(capsys, "5", "--git", str(r.path), "--wheel", str(_wheel(r, "v1.2", tmp_path / "r")))
    assert code == 1
    assert any(h["status"] == "missing" and revert[:10] in (h["note"] or "") for h in data["hunks"])
    r.git("revert", "--no-edit", revert)
    r.git("tag", "v1.3")
    for tag in ("v1.1", "v1.3"):
        code, data = _audit(capsys, "5", "--git", str(r.path), "--wheel", str(_wheel(r, tag, tmp_path / tag)))
        assert code == 0, (tag, data["hunks"])
    code, data = _upkeep(capsys, "5", "--git", str(r.path), "--onto", "v1.2")
    assert data["items"][0]["verdict"] != "retire"
    code, data = _upkeep(capsys, "5", "--git", str(r.path), "--onto", "v1.3")
    assert data["items"][0]["verdict"] == "retire" and data["items"][0]["first_release"] == "v1.1"


@pytest.mark.slow
def test_a_backport_cherry_picked_onto_a_release_branch_is_held_by_that_branch_s_release(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The squash lands on main after v1.0; `git cherry-pick -x` puts it on release-1.0, tagged v1.0.1,
    which does not contain the landing commit: the backport release holds the PR (exit 0), and is
    the PR's first release, before v1.1 on main."""
    r = git_repo
    _squash_pr(r)
    squash = r.git("rev-parse", "HEAD")
    r.commit("Unrelated on main (#6)", {"README.md": "y\n"})
    r.git("tag", "v1.1")
    r.branch("release-1.0", "v1.0")
    r.git("cherry-pick", "-x", squash)
    r.git("tag", "v1.0.1")
    code, data = _audit(capsys, "5", "--git", str(r.path), "--wheel", str(_wheel(r, "v1.0.1", tmp_path / "p")))
    assert code == 0, data["hunks"]
    assert data["prs"][0]["landed"]["first_release"] == "v1.0.1"
    code, data = _upkeep(capsys, "5", "--git", str(r.path), "--onto", "v1.0.1")
    assert data["items"][0]["verdict"] == "retire"


def test_a_wheel_whose_version_names_a_tag_but_whose_files_differ_is_not_placed_and_judged_by_text(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fork's build with the version of v1.1 whose mod.py lacks the rewritten line: not placed at
    v1.1 (the reason says the files differ), and the hunk whose lines it lacks is not present."""
    r = git_repo
    _squash_pr(r)
    r.git("tag", "v1.1")
    fork = MOD + "def helper(value):\n    return value * 2\n"  # the helper, without the f3 fix
    wheel = _wheel(r, "v1.1", tmp_path / "f", edit={"pkg/mod.py": fork.encode()})
    code, data = _audit(capsys, "5", "--git", str(r.path), "--wheel", str(wheel))
    assert code == 1
    placed = data["target"]["build"]["placed"]
    assert placed["ref"] is None and "v1.1" in placed["reason"] and "differ" in placed["reason"]
    assert any(h["status"] == "missing" for h in data["hunks"])


def test_a_tree_without_version_is_placed_by_content_at_the_release_whose_files_it_holds(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A plain tree of v1.1's files, where a later commit rewrote the PR's added lines: placed by
    content at v1.1 (files matched counted), exit 0 with the rewrite named; a tree of v1.0 exit 1."""
    r = git_repo
    _squash_pr(r)
    text = (r.path / "pkg/mod.py").read_text()
    r.commit("Rename helper (#11)", {"pkg/mod.py": text.replace("def helper(value):", "def helper(value: int):")})
    r.git("tag", "v1.1")
    tree = r.archive("v1.1", tmp_path / "t11")
    (tree / ".git").mkdir()  # no checkout HEAD to read: the place comes from content alone
    code, data = _audit(capsys, "5", "--git", str(r.path), "--tree", str(tree))
    assert code == 0, data["hunks"]
    placed = data["target"]["build"]["placed"]
    assert placed["how"] == "content" and placed["name"] == "v1.1"
    assert placed["files_matched"] == placed["files_compared"] >= 1
    assert any((h["superseded_by"] or {}).get("pr") == 11 for h in data["hunks"])
    code, _ = _audit(capsys, "5", "--git", str(r.path), "--tree", str(r.archive("v1.0", tmp_path / "t10")))
    assert code == 1


def test_a_merged_pr_s_file_rewritten_then_deleted_names_the_commit_that_deleted_it(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#5's lines rewritten by #11, then their file deleted by #12, before v1.1: v1.1's wheel holds
    #5 (exit 0), and each hunk's note names #12's commit as the one that deleted the file."""
    r = git_repo
    _squash_pr(r)
    text = (r.path / "pkg/mod.py").read_text()
    r.commit("Rename helper (#11)", {"pkg/mod.py": text.replace("def helper(value):", "def helper(value: int):")})
    deleted = r.commit("Drop mod (#12)", {"pkg/mod.py": None})
    r.git("tag", "v1.1")
    code, data = _audit(capsys, "5", "--git", str(r.path), "--wheel", str(_wheel(r, "v1.1", tmp_path / "w")))
    assert code == 0, data["hunks"]
    notes = [h["note"] for h in data["hunks"] if h["path"] == "pkg/mod.py"]
    assert notes and all(f"its file deleted since by {deleted[:10]}" in n for n in notes), notes


def test_a_tree_sharing_only_absent_files_with_a_release_is_not_placed_there(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#5 changes mod.py and adds extra.py, squash-landed; extra.py is deleted later, then v1.1: a
    fork's tree of the base with f1 edited holds no release's mod.py and no extra.py, sharing with
    every release (each holding #5's landing) only the absence of extra.py. It is placed nowhere,
    and #5's hunks are not present (exit 1), extra.py never "applied" through the later deletion."""
    r = git_repo
    base = r.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": MOD})
    r.branch("fix")
    r.commit("Fix f3 and add extra", {"pkg/mod.py": MOD.replace("return x + 3\n", "return x + 3 + 1\n"),
                                      "pkg/extra.py": "def extra():\n    return 1\n"})
    r.pr_ref(5)
    r.git("checkout", "-q", "main")
    r.git("merge", "--squash", "fix")
    r.git("-c", "commit.gpgsign=false", "commit", "-q", "-m", "Fix f3 and add extra (#5)")
    r.commit("Drop extra (#12)", {"pkg/extra.py": None})
    r.git("tag", "v1.1")
    tree = r.archive(base, tmp_path / "t10")
    (tree / "pkg/mod.py").write_text(MOD.replace("return x + 1\n", "return x + 1  # the fork's\n"))
    (tree / ".git").mkdir()  # no checkout HEAD to read: the place comes from content alone
    code, data = _audit(capsys, "5", "--git", str(r.path), "--tree", str(tree))
    assert code == 1, data["hunks"]
    assert data["target"]["build"]["placed"]["ref"] is None
    verdicts = {h["path"]: h["status"] for h in data["hunks"]}
    assert verdicts == {"pkg/mod.py": "missing", "pkg/extra.py": "file-missing"}


@pytest.mark.slow
def test_upkeep_retires_a_pr_merged_long_ago_whose_lines_upstream_rewrote_and_names_its_first_release(
        git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    """Merged before v1.1, rewritten before v1.2, its file moved before v2.0: first_release is v1.1
    (the first tag holding the squash), and every later release retires it."""
    r = git_repo
    _squash_pr(r)
    r.git("tag", "v1.1")
    text = (r.path / "pkg/mod.py").read_text()
    r.commit("Reword (#20)", {"pkg/mod.py": text.replace("return value * 2", "return 2 * value")})
    r.git("tag", "v1.2")
    r.git("mv", "pkg/mod.py", "pkg/core.py")
    r.commit("Move (#21)", {})
    r.git("tag", "v2.0")
    for onto in ("v1.1", "v1.2", "v2.0"):
        code, data = _upkeep(capsys, "5", "--git", str(r.path), "--onto", onto)
        item = data["items"][0]
        assert (item["verdict"], item["first_release"]) == ("retire", "v1.1"), (onto, item)
        assert code == 0


@pytest.mark.slow
def test_a_pr_collected_into_the_squash_of_the_pr_above_it_landed_with_it(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#1 adds a helper, #2 (on #1) rewrites the helper and calls it; only #2's squash, holding
    both, lands on main, and a later commit rewrites the call: the release holds both PRs (exit 0,
    both `merged` with a landing), and the release before holds neither (exit 1)."""
    r = git_repo
    r.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": MOD})
    r.git("tag", "v1.0")
    r.branch("one")
    r.commit("Add helper", {"pkg/mod.py": MOD + "def helper(value):\n    return value * 2\n"})
    r.pr_ref(1)
    r.branch("two")
    r.commit("Use helper", {"pkg/mod.py": MOD.replace("return x + 5\n", "return helper(x) + 5\n")
                            + "def helper(value):\n    return value * 3\n"})
    r.pr_ref(2)
    r.git("checkout", "-q", "main")
    r.git("merge", "--squash", "two")
    r.git("-c", "commit.gpgsign=false", "commit", "-q", "-m", "Use helper (#2)")
    text = (r.path / "pkg/mod.py").read_text()
    r.commit("Tidy (#3)", {"pkg/mod.py": text.replace("return helper(x) + 5", "return 5 + helper(x)")})
    r.git("tag", "v1.1")
    code, data = _audit(capsys, "2", "--git", str(r.path), "--wheel", str(_wheel(r, "v1.1", tmp_path / "a")))
    assert code == 0, data["hunks"]
    assert [p["number"] for p in data["prs"]] == [1, 2]
    assert all(p["merged"] and p["landed"]["first_release"] == "v1.1" for p in data["prs"])
    code, _ = _audit(capsys, "2", "--git", str(r.path), "--wheel", str(_wheel(r, "v1.0", tmp_path / "c")))
    assert code == 1


def test_plan_onto_a_release_holding_a_merged_pr_says_it_is_already_in_through_its_landing(
        git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    """A squash-merged PR whose lines upstream rewrote before the release: planning it onto the
    release says it is already there (merged, the landing named), not a conflict."""
    r = git_repo
    _squash_pr(r)
    squash = r.git("rev-parse", "HEAD")
    text = (r.path / "pkg/mod.py").read_text()
    r.commit("Reword (#7)", {"pkg/mod.py": text.replace("return value * 2", "return value + value")})
    r.git("tag", "v1.1")
    code = main(["plan", "5", "--git", str(r.path), "--onto", "v1.1", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0, data
    item = next(p for p in data["prs"] if p["number"] == 5)
    assert item["status"] == "present" and squash[:10] in item["reason"]


def test_a_revert_of_one_commit_of_a_merged_pr_takes_back_only_the_hunk_that_commit_wrote(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A PR of two commits, merged with a merge commit; upstream later reverts its second commit
    alone and rewrites the first commit's line: the release holds the PR's first change (present
    through the rewrite) and not its second (missing, the revert named): exit 1."""
    r = git_repo
    r.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": MOD})
    r.branch("two-fixes")
    one = MOD.replace("return x + 2\n", "return x + 2 + 1\n")
    r.commit("Fix f2", {"pkg/mod.py": one})
    r.commit("Fix f9", {"pkg/mod.py": one.replace("return x + 9\n", "return x + 9 + 1\n")})
    second = r.git("rev-parse", "HEAD")
    r.pr_ref(4)
    r.git("checkout", "-q", "main")
    r.git("-c", "commit.gpgsign=false", "merge", "-q", "--no-ff", "-m", "Merge pull request #4 from a/two-fixes",
          "two-fixes")
    r.git("revert", "--no-edit", second)
    revert = r.git("rev-parse", "HEAD")
    text = (r.path / "pkg/mod.py").read_text()
    r.commit("Spell f2 out (#8)", {"pkg/mod.py": text.replace("return x + 2 + 1", "return x + 3")})
    r.git("tag", "v1.1")
    code, data = _audit(capsys, "4", "--git", str(r.path), "--wheel", str(_wheel(r, "v1.1", tmp_path / "w")))
    assert code == 1
    by_status = {h["status"]: h for h in data["hunks"]}
    assert set(by_status) == {"applied", "missing"}, data["hunks"]
    assert (by_status["applied"]["superseded_by"] or {}).get("pr") == 8
    assert revert[:10] in by_status["missing"]["note"]
