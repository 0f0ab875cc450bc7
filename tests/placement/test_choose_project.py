"""Which distribution is the PRs' project: tests-only PRs, URL, name and layout, vendored copies, .dist-info."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.targets import (
    MODEL,
    MODEL_FIXED,
    RUNNER,
    TEST,
    TEST_MORE,
    install_into,
    make_tests_only,
    package,
    wheel_of,
)
from prstack.errors import InputError
from prstack.placement.choose import Asked, DistFiles, choose
from prstack.placement.paths import PathMap, Placement, nearest_packages


def noise(root: Path, site: Path) -> None:
    """A distribution of another project, sharing file names with this one."""
    other = {"other/__init__.py": b"", "other/model.py": b"x = 1\n", "other/runner.py": b"y = 2\n",
             "other/tests/test_model.py": b"def test(): pass\n"}
    install_into(wheel_of(root, "other", other, ("Project-URL: Source, https://github.com/else/other",)), site)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prstack", *args], capture_output=True, text=True)


def audit_json(repo: GitRepo, *target: str) -> tuple[int, dict[str, object]]:
    done = run("audit", "7", "--git", str(repo.path), *target, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def assert_not_shipped(code: int, report: dict[str, object], distribution: str) -> None:
    assert code == 0
    target = report["target"]
    assert isinstance(target, dict) and target["distribution"] == distribution
    [pr] = report["prs"]  # type: ignore[misc]
    assert pr["status"] == "not-shipped"
    hunks = report["hunks"]
    assert isinstance(hunks, list)
    assert {h["path"] for h in hunks} == {"tests/test_model.py", "docs/index.md", ".github/workflows/ci.yml"}
    assert {(h["status"], h["installed_path"]) for h in hunks} == {("not-shipped", None)}


@pytest.mark.slow
def test_tests_only_pr_against_the_projects_wheel_is_not_shipped(tmp_path: Path) -> None:
    repo, _ = make_tests_only(tmp_path)
    wheel = wheel_of(tmp_path, "kvs", package())
    assert_not_shipped(*audit_json(repo, "--wheel", str(wheel)), "kvs")


def test_repo_files_never_map_into_dist_info(tmp_path: Path) -> None:
    """The repo's LICENSE and AUTHORS.rst sit in the wheel's .dist-info: no evidence that its
    tests/ would be installed there (attrs-21.1.0.dist-info/tests/typing_example.py)."""
    repo, _ = make_tests_only(tmp_path)
    wheel = wheel_of(tmp_path, "kvs", package())
    installed = zipfile.ZipFile(wheel).namelist()
    repo_files = repo.git("ls-files").splitlines()
    pmap = PathMap(installed, repo_files)
    assert pmap.locate("tests/test_model.py") == pmap.locate("tests/typing_example.py")
    assert pmap.locate("tests/typing_example.py").placement is Placement.NOT_SHIPPED
    assert pmap.locate("src/kvs/new.py").installed_path == "kvs/new.py"  # file-missing still told


@pytest.mark.slow
def test_tests_only_pr_against_site_packages_finds_the_project_by_layout(tmp_path: Path) -> None:
    repo, _ = make_tests_only(tmp_path)
    site = tmp_path / "site"
    install_into(wheel_of(tmp_path, "kvs-server", package()), site)  # no URL, not named like the repo
    noise(tmp_path, site)
    code, report = audit_json(repo, "--site-packages", str(site))
    assert_not_shipped(code, report, "kvs-server")
    done = run("audit", "7", "--git", str(repo.path), "--site-packages", str(site), "--verbose")
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_tests_only_pr_finds_the_project_by_its_url(tmp_path: Path) -> None:
    repo, _ = make_tests_only(tmp_path)
    repo.git("remote", "add", "origin", "https://github.com/acme/kvs.git")
    site = tmp_path / "site"
    # renamed package and distribution: only the Project-URL says it is the repository's
    install_into(wheel_of(tmp_path, "kvstore-core", package("kvstore"),
                          ("Project-URL: Source, https://github.com/Acme/kvs",)), site)
    noise(tmp_path, site)
    # (--offline: the origin names github.com, which prstack would otherwise ask for titles)
    assert_not_shipped(*audit_json(repo, "--site-packages", str(site), "--offline"), "kvstore-core")


@pytest.mark.slow
def test_tests_only_pr_finds_the_project_named_like_the_clone(tmp_path: Path) -> None:
    repo, _ = make_tests_only(tmp_path, folder="kvs.git")
    site = tmp_path / "site"
    install_into(wheel_of(tmp_path, "kvs", package("kvstore")), site)  # no URL, renamed package
    noise(tmp_path, site)
    assert_not_shipped(*audit_json(repo, "--site-packages", str(site)), "kvs")


@pytest.mark.slow
def test_nothing_says_which_is_the_project_stays_an_error(tmp_path: Path) -> None:
    repo, _ = make_tests_only(tmp_path)
    site = tmp_path / "site"
    noise(tmp_path, site)
    done = run("audit", "7", "--git", str(repo.path), "--site-packages", str(site))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.strip()]
    assert "no distribution" in line and "--dist" in line


def vendoring_site(tmp_path: Path) -> tuple[GitRepo, Path]:
    """A repository of the package `clicky`; the environment holds only `typerish`, which vendors
    a copy of clicky as typerish/_clicky/."""
    repo = GitRepo(tmp_path / "repo")
    files = {"src/clicky/__init__.py": "", "src/clicky/core.py": MODEL, "src/clicky/types.py": RUNNER,
             "src/clicky/utils.py": "def helper() -> int:\n    return 1\n", "tests/test_core.py": TEST}
    base = repo.commit("base", files)  # type: ignore[arg-type]
    repo.branch("fix")
    repo.commit("Fix the layer offset", {"src/clicky/core.py": MODEL_FIXED})
    repo.pr_ref(7)
    repo.branch("main", base)
    copy = {f"typerish/_clicky/{p.removeprefix('src/clicky/')}": repo.git("show", f"fix:{p}").encode() + b"\n"
            for p in files if p.startswith("src/")}
    own = {"typerish/__init__.py": b"", "typerish/main.py": b"def run() -> None:\n    pass\n"}
    site = tmp_path / "site"
    install_into(wheel_of(tmp_path, "typerish", own | copy), site)
    return repo, site


@pytest.mark.slow
def test_a_vendored_copy_is_never_audited_without_saying_so(tmp_path: Path) -> None:
    repo, site = vendoring_site(tmp_path)
    done = run("audit", "7", "--git", str(repo.path), "--site-packages", str(site))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.strip()]
    assert "not installed" in line and "vendored copy" in line
    assert "typerish/_clicky/" in line and "--dist typerish" in line


@pytest.mark.slow
def test_with_dist_the_vendored_copy_is_audited(tmp_path: Path) -> None:
    repo, site = vendoring_site(tmp_path)
    code, report = audit_json(repo, "--site-packages", str(site), "--dist", "typerish")
    hunks = report["hunks"]
    assert isinstance(hunks, list)
    assert [(h["status"], h["installed_path"]) for h in hunks] == [("applied", "typerish/_clicky/core.py")]
    assert code == 0


@pytest.mark.slow
def test_a_vendored_copy_beside_the_installed_project_is_named_not_chosen(tmp_path: Path) -> None:
    repo, site = vendoring_site(tmp_path)
    real = {f"clicky/{n}": b"" for n in ("__init__.py", "types.py", "utils.py")}
    real["clicky/core.py"] = MODEL.encode()
    install_into(wheel_of(tmp_path, "clicky", real), site)
    code, report = audit_json(repo, "--site-packages", str(site))
    target = report["target"]
    assert isinstance(target, dict) and target["distribution"] == "clicky"
    assert code == 1  # the real clicky lacks the fix; the vendored copy has it


def test_pure_choice_of_the_project_and_of_copies() -> None:
    repo_files = ["src/clicky/__init__.py", "src/clicky/core.py", "src/clicky/types.py", "tests/test_core.py"]
    outside = DistFiles("vendors", "2", frozenset({"vendors/__init__.py", "vendors/clicky/__init__.py",
                                                    "vendors/clicky/core.py", "vendors/clicky/types.py"}))
    with pytest.raises(InputError, match=r"only a vendored copy of it was found, vendors/ in vendors 2; .*`dist`"):
        choose([outside], ["src/clicky/core.py"], repo_files, "here")
    real = DistFiles("clicky-dist", "1", frozenset({"clicky/__init__.py", "clicky/core.py"}))
    choice = choose([outside, real], ["tests/test_core.py"], repo_files, "here")
    assert choice.dist.name == "clicky-dist"
    assert "the repository's package clicky" in choice.reason
    by_url = DistFiles("x", "1", frozenset({"x/a.py"}), repos=frozenset({"acme/clicky"}))
    assert choose([real, by_url], ["tests/test_core.py"], repo_files, "here",
                  Asked(repo="Acme/Clicky")).dist.name == "x"
    named = DistFiles("clicky", "1", frozenset({"y/a.py"}))
    assert choose([named, by_url], ["tests/test_core.py"], repo_files, "here",
                  Asked(names=("clicky",))).dist.name == "clicky"


def test_packages_sharing_only_common_file_names_are_no_renamed_copy() -> None:
    """utils/__init__.py, core/base.py recur in every environment: a package whose folders hold
    mostly files of its own does not 'ship' the repository's files under a new name."""
    repo = ["src/acme/__init__.py", "src/acme/utils/__init__.py", "src/acme/utils/base.py",
            "src/acme/core/__init__.py", "src/acme/core/base.py", "src/acme/special.py"]
    other = ["other/__init__.py", "other/utils/__init__.py", "other/utils/base.py", "other/core/__init__.py",
             "other/core/base.py"] + [f"other/{d}/m{i}.py" for d in ("utils", "core") for i in range(6)]
    assert PathMap(other, repo).locate("src/acme/core/base.py").placement is not Placement.SHIPPED
    renamed = ["kvs/__init__.py", "kvs/utils/__init__.py", "kvs/utils/base.py", "kvs/core/__init__.py",
               "kvs/core/base.py", "kvs/special.py", "kvs/_version.py"]
    assert PathMap(renamed, repo).locate("src/acme/core/base.py").installed_path == "kvs/core/base.py"


