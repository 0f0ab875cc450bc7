"""The build joined to the PR graph: header sentences, disagreements, notes, and every renderer showing them."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from rich.console import Console

from prstack.audit import audit_stack
from prstack.demo.example import DemoBuild
from prstack.match.passes import noted_by_build
from prstack.match.report import AuditReport
from prstack.models import FileChange, Hunk, HunkResult, HunkStatus, PRReport, PRStatus, PullRequest, TargetInfo
from prstack.render import OutputFormat, render_audit
from prstack.sources.git.repo import GitClone
from prstack.targets.base import TargetSpec
from prstack.targets.built_from import (
    BuildReport,
    Containment,
    header_sentence,
    join_build,
)
from prstack.targets.evidence import BuildEvidence
from prstack.targets.metadata import parse_direct_url, parse_version
from prstack.targets.record import RecordIntegrity

SHA = "3cfc8f8b7" + "1" * 31
VLLM = BuildEvidence(
    distribution="vllm",
    version=parse_version("0.20.2.dev123+g3cfc8f8b7"),
    direct_url=parse_direct_url(json.dumps({"url": "https://github.com/someone/vllm.git",
                                            "vcs_info": {"vcs": "git", "commit_id": SHA}})),
)


def test_the_issue_s_header() -> None:
    both = {40727: Containment.HEAD, 40898: Containment.HEAD}
    assert header_sentence(VLLM, "vllm", both) == (
        "vllm 0.20.2.dev123+g3cfc8f8b7, built from 3cfc8f8b7 (direct_url: github.com/someone/vllm@3cfc8f8b7), "
        "which contains #40727 and #40898's heads"
    )


@pytest.mark.parametrize(("held", "tail"), [
    ({1: Containment.HEAD, 2: Containment.NO}, "which contains #1's head, but not #2's head"),
    ({1: Containment.NO, 2: Containment.NO, 3: Containment.NO}, "which does not contain #1, #2 and #3's heads"),
    ({1: Containment.PATCHES, 2: Containment.HEAD},
     "which contains #2's head and patch-equal copies of #1's commits"),
    ({1: Containment.HEAD, 2: Containment.UNKNOWN}, "which contains #1's head, #2 unknown"),
    ({1: Containment.UNKNOWN}, "which is not in the clone, so whether it holds #1 is unknown"),
])
def test_header_variants(held: dict[int, Containment], tail: str) -> None:
    assert header_sentence(VLLM, "vllm", held).endswith(tail)


def test_metadata_that_disagrees_with_itself_is_said() -> None:
    ev = BuildEvidence(distribution="x", version=parse_version("1.0+gabcdef1"),
                       direct_url=parse_direct_url(json.dumps({"url": "https://github.com/o/x",
                                                               "vcs_info": {"vcs": "git", "commit_id": SHA}})))
    assert ev.commits_disagree
    assert "but the version names gabcdef1" in header_sentence(ev, "x", {})


def _report(status: PRStatus, hunk_status: HunkStatus) -> tuple[list[PRReport], list[HunkResult]]:
    pr = PullRequest(5, "a" * 40, "b" * 40)
    hunk = Hunk(5, "src/x/m.py", "src/x/m.py", FileChange.MODIFIED, 1, 1, 1, 1)
    counts = {s.value: 0 for s in HunkStatus} | {hunk_status.value: 1}
    return [PRReport(pr, status, counts)], [HunkResult(hunk, hunk_status, installed_path="x/m.py")]


@pytest.mark.parametrize(("ev", "cause"), [
    (BuildEvidence(version=parse_version("1+g1234567"), record=RecordIntegrity(1, edited=("x/m.py",))),
     "files changed after install (x/m.py: edited after install: its hash no longer matches RECORD)"),
    (BuildEvidence(version=parse_version("1+g1234567.d20260101")),
     "the build was made from a tree with uncommitted changes, so it is not exactly that commit"),
    (BuildEvidence(version=parse_version("1+g1234567"), candidates=("x-fork",)),
     "another distribution ships the same files (x-fork) and may have replaced them"),
    (BuildEvidence(version=parse_version("1+g1234567")),
     "a later commit of the build rewrote or reverted these hunks (a conflict resolution?), "
     "or the files are from a different build than the metadata says"),
])
def test_contained_but_missing_names_the_likely_cause(ev: BuildEvidence, cause: str) -> None:
    prs, results = _report(PRStatus.MISSING, HunkStatus.MISSING)
    build = join_build(ev, "x", prs, results, lambda build, head: True)
    [flag] = build.disagreements
    assert flag.cause == cause and flag.containment is Containment.HEAD


def test_not_contained_but_present_and_agreement_is_quiet() -> None:
    prs, results = _report(PRStatus.APPLIED, HunkStatus.APPLIED)
    ev = BuildEvidence(version=parse_version("1+g1234567"))
    [flag] = join_build(ev, "x", prs, results, lambda build, head: False).disagreements
    assert flag.cause.startswith("the change came another way")
    assert flag.sentence().startswith("the build commit does not contain #5, but its hunks are present")
    assert not join_build(ev, "x", prs, results, lambda build, head: True).disagreements
    assert not join_build(ev, "x", prs, results, lambda build, head: None).disagreements
    assert not join_build(BuildEvidence(), "x", prs, results, lambda build, head: True).disagreements


def test_build_notes_keep_the_matcher_note_and_add_record_and_binary() -> None:
    _, results = _report(PRStatus.MISSING, HunkStatus.MISSING)
    ev = BuildEvidence(record=RecordIntegrity(1, edited=("x/m.py",)))
    [flagged] = noted_by_build(results, ev)
    assert flagged.evidence.note == "x/m.py: edited after install: its hash no longer matches RECORD"
    assert ev.file_issues() == {"x/m.py": "edited after install: its hash no longer matches RECORD"}
    hunk = Hunk(5, "csrc/k.cu", "csrc/k.cu", FileChange.MODIFIED, 1, 1, 1, 1)
    [unverifiable] = noted_by_build([HunkResult(hunk, HunkStatus.UNVERIFIABLE)], ev, lambda p: "x/_C.so")
    assert unverifiable.evidence.note == "compiled into x/_C.so, which cannot be checked hunk by hunk"
    untouched = noted_by_build(results, BuildEvidence())
    assert untouched[0] is results[0]
    assert noted_by_build([flagged], ev)[0] is flagged  # flagging twice adds nothing


def test_the_demo_build_contains_both_heads_yet_misses_a_hunk(demo_build: DemoBuild) -> None:
    """The demo's story told by metadata: the build commit has both PR heads, yet the fork's
    conflict resolution dropped #40727's runner hunk, and the header flags it."""
    report = audit_stack(GitClone(demo_build.repo.path), [40898],
                         TargetSpec("site-packages", str(demo_build.site_packages)))
    build = report.build
    assert build is not None
    fork = demo_build.repo.fork_build[:9]
    assert build.header == (
        f"kvserve 0.3.0+g{fork}, built from {fork} (from the version's local part), "
        "which contains #40727 and #40898's heads"
    )
    [flag] = build.disagreements
    assert (flag.pr, flag.status, flag.files) == (40727, PRStatus.PARTIAL, ("kvserve/runner.py",))
    assert flag.cause.startswith("a later commit of the build rewrote or reverted these hunks")


