"""The demo's story end to end: a fork build that dropped one hunk of #40727, audited for real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prstack.audit import audit_stack
from prstack.cli import main
from prstack.demo.example import DemoBuild, run_demo
from prstack.models import HunkStatus, PRStatus
from prstack.sources.git.repo import GitClone
from prstack.targets import TargetSpec

# Truth by construction (fixtures/demo/README.md): the fork build is #40898's head with
# #40727's runner.py hunk reverted and two lines added near the top of model.py.
EXPECTED = {
    (40727, "docs/index.md"): [HunkStatus.NOT_SHIPPED],
    (40727, "src/kvserve/model.py"): [HunkStatus.APPLIED],
    (40727, "src/kvserve/runner.py"): [HunkStatus.MISSING],
    (40727, "tests/test_runner.py"): [HunkStatus.NOT_SHIPPED],
    (40898, "docs/index.md"): [HunkStatus.NOT_SHIPPED],
    (40898, "src/kvserve/config.py"): [HunkStatus.APPLIED, HunkStatus.APPLIED],
    (40898, "src/kvserve/model.py"): [HunkStatus.APPLIED],
    (40898, "src/kvserve/runner.py"): [HunkStatus.APPLIED],
    (40898, "tests/test_runner.py"): [HunkStatus.NOT_SHIPPED],
}


def verdicts(report):  # type: ignore[no-untyped-def]
    out: dict[tuple[int, str], list[HunkStatus]] = {}
    for r in report.results:
        out.setdefault((r.hunk.pr, r.hunk.path), []).append(r.status)
    return out


def test_demo_finds_the_dropped_hunk(tmp_path: Path) -> None:
    result = run_demo(tmp_path)
    assert verdicts(result.report) == EXPECTED
    assert [p.pr.number for p in result.report.prs] == [40727, 40898]
    assert [p.status for p in result.report.prs] == [PRStatus.PARTIAL, PRStatus.APPLIED]
    assert result.report.prs[1].pr.depends_on == (40727,)
    missing = [r for r in result.report.results if r.status is HunkStatus.MISSING]
    assert missing[0].installed_path == "kvserve/runner.py"
    assert missing[0].hunk.new_start == 15
    assert '        return f"kv.{layer_id + 1}"' in missing[0].hunk.added
    # grep in the model file is fooled; the sentence says so and names the missing place
    assert result.grep_found
    assert "kvserve/runner.py:15 (missing)" in result.verdict()


def test_provenance_names_the_commit_of_each_hunk(demo_build: DemoBuild) -> None:
    src = GitClone(demo_build.repo.path)
    report = audit_stack(src, [40898], TargetSpec("site-packages", str(demo_build.site_packages)))
    subjects = {}
    for pr in report.prs:
        for c in pr.pr.commits:
            subjects[c.sha] = c.subject
    by_path = {(r.hunk.pr, r.hunk.path): r.hunk for r in report.results}
    assert subjects[by_path[(40727, "src/kvserve/runner.py")].commit] == (
        "Fix layer index offset in the runner's cache keys"
    )
    assert subjects[by_path[(40727, "src/kvserve/model.py")].commit] == (
        "Fix layer index offset in checkpoint names"
    )
    assert subjects[by_path[(40898, "src/kvserve/model.py")].commit] == "Add SlidingWindowAttention"


@pytest.mark.parametrize("kind", ["site-packages", "wheel", "tree"])
def test_every_target_kind_gives_the_same_verdicts(demo_build: DemoBuild, kind: str) -> None:
    path = {
        "site-packages": demo_build.site_packages,
        "wheel": demo_build.wheel,
        "tree": demo_build.tree / "src",
    }[kind]
    report = audit_stack(GitClone(demo_build.repo.path), [40898], TargetSpec(kind, str(path)))
    assert verdicts(report) == EXPECTED
    assert report.target.kind == kind


def test_python_target_reads_another_interpreters_environment(demo_build: DemoBuild, tmp_path: Path) -> None:
    # a real virtual environment with the fork's wheel installed into it
    import subprocess
    import sys

    from prstack.demo.wheel import install_wheel

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python3*/site-packages"))
    install_wheel(demo_build.wheel, site)
    report = audit_stack(GitClone(demo_build.repo.path), [40898], TargetSpec("python", str(venv / "bin" / "python")))
    assert verdicts(report) == EXPECTED
    assert report.target.distribution == "kvserve"


def test_auditing_the_parent_alone_leaves_the_child_out(demo_build: DemoBuild) -> None:
    report = audit_stack(
        GitClone(demo_build.repo.path), [40727], TargetSpec("site-packages", str(demo_build.site_packages))
    )
    assert [p.pr.number for p in report.prs] == [40727]
    assert {k: v for k, v in verdicts(report).items()} == {k: v for k, v in EXPECTED.items() if k[0] == 40727}


def test_cli_json_exit_code_and_contract(demo_build: DemoBuild, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", "40898", "--git", str(demo_build.repo.path),
                 "--site-packages", str(demo_build.site_packages), "--format", "json"])
    assert code == 1
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "prstack.audit/2"
    assert set(data["target"]) >= {"kind", "path", "distribution", "version", "vcs_commit"}
    assert data["target"]["distribution"] == "kvserve"
    assert data["target"]["vcs_commit"] == demo_build.repo.fork_build[:9]
    pr_types = {"number": int, "title": (str, type(None)), "head_sha": str, "base_sha": str,
                "depends_on": list, "status": str, "counts": dict}
    for pr in data["prs"]:
        for key, typ in pr_types.items():
            assert isinstance(pr[key], typ), key
        assert set(pr["counts"]) == {s.value for s in HunkStatus}
        assert pr["status"] in {s.value for s in PRStatus}
    assert [(p["number"], p["depends_on"]) for p in data["prs"]] == [(40727, []), (40898, [40727])]
    assert data["prs"][1]["base_sha"] == demo_build.repo.heads[40727]
    assert data["prs"][1]["head_sha"] == demo_build.repo.heads[40898]
    hunk_types = {"pr": int, "commit": (str, type(None)), "path": str, "installed_path": (str, type(None)),
                  "old_start": int, "old_lines": int, "new_start": int, "new_lines": int, "status": str,
                  "found_path": (str, type(None)), "found_line": (int, type(None)), "fuzz": (int, type(None))}
    for h in data["hunks"]:
        for key, typ in hunk_types.items():
            assert isinstance(h[key], typ), key
        assert h["status"] in {s.value for s in HunkStatus}
        if h["status"] == "applied":
            assert h["found_path"] == h["installed_path"] and h["found_line"] >= 1
    statuses = [(h["pr"], h["path"], h["status"]) for h in data["hunks"]]
    assert (40727, "src/kvserve/runner.py", "missing") in statuses
    assert sum(1 for s in statuses if s[2] == "applied") == 5


def test_cli_exit_zero_when_everything_is_there(demo_build: DemoBuild, capsys: pytest.CaptureFixture[str]) -> None:
    # #40898's own hunks are all in the fork build; auditing the upstream tree of its head too
    import subprocess

    tree = demo_build.tree.parent / "head-tree"
    from prstack.demo.fixture import export_tree

    export_tree(demo_build.repo.path, demo_build.repo.heads[40898], tree)
    code = main(["audit", "40898", "--git", str(demo_build.repo.path), "--tree", str(tree)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "#40727" in out and "#40898" in out
    assert subprocess.run(["git", "--version"], capture_output=True).returncode == 0


def test_markdown_report_collapses_details(demo_build: DemoBuild, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", "40898", "--git", str(demo_build.repo.path),
                 "--wheel", str(demo_build.wheel), "--format", "markdown"])
    out = capsys.readouterr().out
    assert code == 1
    assert "<details>" in out and "</details>" in out
    assert "| #40727 |" in out and "**partial**" in out
    assert "kvserve/runner.py:15" in out