@pytest.mark.slow
def test_tests_named_like_a_small_subpackage_stay_outside_it(tmp_path: Path) -> None:
    """fastapi: tests/{__init__,utils,models}.py are named like fastapi/dependencies/*, a folder the
    repository's tests/ would fill whole; tests never land inside a package of another name."""
    repo = GitRepo(tmp_path / "repo")
    files = {"kvs/__init__.py": "", "kvs/model.py": MODEL, "kvs/dependencies/__init__.py": "",
             "kvs/dependencies/utils.py": "U = 1\n", "kvs/dependencies/models.py": "M = 1\n",
             "tests/__init__.py": "", "tests/utils.py": "def util() -> int:\n    return 1\n",
             "tests/models.py": "class M:\n    pass\n", "tests/test_model.py": TEST}
    base = repo.commit("base", files)  # type: ignore[arg-type]
    repo.branch("fix")
    repo.commit("Tests", {"tests/utils.py": "def util() -> int:\n    return 2\n", "tests/test_new.py": TEST})
    repo.pr_ref(7)
    repo.branch("main", base)
    shipped = {p: repo.git("show", f"main:{p}").encode() for p in files if p.startswith("kvs/")}
    wheel = wheel_of(tmp_path, "kvs", shipped)
    code, report = audit_json(repo, "--wheel", str(wheel))
    hunks = report["hunks"]
    assert isinstance(hunks, list)
    assert {(h["path"], h["status"], h["installed_path"]) for h in hunks} == {
        ("tests/utils.py", "not-shipped", None), ("tests/test_new.py", "not-shipped", None)}
    assert code == 0


