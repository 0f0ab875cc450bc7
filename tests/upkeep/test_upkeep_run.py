"""`prstack upkeep` on real git repositories built here: where carried PRs and patches landed across
release tags (by content: squash merges, backports, reverts), the verdict on a candidate, the
refreshed series applied with `patch -p1` and `git apply`, a manifest in pyproject.toml."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import GitRepo
from helpers.releases import BASE
from helpers.releases import edited as _edit
from helpers.releases import text_of as _text
from prstack.cli import main
from prstack.schemas import schema


def _upkeep(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["upkeep", *args, "--format", "json"])
    out = capsys.readouterr().out
    data = json.loads(out)
    jsonschema.validate(data, schema("prstack.upkeep/1"), cls=jsonschema.Draft202012Validator)
    return code, data


def _start(repo: GitRepo) -> None:
    repo.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": _text(BASE), "pkg/other.py": "x = 0\n"})
    repo.git("tag", "v1.0")


@pytest.mark.slow
def test_a_squash_merged_multi_commit_pr_lands_in_the_release_after_its_squash(
        git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    """Two commits squashed into one on main: first_release is the tag after the squash commit,
    although no tag contains the PR's own commits; retire on the newest release, keep before it."""
    r = git_repo
    _start(r)
    r.branch("pr1")
    one = _edit(BASE, l3="value_3 = 30\n")
    r.commit("fix a", {"pkg/mod.py": _text(one)})
    r.commit("fix b", {"pkg/mod.py": _text(_edit(one, l30="value_30 = 300\n"))})
    head = r.pr_ref(1)
    r.git("checkout", "-q", "main")
    r.commit("other", {"pkg/other.py": "x = 1\n"})
    r.git("tag", "v1.1")
    r.git("merge", "--squash", "pr1")
    r.git("-c", "commit.gpgsign=false", "commit", "-q", "-m", "fix a and b (#1)")
    squash = r.git("rev-parse", "HEAD")
    r.git("tag", "v1.2")
    r.commit("more", {"pkg/other.py": "x = 2\n"})
    r.git("tag", "v1.3")
    assert r.git("tag", "--contains", head) == ""  # ancestry knows no release holding it
    code, data = _upkeep(capsys, "1", "--git", str(r.path))
    assert code == 0
    assert [x["name"] for x in data["releases"]] == ["v1.0", "v1.1", "v1.2", "v1.3"]
    (item,) = data["items"]
    assert (item["pr"], item["state"], item["first_release"], item["verdict"]) == (1, "merged", "v1.2", "retire")
    assert item["merged_by"] in ("squash", "content")
    assert [h["landed_in"] for h in item["hunks"]] == ["v1.2", "v1.2"]
    assert [h["commit"] for h in item["hunks"]] == [squash, squash]  # the evidence: the squash commit
    code, data = _upkeep(capsys, "1", "--git", str(r.path), "--onto", "v1.1")
    assert code == 0 and data["items"][0]["verdict"] == "keep"
    assert {h["status"] for h in data["items"][0]["hunks"]} == {"missing"}
    assert [h["commit"] for h in data["items"][0]["hunks"]] == [None, None]
    assert main(["upkeep", "1", "--git", str(r.path)]) == 0
    assert f"brought by: {squash[:12]} (2 hunks)" in capsys.readouterr().out


