"""Installed builds audited for real: regular, vcs direct_url, scm version, edited after install, overlays."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.targets import (
    MODEL,
    MODEL_FIXED,
    Project,
    audit_with_build,
    install_into,
    make_project,
    make_wheel,
    statuses,
)
from prstack.render import OutputFormat, render_audit
from prstack.targets.base import TargetSpec, open_target
from prstack.targets.built_from import Containment


def site_spec(site: Path, **kw: str) -> TargetSpec:
    return TargetSpec("site-packages", str(site), **kw)


def vcs_url(project: Project, commit: str, rev: str = "refs/pull/7/head") -> dict[str, object]:
    return {"url": "https://github.com/someone/kvs.git",
            "vcs_info": {"vcs": "git", "commit_id": commit, "requested_revision": rev}}


def test_regular_install_has_no_build_commit_but_a_clean_record(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    install_into(make_wheel(tmp_path / "dist", "kvs", "1.0.0", project.files_at(project.head)), tmp_path / "site")
    report, _ = audit_with_build(project, site_spec(tmp_path / "site"))
    assert statuses(report)["src/kvs/model.py"] == ["applied"]
    build = report.build
    assert build is not None
    assert build.header == (
        "kvs 1.0.0, no build commit recorded (no direct_url.json vcs_info, no +g<sha> in the version)"
    )
    ev = build.evidence
    assert ev.installer == "pip" and ev.top_level == ("kvs",)
    assert ev.record is not None and ev.record.clean and ev.record.checked >= 4
    assert ev.chosen_by == "the only distribution shipping the PRs' files"
    assert not build.disagreements


def test_vcs_direct_url_build_contains_the_pr_head(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    h9 = project.head[:9]
    wheel = make_wheel(tmp_path / "dist", "kvs", f"1.0.1.dev1+g{h9}", project.files_at(project.head),
                       metadata=("Project-URL: Source, https://github.com/someone/kvs",))
    install_into(wheel, tmp_path / "site", direct_url=vcs_url(project, project.head))
    report, _ = audit_with_build(project, site_spec(tmp_path / "site"))
    build = report.build
    assert build is not None
    assert build.header == (
        f"kvs 1.0.1.dev1+g{h9}, built from {h9} (direct_url: github.com/someone/kvs@{h9}; "
        "requested refs/pull/7/head), which contains #7's head"
    )
    assert build.contains == {7: Containment.HEAD}
    assert report.target.vcs_commit == project.head
    assert not build.disagreements
    data = json.loads(str(render_audit(report, OutputFormat.JSON)))
    got = data["target"]["build"]
    assert got["commit"] == project.head and got["contains"] == {"7": "head"}
    assert got["direct_url"]["requested_revision"] == "refs/pull/7/head"
    assert got["version_local"] == {"commit": h9, "distance": 1, "dirty_date": None, "extra": []}
    assert got["project_urls"] == [{"label": "Source", "url": "https://github.com/someone/kvs"}]
    assert data["target"]["vcs_commit"] == project.head  # the prstack.audit/1 field is unchanged


def test_build_from_the_base_does_not_contain_the_pr(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    wheel = make_wheel(tmp_path / "dist", "kvs", f"1.0.0+g{project.base[:9]}", project.files_at(project.base))
    install_into(wheel, tmp_path / "site")
    report, _ = audit_with_build(project, site_spec(tmp_path / "site"))
    assert statuses(report)["src/kvs/model.py"] == ["missing"]
    assert report.build is not None
    assert report.build.header.endswith(
        f"built from {project.base[:9]} (from the version's local part), which does not contain #7's head"
    )
    assert not report.build.disagreements  # metadata and hunks agree: not there


def test_scm_dirty_version_names_the_commit_and_the_dirty_tree(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    h9 = project.head[:9]
    wheel = make_wheel(tmp_path / "dist", "kvs", f"0.3.1.dev2+g{h9}.d20260514", project.files_at(project.head))
    install_into(wheel, tmp_path / "site")
    report, _ = audit_with_build(project, site_spec(tmp_path / "site"))
    assert report.build is not None
    assert report.build.header == (
        f"kvs 0.3.1.dev2+g{h9}.d20260514, built from {h9} (from the version's local part; "
        "tree with uncommitted changes, 2026-05-14), which contains #7's head"
    )


def test_file_edited_after_install_is_flagged_on_the_hunk_and_in_the_header(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    site = tmp_path / "site"
    wheel = make_wheel(tmp_path / "dist", "kvs", f"1.0.1+g{project.head[:9]}", project.files_at(project.head))
    install_into(wheel, site, direct_url=vcs_url(project, project.head))
    (site / "kvs" / "model.py").write_text(MODEL)  # someone reverted the fix in place
    (site / "kvs" / "hotfix.py").write_text("X = 1\n")
    (site / "kvs" / "runner.py").unlink()
    report, target = audit_with_build(project, site_spec(site))
    [model] = [r for r in report.results if r.hunk.path == "src/kvs/model.py"]
    assert model.status.value == "missing"
    assert model.evidence.note is not None and "edited after install" in model.evidence.note
    ev = target.evidence
    assert ev.record is not None
    assert ev.record.edited == ("kvs/model.py",)
    assert ev.record.unrecorded == ("kvs/hotfix.py",)
    assert ev.record.absent == ("kvs/runner.py",)
    build = report.build
    assert build is not None
    [flag] = build.disagreements
    assert flag.pr == 7 and flag.containment is Containment.HEAD and flag.files == ("kvs/model.py",)
    assert flag.cause.startswith("files changed after install")
    text = str(render_audit(report, OutputFormat.MARKDOWN))
    assert "the build commit contains #7, but its hunks are missing from the files" in text
    assert "1 file(s) edited after install (RECORD hash differs): kvs/model.py" in text


def test_python_only_overlay_on_an_older_build_is_the_reverse_disagreement(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    site = tmp_path / "site"
    wheel = make_wheel(tmp_path / "dist", "kvs", "1.0.0", project.files_at(project.base))
    install_into(wheel, site, direct_url=vcs_url(project, project.base, "main"))
    (site / "kvs" / "model.py").write_text(MODEL_FIXED)  # the PR's file copied over the build
    report, _ = audit_with_build(project, site_spec(site))
    assert statuses(report)["src/kvs/model.py"] == ["applied"]
    build = report.build
    assert build is not None
    [flag] = build.disagreements
    assert flag.containment is Containment.NO
    assert flag.cause == "a python-only overlay: files changed after install (kvs/model.py)"


def test_build_commit_not_in_the_clone_is_unknown_not_a_verdict(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    wheel = make_wheel(tmp_path / "dist", "kvs", "1.0.0+gdeadbeef1", project.files_at(project.head))
    install_into(wheel, tmp_path / "site")
    report, _ = audit_with_build(project, site_spec(tmp_path / "site"))
    assert report.build is not None
    assert report.build.header.endswith("which is not in the clone, so whether it holds #7 is unknown")
    assert report.build.contains == {7: Containment.UNKNOWN}


def test_cherry_picked_build_holds_patch_equal_copies(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    project.repo.branch("release", project.base)
    project.repo.commit("release notes", {"NOTES.md": "notes\n"})
    project.repo.git("-c", "commit.gpgsign=false", "cherry-pick", project.head)
    build_commit = project.repo.git("rev-parse", "HEAD")
    project.repo.branch("main", project.base)
    wheel = make_wheel(tmp_path / "dist", "kvs", f"1.0.0+g{build_commit[:9]}", project.files_at(build_commit))
    install_into(wheel, tmp_path / "site")
    report, _ = audit_with_build(project, site_spec(tmp_path / "site"))
    assert report.build is not None
    assert report.build.contains == {7: Containment.PATCHES}
    assert report.build.header.endswith("which contains patch-equal copies of #7's commits")
    assert not report.build.disagreements


def test_without_a_clone_the_header_says_only_what_the_metadata_says(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    wheel = make_wheel(tmp_path / "dist", "kvs", f"1.0.0+g{project.head[:9]}", project.files_at(project.head))
    install_into(wheel, tmp_path / "site")
    report, _ = audit_with_build(project, site_spec(tmp_path / "site"), clone=False)
    assert report.build is not None
    assert report.build.header == f"kvs 1.0.0+g{project.head[:9]}, built from {project.head[:9]} " \
                                  "(from the version's local part)"


def test_another_interpreter_s_environment_without_running_its_pth_files(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    wheel = make_wheel(tmp_path / "dist", "kvs", f"1.0.1+g{project.head[:9]}", project.files_at(project.head))
    install_into(wheel, site, direct_url=vcs_url(project, project.head))
    canary = tmp_path / "ran"
    (site / "zz_canary.pth").write_text(f"import pathlib; pathlib.Path({str(canary)!r}).touch()\n")
    report, _ = audit_with_build(project, TargetSpec("python", str(venv / "bin" / "python")))
    assert report.target.kind == "python" and report.target.distribution == "kvs"
    assert statuses(report) == {"src/kvs/model.py": ["applied"]}
    assert report.build is not None and report.build.contains == {7: Containment.HEAD}
    assert not canary.exists()  # the environment's .pth code never ran


def test_the_builders_make_an_installable_wheel(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    wheel = make_wheel(tmp_path / "dist", "kvs", "1.0.0", project.files_at(project.head))
    install_into(wheel, tmp_path / "site")
    assert (tmp_path / "site" / "kvs" / "model.py").read_text() == MODEL_FIXED
    assert (tmp_path / "site" / "kvs-1.0.0.dist-info" / "INSTALLER").read_text() == "pip\n"


def test_record_is_checked_against_the_bytes_the_audit_read(tmp_path: Path) -> None:
    """A file the audit has read is checked against RECORD as it was read, not read again: the
    integrity line speaks of the bytes judged (a file read before it was edited is intact, one
    edited before it was read is edited)."""
    project = make_project(tmp_path)
    site = tmp_path / "site"
    install_into(make_wheel(tmp_path / "dist", "kvs", "1.0.0", project.files_at(project.head)), site)
    target = open_target(site_spec(site), ["src/kvs/model.py"], ["src/kvs/model.py", "src/kvs/runner.py"])
    assert target.read("kvs/model.py") is not None
    (site / "kvs" / "model.py").write_text(MODEL)
    (site / "kvs" / "runner.py").write_text("X = 1\n")
    assert target.read("kvs/runner.py") == b"X = 1\n"
    record = target.evidence.record
    assert record is not None and record.edited == ("kvs/runner.py",)
