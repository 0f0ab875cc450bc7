"""`audit --patch`: the PRs' own diffs saved as files give the PR-based audit's verdicts, hunk by hunk."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import GitRepo
from helpers.matcher import INIT, PATH, TABLE, case_repo
from helpers.targets import install_into, make_project, make_wheel
from prstack.cli import main
from prstack.demo.example import DemoBuild
from prstack.match.without_base import TARGET_ALONE
from prstack.models import HunkStatus
from prstack.schemas import schema

SO = "kvs/_C.cpython-311-x86_64-linux-gnu.so"


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    code = main([*args, "--format", "json"])
    out = capsys.readouterr().out
    assert code in (0, 1), out
    return code, json.loads(out)


def verdicts(data: Any) -> list[tuple[int, str, int, int, str]]:
    return [(h["pr"], h["path"], h["old_start"], h["new_start"], h["status"]) for h in data["hunks"]]


def save_patches(repo: Path, data: Any, out: Path) -> tuple[list[str], list[str]]:
    """Each PR of an audit's JSON saved twice: `git diff base head` as N.diff, and git format-patch
    of its commits as N.patch (in folders diff/ and mail/)."""
    diffs, mails = [], []
    for pr in data["prs"]:
        for kind, args in (("diff", ["diff", pr["base_sha"], pr["head_sha"]]),
                           ("mail", ["format-patch", "--stdout", f"{pr['base_sha']}..{pr['head_sha']}"])):
            dest = out / kind / f"{pr['number']}.{'diff' if kind == 'diff' else 'patch'}"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                                            check=True).stdout)
            (diffs if kind == "diff" else mails).append(str(dest))
    return diffs, mails


@pytest.mark.parametrize(("name", "base", "head", "target", "want", "other"), TABLE, ids=[c[0] for c in TABLE])
@pytest.mark.slow
def test_the_matchers_case_table_from_patch_files(
    name: str, base: str, head: str, target: str | None, want: list[HunkStatus], other: str,
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    repo, tree = case_repo(tmp_path, base, head, target, other)
    code, by_pr = run_json(["audit", "1", "--git", str(repo), "--tree", str(tree)], capsys)
    assert [h["status"] for h in by_pr["hunks"]] == [w.value for w in want], name
    diffs, mails = save_patches(repo, by_pr, tmp_path / "saved")
    for files in (diffs, mails):
        got_code, by_patch = run_json(["audit", *(a for f in files for a in ("--patch", f)), "--tree", str(tree)],
                                      capsys)
        assert verdicts(by_patch) == verdicts(by_pr), (name, files)
        assert got_code == code
        assert [p["patch"] for p in by_patch["prs"]] == files
        for h in by_patch["hunks"]:
            assert h["status"] != "relocated" or TARGET_ALONE in h["note"]


def test_every_status_is_covered() -> None:
    seen = {w for case in TABLE for w in case[4]} | {HunkStatus.NOT_SHIPPED, HunkStatus.UNVERIFIABLE}
    assert seen == set(HunkStatus)  # not-shipped: the demo below; unverifiable: the compiled kernel


@pytest.mark.parametrize("kind", ["--site-packages", "--wheel"])
@pytest.mark.slow
def test_a_stack_of_patches_as_the_prs(kind: str, demo_build: DemoBuild, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    repo = demo_build.repo.path
    site = str(demo_build.site_packages if kind == "--site-packages" else demo_build.wheel)
    code, by_pr = run_json(["audit", "40898", "--git", str(repo), kind, site], capsys)
    assert {h["status"] for h in by_pr["hunks"]} >= {"applied", "missing", "not-shipped"}
    diffs, mails = save_patches(repo, by_pr, tmp_path)
    for files in (diffs, mails):
        got_code, by_patch = run_json(["audit", *(a for f in files for a in ("--patch", f)), kind, site], capsys)
        assert verdicts(by_patch) == verdicts(by_pr)
        assert got_code == code == 1
        jsonschema.validate(by_patch, schema("prstack.audit/2"), cls=jsonschema.Draft202012Validator)
        assert [p["patch"] for p in by_patch["prs"]] == files
        assert [(p["number"], p["depends_on"], p["status"]) for p in by_patch["prs"]] == [
            (p["number"], p["depends_on"], p["status"]) for p in by_pr["prs"]]
    # the folder of patches, in name order, is the same stack
    _, folder = run_json(["audit", "--patch", str(tmp_path / "diff"), kind, site], capsys)
    assert verdicts(folder) == verdicts(by_pr)


@pytest.mark.slow
def test_compiled_sources_unverifiable_from_a_patch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = make_project(tmp_path, kernel=True)
    files = project.files_at(project.head) | {SO: b"\x7fELF\x02\x01\x01" + bytes(64)}
    install_into(make_wheel(tmp_path / "d", "kvs", "1.0", files), tmp_path / "site")
    site = str(tmp_path / "site")
    code, by_pr = run_json(["audit", "7", "--git", str(project.path), "--site-packages", site], capsys)
    assert sorted(h["status"] for h in by_pr["hunks"]) == ["applied", "unverifiable"]
    diffs, mails = save_patches(project.path, by_pr, tmp_path / "saved")
    for f in (*diffs, *mails):
        got_code, by_patch = run_json(["audit", "--patch", f, "--site-packages", site], capsys)
        assert verdicts(by_patch) == verdicts(by_pr)
        assert got_code == code == 0


LINES = "".join(f"    total += weight_{i}\n" for i in range(30))
STEP1 = LINES.replace("weight_10\n", "weight_10\n    total = clamp(total)\n    log(total)\n")
STEP2 = STEP1.replace("    log(total)\n", "    log(total, level=2)\n").replace("weight_25\n", "weight_25 * 2\n")
STEP3 = STEP2.replace("weight_2\n", "weight_2 + bias\n")


@pytest.mark.parametrize(("name", "target", "want"), [
    ("head", STEP3, ["applied"] * 3), ("base", LINES, ["missing"] * 3),
    ("only the first commit", STEP1, ["missing", "partial", "missing"]),
    ("the last two", STEP3.replace("    total = clamp(total)\n", ""), ["applied", "partial", "applied"]),
])
@pytest.mark.slow
def test_a_mailbox_whose_commits_rewrite_each_other(name: str, target: str, want: list[str], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {INIT: "", PATH: LINES})
    repo.branch("pr")
    for i, text in enumerate((STEP1, STEP2, STEP3), 1):
        repo.commit(f"step {i}", {PATH: text})
    repo.pr_ref(1)
    repo.git("checkout", "--quiet", "main")
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / INIT).write_text("")
    (tree / PATH).write_text(target)
    code, by_pr = run_json(["audit", "1", "--git", str(repo.path), "--tree", str(tree)], capsys)
    assert [h["status"] for h in by_pr["hunks"]] == want
    diffs, mails = save_patches(repo.path, by_pr, tmp_path / "saved")
    for f in (*diffs, *mails):
        got_code, by_patch = run_json(["audit", "--patch", f, "--tree", str(tree)], capsys)
        assert verdicts(by_patch) == verdicts(by_pr), (name, f)
        assert got_code == code
    _, by_patch = run_json(["audit", "--patch", mails[0], "--tree", str(tree)], capsys)
    assert {tuple(h["commits"]) for h in by_patch["hunks"]} == {tuple(h["commits"]) for h in by_pr["hunks"]}


@pytest.mark.parametrize("installed", ["old", "new"])
@pytest.mark.slow
def test_a_vendored_copy_is_placed_alike_by_a_patch_and_by_the_clone(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], installed: str) -> None:
    """The repo's third_party/sub/ ships as pkg/_vendor/sub/: the clone's files tell so, and a patch
    of one of its files places it there too (the target holds that file in a folder of the name)."""
    mod = "def mod():\n    a = 1\n    return a\n"
    other = "def other():\n    return 2\n"
    base = git_repo.commit("base", {"src/pkg/__init__.py": "", "src/pkg/core.py": "def core():\n    return 1\n",
                                    "third_party/sub/__init__.py": "", "third_party/sub/mod.py": mod,
                                    "third_party/sub/other.py": other,
                                    "tests/sub/test_mod.py": "def test_mod():\n    pass\n"})
    git_repo.branch("fix")
    head = git_repo.commit("fix mod", {"third_party/sub/mod.py": mod.replace("a = 1", "a = 11"),
                                       "tests/sub/test_mod.py": "def test_mod():\n    assert True\n"})
    git_repo.pr_ref(5)
    diff = subprocess.run(["git", "-C", str(git_repo.path), "diff", base, head], capture_output=True, check=True)
    (tmp_path / "5.diff").write_bytes(diff.stdout)
    tree = tmp_path / "tree"
    for rel, text in {"pkg/__init__.py": "", "pkg/core.py": "def core():\n    return 1\n",
                      "pkg/_vendor/__init__.py": "", "pkg/_vendor/sub/__init__.py": "",
                      "pkg/_vendor/sub/mod.py": mod.replace("a = 1", "a = 11") if installed == "new" else mod,
                      "pkg/_vendor/sub/other.py": other}.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    by_git = run_json(["audit", "5", "--git", str(git_repo.path), "--tree", str(tree)], capsys)
    by_patch = run_json(["audit", "--patch", str(tmp_path / "5.diff"), "--tree", str(tree)], capsys)
    placed = [[(h["path"], h["installed_path"], h["status"]) for h in data["hunks"]] for _, data in (by_git, by_patch)]
    status = "applied" if installed == "new" else "missing"
    assert placed[0] == placed[1] == [("tests/sub/test_mod.py", None, "not-shipped"),
                                      ("third_party/sub/mod.py", "pkg/_vendor/sub/mod.py", status)]
    assert by_git[0] == by_patch[0] == (0 if installed == "new" else 1)


def test_a_patched_folder_takes_the_longest_tail_the_target_holds() -> None:
    """trl/scripts/x.py with a target holding trl/scripts/ and a scripts/ of its own: the repo's
    folder is trl/scripts/, never scripts/ (nor a deeper folder of the same name)."""
    from prstack.sources.patch.source import like_repo

    target = ["trl/scripts/x.py", "trl/scripts/a.py", "scripts/b.py", "trl/deep/scripts/x.py", "trl/deep/scripts/c.py"]
    assert like_repo(["trl/scripts/x.py"], target) == ["trl/scripts/a.py", "trl/scripts/x.py"]


def test_a_binary_file_the_pr_deletes_is_applied_where_the_target_lacks_it() -> None:
    from prstack.diff.hunks import parse_diff
    from prstack.match.file import match_file

    diff = ("diff --git a/docs/flow.png b/docs/flow.png\ndeleted file mode 100644\n"
            "index 3b18e51..0000000\nBinary files a/docs/flow.png and /dev/null differ\n")
    (hunk,) = parse_diff(diff, 1)
    (result,) = match_file([hunk], None, installed_path="docs/flow.png")
    assert result.status is HunkStatus.APPLIED


def test_a_folder_the_patch_deletes_whole_is_not_the_targets_own_folder_of_that_name(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A PR deletes bench/micro/ whole (its README.md and test/ among it) from a repository with a
    README.md and a test/ of its own at the root: on the tree of its head, every deletion is done,
    and the root's files are no stand-ins for the deleted ones."""
    test_files = {"test/__init__.py": "", "test/test_utils.py": "def test_a():\n    assert 1\n"}
    micro = {"bench/micro/README.md": "# micro\n\nRun it.\n", "bench/micro/run.py": "print('run')\n",
             **{f"bench/micro/{path}": text + "# micro\n" for path, text in test_files.items()}}
    more = {f"test/test_{name}.py": f"def test_{name}():\n    assert 1\n" for name in ("api", "cli", "core")}
    base = git_repo.commit("base", {"README.md": "# project\n", "pkg/__init__.py": "", **test_files, **more, **micro})
    head = git_repo.commit("drop the micro benchmarks", {path: None for path in micro})
    diff = tmp_path / "1.diff"
    diff.write_bytes(subprocess.run(["git", "-C", str(git_repo.path), "diff", base, head],
                                    capture_output=True, check=True).stdout)
    for rev, want in ((head, 0), (base, 1)):
        tree = git_repo.archive(rev, tmp_path / rev[:8])
        code, data = run_json(["audit", "--patch", str(diff), "--tree", str(tree)], capsys)
        assert code == want, data["hunks"]
        assert {h["installed_path"] for h in data["hunks"] if h["status"] != "not-shipped"} <= set(micro)
