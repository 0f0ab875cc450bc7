"""`prstack graph` and `prstack hunks` on the demo; `prstack audit` still reports the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prstack.audit import audit_stack
from prstack.cli import main
from prstack.demo.example import DemoBuild
from prstack.sources.git.repo import GitClone
from prstack.targets import TargetSpec


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_graph_on_demo_draws_the_two_pr_stack(demo_build: DemoBuild, capsys: pytest.CaptureFixture[str]) -> None:
    repo = str(demo_build.repo.path)
    code, out, _ = run(capsys, "graph", "40898", "--git", repo)
    assert code == 0
    heads = demo_build.repo.heads
    lines = [line for line in out.splitlines() if "#40" in line]
    assert "#40727" in lines[0] and heads[40727][:10] in lines[0] and "open" in lines[0]
    assert "#40898" in lines[1] and heads[40898][:10] in lines[1] and "← ancestry" in lines[1]
    code, out, _ = run(capsys, "graph", "40898", "--git", repo, "--format", "json")
    data = json.loads(out)
    assert data["order"] == [40727, 40898]
    assert [(e["parent"], e["child"], e["evidence"]) for e in data["edges"]] == [(40727, 40898, ["ancestry"])]
    for fmt, start in (("dot", "digraph"), ("mermaid", "flowchart")):
        code, out, _ = run(capsys, "graph", "40898", "--git", repo, "--format", fmt)
        assert code == 0 and out.startswith(start)


@pytest.mark.slow
def test_hunks_on_demo(demo_build: DemoBuild, capsys: pytest.CaptureFixture[str]) -> None:
    repo = str(demo_build.repo.path)
    code, out, _ = run(capsys, "hunks", "40898", "--git", repo, "--format", "json")
    assert code == 0
    data = json.loads(out)
    by_pr = {n: [h["path"] for h in data["hunks"] if h["pr"] == n] for n in (40727, 40898)}
    assert by_pr[40727] == [
        "docs/index.md",
        "src/kvserve/model.py",
        "src/kvserve/runner.py",
        "tests/test_runner.py",
    ]
    assert by_pr[40898] == [
        "docs/index.md",
        "src/kvserve/config.py",
        "src/kvserve/config.py",
        "src/kvserve/model.py",
        "src/kvserve/runner.py",
        "tests/test_runner.py",
    ]
    assert all(h["commits"] for h in data["hunks"])
    code, out, _ = run(capsys, "hunks", "40898", "--git", repo)
    assert code == 0 and "PR #40898" in out and "src/kvserve/runner.py" in out


def test_bad_input_is_one_line_and_exit_2(
    demo_build: DemoBuild,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PRSTACK_REPO", raising=False)
    code, _, err = run(capsys, "graph", "40898", "--offline")
    assert code == 2 and "--repo OWNER/NAME" in err and "Traceback" not in err
    code, _, err = run(capsys, "graph", "123", "--git", str(demo_build.repo.path))
    assert code == 2 and "refs/pull/123/head" in err and "Traceback" not in err
    code, _, err = run(capsys, "hunks", "40898", "--git", str(demo_build.repo.path), "--base", "nope")
    assert code == 2 and "'nope'" in err


def test_audit_on_demo_reports_the_same(demo_build: DemoBuild) -> None:
    report = audit_stack(
        GitClone(demo_build.repo.path),
        [40898],
        TargetSpec("site-packages", str(demo_build.site_packages)),
    )
    heads = demo_build.repo.heads
    assert [(p.pr.number, p.pr.depends_on, p.pr.merged) for p in report.prs] == [
        (40727, (), False),
        (40898, (40727,), False),
    ]
    assert report.prs[0].pr.base_sha == demo_build.repo.fork_point
    assert report.prs[1].pr.base_sha == heads[40727]
    hunks = [(r.hunk.pr, r.hunk.path, r.hunk.new_start) for r in report.results]
    assert hunks == [
        (40727, "docs/index.md", 4),
        (40727, "src/kvserve/model.py", 35),
        (40727, "src/kvserve/runner.py", 15),
        (40727, "tests/test_runner.py", 6),
        (40898, "docs/index.md", 5),
        (40898, "src/kvserve/config.py", 12),
        (40898, "src/kvserve/config.py", 22),
        (40898, "src/kvserve/model.py", 15),
        (40898, "src/kvserve/runner.py", 22),
        (40898, "tests/test_runner.py", 11),
    ]
    missing = [(r.hunk.pr, r.hunk.path) for r in report.results if r.status.value == "missing"]
    assert missing == [(40727, "src/kvserve/runner.py")]


@pytest.mark.slow
def test_graph_with_github_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--repo adds GitHub's titles and base branches: feature-b targets feature-a, #1's head."""
    from conftest import GitRepo
    from helpers.ghserver import build_stack, serve_stack

    monkeypatch.setenv("PRSTACK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "120")  # each node on one line
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "PRSTACK_REPO"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(tmp_path)
    repo = GitRepo(tmp_path / "upstream")
    build_stack(repo)
    server = serve_stack(repo.path)
    try:
        args = ["graph", "2", "--git", str(repo.path), "--repo", "acme/widget", "--api-url", server.base_url]
        code, out, _ = run(capsys, *args, "--format", "json")
        data = json.loads(out)
        assert code == 0
        assert [(e["parent"], e["child"], e["evidence"]) for e in data["edges"]] == [
            (1, 2, ["ancestry", "base-branch"])
        ]
        assert [p["title"] for p in data["prs"]] == ["Fix the offsets", "Scale [bold]and[/] extra"]
        code, out, _ = run(capsys, *args)
        assert "Scale [bold]and[/] extra" in out and "ancestry, base-branch" in out
        code, out, _ = run(
            capsys,
            "hunks",
            "2",
            "--git",
            str(repo.path),
            "--repo",
            "acme/widget",
            "--api-url",
            server.base_url,
            "--format",
            "json",
        )
        assert code == 0 and json.loads(out)["prs"][0]["title"] == "Fix the offsets"
    finally:
        server.stop()