@pytest.mark.slow
def test_tests_mirroring_the_package_s_folders_stay_outside_it(tmp_path: Path) -> None:
    """torchtune: tests/torchtune/ mirrors torchtune/ folder for folder (their __init__.py files say so),
    so tests/ maps onto the site's root; a test file is still not shipped, not a file the wheel lacks."""
    repo = GitRepo(tmp_path / "repo")
    files = {"kvs/__init__.py": "", "kvs/model.py": MODEL, "kvs/modules/__init__.py": "",
             "kvs/modules/runner.py": RUNNER, "tests/__init__.py": "", "tests/kvs/__init__.py": "",
             "tests/kvs/test_model.py": TEST,
             "tests/kvs/modules/__init__.py": "", "tests/kvs/modules/test_runner.py": TEST}
    base = repo.commit("base", files)  # type: ignore[arg-type]
    repo.branch("fix")
    repo.commit("Tests", {"tests/kvs/test_model.py": TEST_MORE, "tests/kvs/modules/test_optim.py": TEST})
    repo.pr_ref(7)
    repo.branch("main", base)
    shipped = {p: repo.git("show", f"main:{p}").encode() for p in files if p.startswith("kvs/")}
    code, report = audit_json(repo, "--wheel", str(wheel_of(tmp_path, "kvs", shipped)))
    hunks = report["hunks"]
    assert isinstance(hunks, list)
    assert {(h["path"], h["status"], h["installed_path"]) for h in hunks} == {
        ("tests/kvs/test_model.py", "not-shipped", None), ("tests/kvs/modules/test_optim.py", "not-shipped", None)}
    assert code == 0