@pytest.mark.slow
def test_a_backport_on_a_release_branch_is_the_first_release_before_main_s(
        git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    """A fix merged into main for v1.1 and cherry-picked onto the 1.0 branch for v1.0.1: the
    first release holding it is v1.0.1, which `git tag --contains` of the merge commit misses."""
    r = git_repo
    _start(r)
    r.branch("pr2")
    r.commit("fix", {"pkg/mod.py": _text(_edit(BASE, l10="value_10 = -10\n"))})
    fix = r.pr_ref(2)
    r.git("checkout", "-q", "main")
    r.commit("other", {"pkg/other.py": "x = 1\n"})
    r.git("-c", "commit.gpgsign=false", "merge", "-q", "--no-ff", "-m", "Merge #2", "pr2")
    merge = r.git("rev-parse", "HEAD")
    r.branch("release-1.0", "v1.0")
    r.git("-c", "commit.gpgsign=false", "cherry-pick", "-x", fix)
    picked = r.git("rev-parse", "HEAD")
    r.git("tag", "v1.0.1")
    r.git("checkout", "-q", "main")
    r.git("tag", "v1.1")
    assert r.git("tag", "--contains", merge).split() == ["v1.1"]
    code, data = _upkeep(capsys, "2", "--git", str(r.path))
    (item,) = data["items"]
    assert code == 0
    assert item["first_release"] == "v1.0.1" and item["verdict"] == "retire"
    assert item["state"] == "merged" and item["merged_by"] == "ancestry"
    assert item["hunks"][0]["landed_in"] == "v1.0.1" and item["hunks"][0]["reverted_in"] == []
    assert item["hunks"][0]["commit"] == picked != fix  # the cherry-pick on the release branch brought it


@pytest.mark.slow
def test_merged_reverted_and_relanded_says_so(git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    """Merged for v1.1, reverted for v1.2, back for v1.3: its first release is v1.1, the note says
    v1.2 took it back and it was back in v1.3; the hunk landed for good in v1.3, brought by the re-land."""
    r = git_repo
    _start(r)
    r.branch("pr3")
    r.commit("feature", {"pkg/mod.py": _text(_edit(BASE, l20="value_20 = 'twenty'\n"))})
    r.pr_ref(3)
    r.git("checkout", "-q", "main")
    r.git("-c", "commit.gpgsign=false", "merge", "-q", "--no-ff", "-m", "Merge #3", "pr3")
    merge = r.git("rev-parse", "HEAD")
    r.git("tag", "v1.1")
    r.git("-c", "commit.gpgsign=false", "revert", "--no-edit", "-m", "1", merge)
    revert = r.git("rev-parse", "HEAD")
    r.git("tag", "v1.2")
    r.git("-c", "commit.gpgsign=false", "revert", "--no-edit", revert)
    relanded = r.git("rev-parse", "HEAD")
    r.git("tag", "v1.3")
    code, data = _upkeep(capsys, "3", "--git", str(r.path))
    (item,) = data["items"]
    assert code == 0 and item["verdict"] == "retire"
    assert item["first_release"] == "v1.1"
    (hunk,) = item["hunks"]
    assert (hunk["first_seen"], hunk["reverted_in"], hunk["landed_in"]) == ("v1.1", ["v1.2"], "v1.3")
    assert item["landing_note"] == "merged for v1.1, taken back in v1.2, back in v1.3"
    assert hunk["commit"] == relanded  # what brought it back, not the first merge
    assert main(["upkeep", "3", "--git", str(r.path), "--format", "markdown"]) == 0
    assert f"brought by {relanded[:12]} (1 hunk)" in capsys.readouterr().out
    code, data = _upkeep(capsys, "3", "--git", str(r.path), "--onto", "v1.2")
    assert code == 0 and data["items"][0]["verdict"] == "keep"


@pytest.mark.slow
def test_a_merged_pr_rewritten_later_keeps_its_first_release(
        git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    """Both hunks merged for v1.1, one of them rewritten by a later commit for v1.2: v1.2 holds the
    merge, so the PR is retired there (both hunks present, the rewritten one through the rewrite),
    and its first release is v1.1."""
    r = git_repo
    _start(r)
    r.branch("pr5")
    r.commit("two", {"pkg/mod.py": _text(_edit(BASE, l4="value_4 = 'four'\n", l33="value_33 = 'x'\n"))})
    r.pr_ref(5)
    r.git("checkout", "-q", "main")
    r.git("-c", "commit.gpgsign=false", "merge", "-q", "--no-ff", "-m", "Merge #5", "pr5")
    r.git("tag", "v1.1")
    r.commit("rewrite", {"pkg/mod.py": _text(_edit(BASE, l4="value_4 = 'four'\n", l33="value_33 = 'y'\n"))})
    r.git("tag", "v1.2")
    code, data = _upkeep(capsys, "5", "--git", str(r.path))
    (item,) = data["items"]
    assert code == 0 and item["verdict"] == "retire" and item["first_release"] == "v1.1"
    assert [h["status"] for h in item["hunks"]] == ["applied", "applied"]
    assert item["landing_note"] is None


def _patch_between(r: GitRepo, a: str, b: str, dest: Path) -> Path:
    dest.write_text(r.git("diff", a, b) + "\n")
    return dest


@pytest.mark.slow
def test_a_partly_upstream_patch_is_reduced_by_write_and_applies(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A carried patch of two hunks, one of which upstream took while adding lines above both:
    partly-upstream (exit 1); `--write` keeps the other hunk with fresh line numbers, and a kept
    patch rides on top; the series applies to the candidate with `patch -p1` and `git apply`."""
    r = git_repo
    _start(r)
    r.branch("work")
    r.commit("two fixes", {"pkg/mod.py": _text(_edit(BASE, l5="value_5 = 'five'\n", l35="value_35 = 'x'\n"))})
    partly = _patch_between(r, "v1.0", "HEAD", tmp_path / "0001-two-fixes.patch")
    r.git("checkout", "-q", "main")
    r.commit("other", {"pkg/other.py": "x = 1\n"})
    kept = _patch_between(r, "v1.0", "HEAD", tmp_path / "0002-other.patch")
    r.git("checkout", "-q", "v1.0", "--", "pkg/other.py")
    r.commit("upstream takes one fix, adds a header",
             {"pkg/mod.py": "# header\n# more\n" + _text(_edit(BASE, l5="value_5 = 'five'\n"))})
    r.git("tag", "v2.0")
    code, data = _upkeep(capsys, "--patch", str(partly), "--patch", str(kept), "--git", str(r.path), "--onto", "v2.0")
    assert code == 1
    first, second = data["items"]
    assert (first["verdict"], second["verdict"]) == ("partly-upstream", "keep")
    assert [h["status"] for h in first["hunks"]] == ["applied", "missing"]
    assert first["pr"] is None and first["patch"].endswith("0001-two-fixes.patch")
    out = tmp_path / "refreshed"
    assert main(["upkeep", "--patch", str(partly), "--patch", str(kept), "--git", str(r.path), "--onto", "v2.0",
                 "--write", str(out)]) == 1
    series = (out / "series").read_text().split()
    assert series == ["0001-two-fixes.patch", "0002-other.patch"]
    reduced = (out / series[0]).read_text()
    assert "value_5" not in reduced
    assert "+value_35 = 'x'" in reduced and "@@ -34,7 +34,7 @@" in reduced  # two lines lower now
    for tool in (["patch", "-p1", "--quiet"], ["git", "apply"]):
        work = tmp_path / f"candidate-{tool[0]}"
        work.mkdir()
        subprocess.run(f"git -C {r.path} archive v2.0 | tar -x -C {work}", shell=True, check=True)
        for name in series:
            done = subprocess.run([*tool, "-i" if tool[0] == "patch" else "--verbose", str(out / name)],
                                  cwd=work, capture_output=True, text=True)
            assert done.returncode == 0, done.stdout + done.stderr
        mod = (work / "pkg/mod.py").read_text()
        assert "value_35 = 'x'\n" in mod and mod.count("value_5 = 'five'\n") == 1 and mod.startswith("# header\n")
        assert (work / "pkg/other.py").read_text() == "x = 1\n"


@pytest.mark.slow
def test_a_diverged_region_needs_a_rebase_and_is_not_written(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Upstream rewrote the lines the PR changes: rebase (exit 1), listed and not written; `series` says
    so in a comment (no patch file for a PR)."""
    r = git_repo
    _start(r)
    r.branch("pr4")
    r.commit("tweak", {"pkg/mod.py": _text(_edit(BASE, l12="value_12 = 'twelve'\n"))})
    r.pr_ref(4)
    r.git("checkout", "-q", "main")
    r.commit("rewrite", {"pkg/mod.py": _text([*BASE[:9], "REWRITTEN = {\n", "    'all': 1,\n", "}\n", *BASE[15:]])})
    r.git("tag", "v1.1")
    out = tmp_path / "out"
    assert main(["upkeep", "4", "--git", str(r.path), "--write", str(out)]) == 1
    assert "rebase" in capsys.readouterr().out
    assert (out / "series").read_text() == "# #4: rebase by hand: pkg/mod.py:9 diverged (not refreshed)\n"
    assert sorted(p.name for p in out.iterdir()) == ["series"]
    code, data = _upkeep(capsys, "4", "--git", str(r.path))
    assert code == 1 and data["items"][0]["verdict"] == "rebase" and data["items"][0]["first_release"] is None
    assert data["items"][0]["state"] == "open"


@pytest.mark.slow
def test_the_manifest_in_pyproject_names_the_carried_set(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """With no PR given, `[tool.prstack]` of ./pyproject.toml gives the clone, the PRs, the patches
    and their notes; markdown and the table render it too."""
    r = git_repo
    _start(r)
    r.branch("pr5")
    r.commit("fix", {"pkg/mod.py": _text(_edit(BASE, l7="value_7 = 'seven'\n"))})
    r.pr_ref(5)
    r.git("checkout", "-q", "main")
    r.git("tag", "v1.1")
    project = tmp_path / "project"
    (project / "patches").mkdir(parents=True)
    (project / "patches" / "local.patch").write_text(r.git("diff", "v1.0", "pr5") + "\n")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "mine"\n\n[tool.prstack]\nrepository = "up/pkg"\ndistribution = "pkg"\n'
        f'git = "{r.path}"\n\n[[tool.prstack.carry]]\npr = 5\nnote = "drop when upstream merges it"\n\n'
        '[[tool.prstack.carry]]\npatch = "patches/local.patch"\n')
    monkeypatch.chdir(project)
    code, data = _upkeep(capsys)
    assert code == 0
    assert [(i["pr"], i["verdict"], i["note"]) for i in data["items"]] == [
        (5, "keep", "drop when upstream merges it"), (None, "keep", None)]
    assert data["items"][1]["patch"].endswith("local.patch")
    assert main(["upkeep", "--format", "markdown"]) == 0
    assert "drop when upstream merges it" in capsys.readouterr().out
    assert main(["upkeep"]) == 0
    assert "2 keep" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "words"), [
    (["1"], "--git"),
    (["1", "--git", "{repo}", "--releases", "nothing-*"], "--releases"),
    (["9", "--git", "{repo}"], "#9"),
    (["1", "--git", "{repo}", "--onto", "v1.0", "--tree", "{repo}"], "one of them"),
    (["--manifest", "{repo}/.git/HEAD"], "TOML"),
    (["--manifest", "{repo}/pkg/mod.py"], "unknown key"),
])
@pytest.mark.slow
def test_bad_input_is_one_line_and_exit_2(git_repo: GitRepo, capsys: pytest.CaptureFixture[str],
                                          args: list[str], words: str) -> None:
    """Each mistake gets one line on stderr naming what to do, and exit 2."""
    _start(git_repo)
    git_repo.pr_ref(1)
    code = main(["upkeep", *(a.replace("{repo}", str(git_repo.path)) for a in args)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and words in err, err


@pytest.mark.slow
def test_releases_given_as_wheels(git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Wheels as the releases, in the order of their versions whatever the order given: a PR of
    the clone first in 1.1's wheel, retired on the newest wheel (the default candidate); a patch
    with no clone at all judged the same way."""
    from helpers.targets import make_wheel

    r = git_repo
    _start(r)
    r.branch("pr6")
    fixed = _text(_edit(BASE, l8="value_8 = 'eight'\n"))
    r.commit("fix", {"pkg/mod.py": fixed})
    r.pr_ref(6)
    r.git("checkout", "-q", "main")
    wheels = tmp_path / "wheels"
    old = {"pkg/__init__.py": b"", "pkg/mod.py": _text(BASE).encode()}
    new = {"pkg/__init__.py": b"", "pkg/mod.py": fixed.encode()}
    given = [make_wheel(wheels, "pkg", "1.2", new), make_wheel(wheels, "pkg", "1.0", old),
             make_wheel(wheels, "pkg", "1.1", new)]
    args = [arg for w in given for arg in ("--release-wheel", str(w))]
    code, data = _upkeep(capsys, "6", "--git", str(r.path), *args)
    assert code == 0
    assert [(x["name"], x["commit"], Path(x["wheel"]).name) for x in data["releases"]] == [
        ("1.0", None, "pkg-1.0-py3-none-any.whl"), ("1.1", None, "pkg-1.1-py3-none-any.whl"),
        ("1.2", None, "pkg-1.2-py3-none-any.whl")]
    assert data["candidate"]["kind"] == "wheel" and data["candidate"]["version"] == "1.2"
    (item,) = data["items"]
    assert (item["first_release"], item["verdict"]) == ("1.1", "retire")
    assert [h["landed_in"] for h in item["hunks"]] == ["1.1"]
    patch = _patch_between(r, "v1.0", "pr6", tmp_path / "fix.patch")
    code, data = _upkeep(capsys, "--patch", str(patch), *args, "--wheel", str(given[1]))
    assert code == 0
    (item,) = data["items"]
    assert (item["first_release"], item["verdict"]) == ("1.1", "keep")  # the 1.0 wheel lacks it, applies there
    code = main(["upkeep", "--patch", str(patch), "--release-wheel", str(patch)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "wheel" in err
    code = main(["upkeep", "6", "--repo", "up/pkg"])
    err = capsys.readouterr().err
    assert code == 2 and "--release-wheel" in err and "--git" in err


def test_a_patch_read_from_standard_input_is_judged_as_the_same_file_would_be(
        git_repo: GitRepo, tmp_path: Path) -> None:
    """`--patch -`: the command line reads standard input and hands its bytes to the upkeep; the
    verdict is the one the same patch gets from a file."""
    r = git_repo
    _start(r)
    r.branch("work")
    r.commit("a fix", {"pkg/mod.py": _text(_edit(BASE, l5="value_5 = 'five'\n"))})
    patch = _patch_between(r, "v1.0", "HEAD", tmp_path / "0001-a-fix.patch")
    r.git("checkout", "-q", "main")
    r.git("tag", "v1.1")

    def upkeep(*given: str, stdin: bytes = b"") -> dict:
        done = subprocess.run([sys.executable, "-m", "prstack", "upkeep", *given, "--git", str(r.path), "--onto",
                               "v1.1", "--format", "json"], input=stdin, capture_output=True, check=False)
        assert done.returncode in (0, 1), done.stderr
        return json.loads(done.stdout)

    from_stdin = upkeep("--patch", "-", stdin=patch.read_bytes())
    from_file = upkeep("--patch", str(patch))
    assert [i["verdict"] for i in from_stdin["items"]] == [i["verdict"] for i in from_file["items"]] == ["keep"]
    assert [h["status"] for h in from_stdin["items"][0]["hunks"]] == ["missing"]
