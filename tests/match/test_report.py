"""What a report concludes: a PR's roll-up (prstack.audit/2, the former one behind --schema), the
closing summary whose commands work, bidi controls shown escaped, the graph drawn once, and
advice that fits the command that was run."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from conftest import GitRepo
from prstack.cli import main
from prstack.demo.example import DemoBuild
from prstack.demo.fixture import export_tree
from prstack.match.report import AuditReport, pr_status, pr_status_v1, report
from prstack.models import (
    FileChange,
    Hunk,
    HunkLine,
    HunkResult,
    HunkStatus,
    PRReport,
    PRStatus,
    PullRequest,
    TargetInfo,
)
from prstack.render import OutputFormat, render_audit

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"


def _results(*statuses: HunkStatus) -> list[HunkResult]:
    hunk = Hunk(1, "pkg/a.py", "pkg/a.py", FileChange.MODIFIED, 1, 1, 1, 1, (HunkLine("-", "a"), HunkLine("+", "b")))
    return [HunkResult(hunk, s) for s in statuses]


M, D, A, P, F, N = (HunkStatus.MISSING, HunkStatus.DIVERGED, HunkStatus.APPLIED, HunkStatus.PARTIAL,
                    HunkStatus.FILE_MISSING, HunkStatus.NOT_SHIPPED)


@pytest.mark.parametrize(("statuses", "now", "before"), [
    ([M] * 26 + [D] * 3, PRStatus.MISSING, PRStatus.PARTIAL),  # nothing present: missing, the counts say the rest
    ([D], PRStatus.MISSING, PRStatus.PARTIAL),
    ([M, F, HunkStatus.CONFLICT], PRStatus.MISSING, PRStatus.PARTIAL),
    ([M, F], PRStatus.MISSING, PRStatus.MISSING),
    ([A, M, D], PRStatus.PARTIAL, PRStatus.PARTIAL),  # some present, some not
    ([P, M], PRStatus.PARTIAL, PRStatus.PARTIAL),  # some of a hunk's lines are present
    ([A, HunkStatus.RELOCATED, N], PRStatus.APPLIED, PRStatus.APPLIED),
    ([N, HunkStatus.UNVERIFIABLE], PRStatus.NOT_SHIPPED, PRStatus.NOT_SHIPPED),
])
def test_a_prs_roll_up(statuses: list[HunkStatus], now: PRStatus, before: PRStatus) -> None:
    assert pr_status(_results(*statuses)) is now
    assert pr_status_v1(_results(*statuses)) is before


def _two_functions(repo: GitRepo) -> Path:
    """PR #1 changes two functions; the tree holds one rewritten otherwise and the other untouched."""
    base = "def a():\n    return 1\n\n\n\n\n\n\ndef b():\n    return 2\n"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/m.py": base})
    repo.branch("feature")
    repo.commit("Change both", {"pkg/m.py": base.replace("return 1", "return 10").replace("return 2", "return 20")})
    repo.pr_ref(1)
    repo.branch("main", "main")
    tree = repo.path.parent / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "m.py").write_text(base.replace("return 1", "raise ValueError('rewritten')"))
    return tree