@pytest.mark.parametrize("remote", ["none", "a path", "a fork with upstream"])
@pytest.mark.slow
def test_the_project_is_known_by_its_packages_whatever_the_clone_s_remotes(tmp_path: Path, remote: str) -> None:
    """A tests-only PR against the project's wheel: not-shipped, exit 0, with origin a local path,
    no remote at all, or a fork's origin beside an upstream (the wheel's name is not the clone's)."""
    repo, _ = make_tests_only(tmp_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(repo.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "fetch", "--quiet", "origin", "+refs/pull/*/head:refs/pull/*/head"],
                   check=True)
    if remote == "none":
        subprocess.run(["git", "-C", str(clone), "remote", "remove", "origin"], check=True)
    elif remote == "a fork with upstream":
        subprocess.run(["git", "-C", str(clone), "remote", "set-url", "origin", "https://github.com/me/kvs-fork"],
                       check=True)
        subprocess.run(["git", "-C", str(clone), "remote", "add", "upstream", str(repo.path)], check=True)
    wheel = wheel_of(tmp_path, "kvs-server", package())
    done = run("audit", "7", "--git", str(clone), "--wheel", str(wheel), "--offline", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert_not_shipped(0, json.loads(done.stdout), "kvs-server")


def another_project(tmp_path: Path) -> tuple[GitRepo, Path]:
    """PR #7 changes src/kvs/model.py; a wheel of another project, 'other'."""
    from helpers.targets import make_project

    project = make_project(tmp_path)
    other = {"other/__init__.py": b"", "other/model.py": b"x = 1\n"}
    return project.repo, wheel_of(tmp_path, "other", other)


def one_line(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.strip()]
    for needle in needles:
        assert needle in line, line


@pytest.mark.slow
def test_another_project_s_wheel_is_an_error_not_a_green_light(tmp_path: Path) -> None:
    repo, wheel = another_project(tmp_path)
    done = run("audit", "7", "--git", str(repo.path), "--wheel", str(wheel))
    one_line(done, "holds nothing of the PRs' project", "kvs", "other 1.0", "--dist")
    forced = run("audit", "7", "--git", str(repo.path), "--wheel", str(wheel), "--dist", "other")
    assert forced.returncode == 1, forced.stderr  # forced: audited, and the change is not in it


@pytest.mark.slow
def test_an_unrelated_folder_as_tree_is_an_error(tmp_path: Path) -> None:
    repo, _ = another_project(tmp_path)
    folder = tmp_path / "elsewhere" / "lib"
    folder.mkdir(parents=True)
    (folder / "thing.py").write_text("x = 1\n")
    one_line(run("audit", "7", "--git", str(repo.path), "--tree", str(tmp_path / "elsewhere")),
             "holds nothing of the PRs' project", "tree")


@pytest.mark.slow
def test_an_environment_without_the_project_is_an_error(tmp_path: Path) -> None:
    repo, wheel = another_project(tmp_path)
    site = tmp_path / "site"
    install_into(wheel, site)
    done = run("audit", "7", "--git", str(repo.path), "--site-packages", str(site))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr


@pytest.mark.slow
def test_dist_naming_another_than_the_wheel_is_refused(tmp_path: Path) -> None:
    repo, _ = another_project(tmp_path)
    wheel = wheel_of(tmp_path, "kvs", package())
    one_line(run("audit", "7", "--git", str(repo.path), "--wheel", str(wheel), "--dist", "other"),
             "--dist other", "is kvs")


def test_a_tests_only_pr_falls_to_the_project_not_to_a_distribution_shipping_tests() -> None:
    """A distribution that ships a top-level tests/ (files named like the PR's) is not the project
    when another installs the repository's own package."""
    repo_files = ["src/clicky/__init__.py", "src/clicky/core.py", "tests/__init__.py", "tests/test_core.py"]
    sloppy = DistFiles("sloppy", "1", frozenset({"sloppy/__init__.py", "tests/__init__.py", "tests/test_core.py"}))
    real = DistFiles("clicky-dist", "1", frozenset({"clicky/__init__.py", "clicky/core.py"}))
    for order in ([sloppy, real], [real, sloppy]):
        choice = choose(order, ["tests/test_core.py"], repo_files, "here")
        assert choice.dist.name == "clicky-dist"
        assert "the repository's package clicky" in choice.reason


def monorepo(root: Path) -> GitRepo:
    """acme/ at the root and acme-core/python/acme_core/ beside it, each with its tests; PR #7
    changes the root's tests, PR #8 acme-core's. The clone's folder names neither project."""
    repo = GitRepo(root / "work")
    base = repo.commit("base", {
        "acme/__init__.py": "", "acme/model.py": MODEL, "tests/test_model.py": TEST,
        "acme-core/python/acme_core/__init__.py": "", "acme-core/python/acme_core/runner.py": RUNNER,
        "acme-core/tests/test_runner.py": TEST,
    })
    for number, path in ((7, "tests/test_model.py"), (8, "acme-core/tests/test_runner.py")):
        repo.branch(f"pr{number}", base)
        repo.commit("More tests", {path: TEST_MORE})
        repo.pr_ref(number)
    repo.branch("main", base)
    return repo


@pytest.mark.slow
def test_a_monorepo_s_tests_only_pr_falls_to_the_project_whose_folder_holds_it(tmp_path: Path) -> None:
    """Both distributions install one of the repository's packages; the PR's files say which project it is."""
    repo = monorepo(tmp_path)
    site = tmp_path / "site"
    install_into(wheel_of(tmp_path, "acme", {"acme/__init__.py": b"", "acme/model.py": MODEL.encode()}), site)
    install_into(wheel_of(tmp_path, "acme-core", {"acme_core/__init__.py": b"", "acme_core/runner.py": b"x = 1\n"}),
                 site)
    for number, dist in (("7", "acme"), ("8", "acme-core")):
        done = run("audit", number, "--git", str(repo.path), "--site-packages", str(site), "--format", "json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["target"]["distribution"] == dist
        assert [pr["status"] for pr in report["prs"]] == ["not-shipped"]


def test_nearest_packages_of_a_monorepo() -> None:
    files = ["acme/__init__.py", "acme/sub/__init__.py", "tests/test_a.py", "src/other/__init__.py",
             "acme-core/python/acme_core/__init__.py", "acme-core/tests/test_b.py", "kv/src/kv/__init__.py"]
    assert nearest_packages(["tests/test_a.py"], files) == {"acme", "other"}
    assert nearest_packages(["acme-core/tests/test_b.py"], files) == {"acme_core"}
    assert nearest_packages(["kv/docs/x.md", "docs/y.md"], files) == {"kv", "acme", "other"}