EVIL = "\x1b[2J[bold red]pwn[/] | <script>"


@dataclass(frozen=True)
class _Evil(AuditReport):
    build: BuildReport | None = None


def evil_report() -> _Evil:
    prs, results = _report(PRStatus.MISSING, HunkStatus.MISSING)
    ev = BuildEvidence(distribution=EVIL, version=parse_version("1.0+g1234567"),
                       record=RecordIntegrity(1, edited=(f"x/{EVIL}.py",)), candidates=(EVIL,), chosen_by="--dist x")
    build = join_build(ev, "x", prs, results, lambda build, head: True)
    return _Evil(TargetInfo("site-packages", "/s", EVIL, "1.0+g1234567", None), tuple(prs), tuple(results), build)


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_every_format_shows_the_build_escaped(fmt: OutputFormat) -> None:
    console = Console(record=True, width=200, force_terminal=True)
    rendered = render_audit(evil_report(), fmt)
    console.print(rendered)
    text = console.export_text()
    assert "\x1b[2J" not in text
    if fmt is OutputFormat.JSON:
        assert isinstance(rendered, str)
        got = json.loads(rendered)["target"]["build"]
        assert got["commit"] == "1234567" and got["contains"] == {"5": "head"}
        assert got["disagreements"][0]["pr"] == 5 and got["candidates"] == [EVIL]
    else:
        assert "Build: " in text and "built from 1234567" in text
        assert "⚠ the build commit contains #5, but its hunks are missing from the files" in text
    if fmt is OutputFormat.TABLE:
        assert "[bold red]pwn[/]" in text
    if fmt is OutputFormat.MARKDOWN:
        assert "<script>" not in text and "\\|" in text


def test_a_report_without_build_renders_as_before() -> None:
    prs, results = _report(PRStatus.MISSING, HunkStatus.MISSING)
    plain = AuditReport(TargetInfo("wheel", "/w.whl", "x", "1.0+g1234567", "1234567"), tuple(prs), tuple(results))
    data = json.loads(str(render_audit(plain, OutputFormat.JSON)))
    assert "build" not in data["target"] and data["target"]["vcs_commit"] == "1234567"
    assert "built from `1234567`" in str(render_audit(plain, OutputFormat.MARKDOWN))