def test_nothing_present_is_missing_and_the_former_id_keeps_partial(
        git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    tree = _two_functions(git_repo)
    args = ["audit", "1", "--git", str(git_repo.path), "--tree", str(tree), "--format", "json"]
    assert main(args) == 1
    now = json.loads(capsys.readouterr().out)
    assert main([*args, "--schema", "prstack.audit/1"]) == 1
    before = json.loads(capsys.readouterr().out)
    assert sorted(h["status"] for h in now["hunks"]) == ["diverged", "missing"]
    assert (now["schema"], now["prs"][0]["status"]) == ("prstack.audit/2", "missing")
    assert (before["schema"], before["prs"][0]["status"]) == ("prstack.audit/1", "partial")
    assert {k: v for k, v in now.items() if k not in ("schema", "prs")} == \
        {k: v for k, v in before.items() if k not in ("schema", "prs")}
    assert main([*args, "--schema", "prstack.audit/9"]) == 2


@pytest.mark.slow
def test_the_summary_ends_the_table_and_its_commands_work(
        demo_build: DemoBuild, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["audit", "40898", "--git", str(demo_build.repo.path), "--wheel", str(demo_build.wheel)]
    assert main(args) == 1
    out = capsys.readouterr().out
    tail = out[out.index("Not fully in the target:"):].splitlines()
    assert tail[0] == "Not fully in the target: #40727 (partial: 1 of 2 shipped hunks not present)."
    commands = [line.split("  # ")[0].strip() for line in tail[1:]]
    assert len(commands) == 3 and commands[2] == shlex.join(["prstack", *args, "--verbose"])
    assert commands[1] == f"git apply missing.patch && python -m pip wheel --no-deps -w {demo_build.wheel.parent} ."
    plan = shlex.split(commands[0])
    assert plan[:2] == ["prstack", "plan"] and plan[-2:] == ["--emit-patch", "missing.patch"]
    assert main(plan[1:]) == 0
    capsys.readouterr()
    patch = (tmp_path / "missing.patch").read_text()
    assert '+        return f"kv.{layer_id + 1}"' in patch
    build = export_tree(demo_build.repo.path, demo_build.repo.fork_build, tmp_path / "build")
    applied = subprocess.run(["git", "apply", "--check", str(tmp_path / "missing.patch")], cwd=build,
                             capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr  # the patch goes on the source the target was built from
    assert main([*args, "--verbose"]) == 1
    assert "--verbose  #" not in capsys.readouterr().out  # asked already: not suggested again


def test_markdown_starts_with_the_summary_without_local_paths(
        demo_build: DemoBuild, capsys: pytest.CaptureFixture[str]) -> None:
    main(["audit", "40898", "--git", str(demo_build.repo.path), "--site-packages", str(demo_build.site_packages),
          "--format", "markdown"])
    out = capsys.readouterr().out
    assert out.index("**Not fully in the target: #40727") < out.index("| PR |")
    assert "prstack plan 40898 --git PATH --site-packages DIR --emit-patch missing.patch" in out
    assert str(demo_build.repo.path) not in out and str(demo_build.site_packages) not in out


def test_markdown_names_relative_local_paths_by_their_metavar_too(
        demo_build: DemoBuild, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths given relative to the working folder are this machine's too: the markdown's commands
    show `--git PATH --site-packages DIR`, as for absolute ones."""
    here = demo_build.site_packages.parent
    monkeypatch.chdir(here)
    git = os.path.relpath(demo_build.repo.path, here)
    main(["audit", "40898", "--git", git, "--site-packages", demo_build.site_packages.name, "--format", "markdown"])
    out = capsys.readouterr().out
    assert "prstack plan 40898 --git PATH --site-packages DIR --emit-patch missing.patch" in out
    assert f"--git {git}" not in out and f"--site-packages {demo_build.site_packages.name}" not in out


def test_all_present_says_so(demo_build: DemoBuild, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    head = export_tree(demo_build.repo.path, demo_build.repo.heads[40898], tmp_path / "head")
    assert main(["audit", "40898", "--git", str(demo_build.repo.path), "--tree", str(head)]) == 0
    out = capsys.readouterr().out
    assert "Every shipped hunk of the 2 PR(s) audited is in the target." in out
    assert "--emit-patch" not in out and "--verbose" in out


def _bidi_report() -> AuditReport:
    hunk = Hunk(1, f"pkg/a{BIDI}.py", f"pkg/a{BIDI}.py", FileChange.MODIFIED, 1, 1, 1, 1,
                (HunkLine("-", "x = 1"), HunkLine("+", f"x = '{BIDI}'")))
    pr = PullRequest(1, "b" * 40, "c" * 40, title=f"admin{BIDI}gnp.exe")
    results = [HunkResult(hunk, HunkStatus.MISSING, installed_path=f"pkg/a{BIDI}.py")]
    return report(TargetInfo("tree", "/t", None, None), [pr], results)


@pytest.mark.parametrize("fmt", [OutputFormat.TABLE, OutputFormat.MARKDOWN])
def test_bidi_controls_are_shown_escaped(fmt: OutputFormat) -> None:
    console = Console(record=True, width=200)
    console.print(render_audit(_bidi_report(), fmt))
    text = console.export_text()
    assert not any(ch in text for ch in BIDI)
    escaped = "".join(f"\\u{ord(ch):04x}" for ch in BIDI)
    assert f"admin{escaped}gnp.exe" in text  # the title
    assert f"pkg/a{escaped}.py" in text  # the file name


def test_json_keeps_bidi_controls() -> None:
    rendered = render_audit(_bidi_report(), OutputFormat.JSON)
    assert isinstance(rendered, str)
    data = json.loads(rendered)
    assert data["prs"][0]["title"] == f"admin{BIDI}gnp.exe" and data["hunks"][0]["path"] == f"pkg/a{BIDI}.py"


@pytest.mark.slow
def test_a_commit_subjects_bidi_controls_are_escaped_in_the_cli(
        git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/m.py": "x = 1\n"})
    git_repo.branch("feature")
    git_repo.commit("Fix \u202eexe.txt\u202c now", {"pkg/m.py": "x = 2\n"})
    git_repo.pr_ref(1)
    tree = git_repo.path.parent / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "m.py").write_text("x = 1\n")
    for fmt in ("table", "markdown"):
        main(["audit", "1", "--git", str(git_repo.path), "--tree", str(tree), "--format", fmt])
        out = capsys.readouterr().out
        assert "\u202e" not in out and "\u202c" not in out and "Fix \\u202eexe.txt\\u202c now" in out


def test_the_graph_draws_each_pr_once_and_a_merge_of_main_is_not_lacking(
        git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    git_repo.commit("base", {"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c = 1\n"})
    git_repo.branch("one")
    git_repo.commit("One", {"a.py": "a = 2\n"})
    git_repo.pr_ref(1)
    git_repo.branch("two", "main")
    git_repo.commit("Two", {"b.py": "b = 2\n"})
    git_repo.pr_ref(2)
    git_repo.branch("three", "one")
    git_repo.git("-c", "commit.gpgsign=false", "merge", "--quiet", "--no-ff", "-m", "Take two", "two")
    git_repo.commit("Three", {"c.py": "c = 2\n"})
    git_repo.pr_ref(3)
    git_repo.branch("main", "main")
    git_repo.commit("Upstream moves", {"d.py": "d = 1\n"})
    git_repo.branch("one", "one")  # #1 merges main after #3 was built on it
    git_repo.git("-c", "commit.gpgsign=false", "merge", "--quiet", "--no-ff", "-m", "Merge branch 'main'", "main")
    git_repo.pr_ref(1)
    git_repo.branch("main", "main")
    code = main(["graph", "3", "--git", str(git_repo.path)])
    out = capsys.readouterr().out
    assert code == 0, out  # nothing stale: #3 lacks nothing of #1's own change
    assert "lacks" not in out and "Merge branch" not in out
    drawn = [line for line in out.splitlines() if "#3  " in line and "commits" in line]
    assert len(drawn) == 1, out  # under its first parent; named, not drawn, under the other
    assert out.count("#3") == 2 and "#3  (drawn above; also builds on this PR)  ← ancestry" in out
    legend = [line for line in out.splitlines() if line.startswith("← ")]
    assert len(legend) == 1 and "ancestry: parent's head in its history" in legend[0]
    assert out.rstrip().splitlines()[-1] == legend[0]  # one line


def test_repo_without_network_advises_what_fits_a_clone(demo_build: DemoBuild, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PRSTACK_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "PRSTACK_REPO"):
        monkeypatch.delenv(name, raising=False)
    for command in ("audit", "graph"):
        target = ["--site-packages", str(demo_build.site_packages)] if command == "audit" else []
        code = main([command, "40898", "--git", str(demo_build.repo.path), "--repo", "acme/kvserve",
                     "--api-url", "http://127.0.0.1:9", *target])
        err = capsys.readouterr().err
        assert code == 2 and len(err.splitlines()) == 1, err
        assert "--git PATH" not in err and "leave out --repo" in err and "--offline" in err


def test_a_pr_report_renders_its_first_commits_title_once() -> None:
    pr = PullRequest(5, "d" * 40, "e" * 40)
    counts = {s.value: 0 for s in HunkStatus}
    rendered = render_audit(AuditReport(TargetInfo("tree", "t", None, None), (PRReport(pr, PRStatus.NOT_SHIPPED,
                                                                                       counts),), ()),
                            OutputFormat.TABLE)
    console = Console(record=True, width=80)
    console.print(rendered)
    assert "no title from GitHub" not in console.export_text()  # no title at all: no footnote


def test_every_source_option_the_summary_repeats_is_one_plan_takes(capsys: pytest.CaptureFixture[str]) -> None:
    from prstack.cli.support import SourceOptions, source_options

    given = source_options(SourceOptions(Path("clone"), "o/n", "https://ghe.example/api/v3", True, "v1.0"))
    assert main(["plan", "--help"]) == 0
    usage = capsys.readouterr().out
    assert all(option in usage for option in given if option.startswith("--"))
