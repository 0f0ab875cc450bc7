"""Bad input: one clear line on stderr, exit 2, never a traceback (run as a real subprocess)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from prstack.demo.example import DemoBuild


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prstack", *args], capture_output=True, text=True, cwd=cwd)


def assert_one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture(scope="module")
def not_a_wheel(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("bad")
    text = d / "kvserve-0.3.0-py3-none-any.whl"
    text.write_text("not a zip")
    zip_only = d / "plain.whl"
    with zipfile.ZipFile(zip_only, "w") as zf:
        zf.writestr("kvserve/__init__.py", "")
    empty_site = d / "site-packages"
    empty_site.mkdir()
    return {"text": text, "zip": zip_only, "site": empty_site, "dir": d}


@pytest.mark.slow
def test_pr_not_in_clone_names_the_fetch_command(demo_build: DemoBuild) -> None:
    done = run("audit", "123", "--git", str(demo_build.repo.path), "--site-packages", str(demo_build.site_packages))
    fetch = "fetch https://github.com/OWNER/NAME.git '+refs/pull/123/head:refs/pull/123/head'"  # the repo has no remote
    assert_one_line_error(done, "PR #123", "git -C", fetch)


@pytest.mark.slow
def test_git_path_that_is_not_a_repository(demo_build: DemoBuild, not_a_wheel: dict[str, Path]) -> None:
    done = run("audit", "40898", "--git", str(not_a_wheel["dir"]), "--site-packages", str(demo_build.site_packages))
    assert_one_line_error(done, "is not a git repository")
    done = run("audit", "40898", "--git", "/nonexistent/clone", "--site-packages", str(demo_build.site_packages))
    assert_one_line_error(done, "no such directory")


@pytest.mark.slow
def test_wheel_that_is_not_a_zip_or_not_a_wheel(demo_build: DemoBuild, not_a_wheel: dict[str, Path]) -> None:
    done = run("audit", "40898", "--git", str(demo_build.repo.path), "--wheel", str(not_a_wheel["text"]))
    assert_one_line_error(done, "not a zip file")
    done = run("audit", "40898", "--git", str(demo_build.repo.path), "--wheel", str(not_a_wheel["zip"]))
    assert_one_line_error(done, "not a wheel")


@pytest.mark.slow
def test_dist_not_installed(demo_build: DemoBuild) -> None:
    done = run("audit", "40898", "--git", str(demo_build.repo.path),
               "--site-packages", str(demo_build.site_packages), "--dist", "vllm")
    assert_one_line_error(done, "--dist vllm", "not installed")


@pytest.mark.slow
def test_no_target_and_two_targets(demo_build: DemoBuild) -> None:
    done = run("audit", "40898", "--git", str(demo_build.repo.path))
    assert_one_line_error(done, "no target")
    done = run("audit", "40898", "--git", str(demo_build.repo.path),
               "--site-packages", str(demo_build.site_packages), "--platform", "linux/amd64")
    assert_one_line_error(done, "--platform", "--image")


@pytest.mark.slow
def test_site_packages_shipping_none_of_the_files(demo_build: DemoBuild, not_a_wheel: dict[str, Path]) -> None:
    done = run("audit", "40898", "--git", str(demo_build.repo.path), "--site-packages", str(not_a_wheel["site"]))
    assert_one_line_error(done, "no distribution", "--dist")


@pytest.mark.slow
def test_usage_errors_exit_two_without_traceback() -> None:
    done = run("audit", "not-a-number", "--installed")
    assert_one_line_error(done, "'not-a-number' is not a PR")
    done = run("audit", "1", "--installed", "--no-such-option")
    assert_one_line_error(done, "No such option: --no-such-option")


@pytest.mark.slow
def test_bare_clone_and_remote_pr_refs(demo_build: DemoBuild, tmp_path: Path) -> None:
    """A bare mirror holding the PRs as refs/remotes/fork/pr/N works like refs/pull/N/head."""
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(demo_build.repo.path), str(bare)], check=True)
    for number in (40727, 40898):
        subprocess.run(["git", "-C", str(bare), "update-ref", "-d", f"refs/pull/{number}/head"], check=False)
        subprocess.run(["git", "-C", str(bare), "update-ref", f"refs/remotes/fork/pr/{number}",
                        demo_build.repo.heads[number]], check=True)
    site = str(demo_build.site_packages)
    done = run("audit", "40898", "--git", str(bare), "--site-packages", site, "--format", "json")
    assert done.returncode == 1, done.stderr
    assert '"depends_on": [\n        40727\n      ]' in done.stdout


@pytest.mark.parametrize("repo", ["owner/..", "owner/.", "-owner/name", "own er/name"])
@pytest.mark.slow
def test_a_repository_name_github_cannot_have_is_refused_even_offline(demo_build: DemoBuild, repo: str) -> None:
    done = run("audit", "40898", "--git", str(demo_build.repo.path), "--offline", "--repo", repo,
               "--site-packages", str(demo_build.site_packages))
    assert_one_line_error(done, "--repo", "OWNER/NAME")


@pytest.mark.slow
def test_a_pr_url_of_another_repository_than_the_clone_s_is_refused(demo_build: DemoBuild, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--mirror", str(demo_build.repo.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "remote", "set-url", "origin", "https://github.com/acme/kvserve"],
                   check=True)
    site = str(demo_build.site_packages)
    done = run("audit", "https://github.com/other/thing/pull/40898", "--git", str(clone), "--offline",
               "--site-packages", site)
    assert_one_line_error(done, "other/thing is not the repository of the clone", "acme/kvserve")
    # a fork of the same project (another owner, the same name) is the same project
    same = run("audit", "https://github.com/me/kvserve/pull/40898", "--git", str(clone), "--offline",
               "--site-packages", site)
    assert same.returncode == 1, same.stderr
