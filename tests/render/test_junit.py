"""JUnit XML output: the shape CI test reporters read (Jenkins' junit-10.xsd, which GitLab and the
GitHub test-report actions follow), a failure per shipped hunk not present with its evidence, a
skip per hunk not shipped, untrusted text inert; `--output FILE` writes any format while the
table still goes to the terminal."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from prstack.cli import main
from prstack.demo.example import DemoBuild
from prstack.match.report import AuditReport
from prstack.models import (
    Commit,
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
from prstack.render import AuditFormat, render_audit
from prstack.render.junit import audit_junit

# Jenkins' junit-10.xsd, as element -> (required attributes, allowed attributes, allowed children)
SCHEMA: dict[str, tuple[set[str], set[str], set[str]]] = {
    "testsuites": (set(), {"name", "time", "tests", "failures", "errors", "skipped", "disabled"}, {"testsuite"}),
    "testsuite": ({"name", "tests"}, {"name", "tests", "failures", "errors", "skipped", "time", "timestamp",
                                      "hostname", "id", "package", "disabled", "file"},
                  {"properties", "testcase", "system-out", "system-err"}),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, {"name", "value"}, set()),
    "testcase": ({"name"}, {"name", "classname", "time", "assertions", "status", "file", "line"},
                 {"skipped", "error", "failure", "system-out", "system-err"}),
    "failure": (set(), {"message", "type"}, set()),
    "error": (set(), {"message", "type"}, set()),
    "skipped": (set(), {"message"}, set()),
}
NUMBER = re.compile(r"^\d+(\.\d+)?$")


def validate(text: str) -> ET.Element:
    """Parse `text` and check it against the JUnit schema CI tools accept; returns the root."""
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(text.encode())
    assert root.tag == "testsuites"
    for element in root.iter():
        required, allowed, children = SCHEMA[element.tag]
        assert required <= set(element.attrib), (element.tag, element.attrib)
        assert set(element.attrib) <= allowed, (element.tag, element.attrib)
        assert {c.tag for c in element} <= children, element.tag
        for key in ("tests", "failures", "errors", "skipped", "time"):
            if key in element.attrib:
                assert NUMBER.match(element.attrib[key]), (element.tag, key)
        if element.tag == "testcase":
            assert len(element.findall("skipped")) <= 1
            assert not (element.findall("skipped") and element.findall("failure"))
    for suite in [root, *root.findall("testsuite")]:
        cases = list(suite.iter("testcase"))
        assert int(suite.attrib["tests"]) == len(cases)
        assert int(suite.attrib["failures"]) == sum(len(c.findall("failure")) for c in cases)
        assert int(suite.attrib["skipped"]) == sum(len(c.findall("skipped")) for c in cases)
        assert int(suite.attrib["errors"]) == sum(len(c.findall("error")) for c in cases)
    return root


def _report(statuses: list[HunkStatus], title: str = "t", path: str = "src/pkg/a.py") -> AuditReport:
    pr = PullRequest(3, "b" * 40, "c" * 40, title=title)
    results = tuple(
        HunkResult(Hunk(3, path, path, FileChange.MODIFIED, 10 * i + 1, 1, 10 * i + 1, 1,
                        (HunkLine("-", f"x = {i}"), HunkLine("+", f"x = {i} + 1")), ("a" * 40,)),
                   s, installed_path=path.removeprefix("src/"))
        for i, s in enumerate(statuses))
    counts = {s.value: 0 for s in HunkStatus}
    for s in statuses:
        counts[s.value] += 1
    return AuditReport(TargetInfo("wheel", "/tmp/p.whl", "pkg", "1.0"), (PRReport(pr, PRStatus.PARTIAL, counts),),
                       results)


def test_each_status_is_a_pass_a_failure_or_a_skip() -> None:
    """Applied and relocated pass; missing, partial, diverged, conflict and file-missing fail
    with their status as type; not-shipped and unverifiable-by-design are skipped."""
    statuses = list(HunkStatus)
    root = validate(audit_junit([_report(statuses)]))
    cases = root.findall("testsuite/testcase")
    assert len(cases) == len(statuses)
    outcome = {}
    for status, case in zip(statuses, cases, strict=True):
        failure = case.find("failure")
        outcome[status] = ("failure:" + failure.attrib["type"] if failure is not None
                           else "skipped" if case.find("skipped") is not None else "pass")
    assert outcome == {
        HunkStatus.APPLIED: "pass", HunkStatus.RELOCATED: "pass",
        HunkStatus.MISSING: "failure:missing", HunkStatus.PARTIAL: "failure:partial",
        HunkStatus.DIVERGED: "failure:diverged", HunkStatus.CONFLICT: "failure:conflict",
        HunkStatus.FILE_MISSING: "failure:file-missing",
        HunkStatus.NOT_SHIPPED: "skipped", HunkStatus.UNVERIFIABLE: "skipped",
    }
    assert root.attrib["failures"] == "5" and root.attrib["skipped"] == "2" and root.attrib["tests"] == "9"


def test_a_file_not_read_is_a_failure_not_a_skip() -> None:
    report = _report([HunkStatus.UNVERIFIABLE])
    unread = (HunkResult(report.results[0].hunk, HunkStatus.UNVERIFIABLE, unread=True),)
    root = validate(audit_junit([AuditReport(report.target, report.prs, unread)]))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and failure.attrib["type"] == "unverifiable"


def test_untrusted_text_is_inert_and_the_document_stays_well_formed() -> None:
    """Controls (ESC, BEL, NUL), XML's own characters and a non-character in a title or a path
    never break the XML nor reach a CI log as escape codes."""
    evil = "]]></failure><x>\x1b[2J\x00\x07 & <script> \ufffe"
    text = audit_junit([_report([HunkStatus.MISSING], title=evil, path=f"src/{evil}.py")])
    root = validate(text)
    assert "\x1b" not in text and "\x00" not in text and "\x07" not in text and "\ufffe" not in text
    assert root.find("testsuite/properties/property[@name='title']").attrib["value"].startswith("]]></failure><x>")
    body = root.find("testsuite/testcase/failure").text or ""
    assert "\\x1b[2J" in body and "-x = 0\n+x = 0 + 1" in body


def test_render_audit_walks_every_format() -> None:
    for fmt in AuditFormat:
        rendered = render_audit(_report([HunkStatus.MISSING]), fmt)
        assert rendered is not None
    assert "<testsuites" in str(render_audit(_report([HunkStatus.MISSING]), AuditFormat.JUNIT))


def test_cli_junit_to_a_file_and_the_table_to_the_terminal(demo_build: DemoBuild, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The dropped hunk of the demo is the one failure, carrying its diff; the other PR's
    documentation hunk is skipped; the terminal still shows the table and its verdict."""
    out_file = tmp_path / "report.xml"
    code = main(["audit", "40898", "--git", str(demo_build.repo.path), "--site-packages",
                 str(demo_build.site_packages), "--format", "junit", "--output", str(out_file)])
    shown = capsys.readouterr().out
    assert code == 1
    assert "<testsuites" not in shown and "#40727" in shown and "missing" in shown
    root = validate(out_file.read_text())
    suites = root.findall("testsuite")
    assert [s.find("properties/property[@name='pr']").attrib["value"] for s in suites] == ["40727", "40898"]
    failures = root.findall(".//failure")
    assert len(failures) == 1 and failures[0].attrib["type"] == "missing"
    assert "kvserve/runner.py" in failures[0].attrib["message"]
    assert '+        return f"kv.{layer_id + 1}"' in (failures[0].text or "")
    assert root.findall(".//skipped")


@pytest.mark.parametrize("fmt", ["json", "markdown", "table"])
@pytest.mark.slow
def test_output_writes_any_format(demo_build: DemoBuild, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  fmt: str) -> None:
    out_file = tmp_path / f"report.{fmt}"
    code = main(["audit", "40898", "--git", str(demo_build.repo.path), "--wheel", str(demo_build.wheel),
                 "--format", fmt, "-o", str(out_file)])
    shown = capsys.readouterr().out
    assert code == 1
    assert "#40898" in shown and not shown.lstrip().startswith(("{", "###"))
    written = out_file.read_text()
    if fmt == "json":
        assert json.loads(written)["schema"] == "prstack.audit/2"
    elif fmt == "markdown":
        assert written.startswith("### prstack audit") and "<details>" in written
    else:
        assert "\x1b[" not in written and "#40727" in written


def test_output_to_an_unwritable_place_is_one_line(demo_build: DemoBuild, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", "40898", "--git", str(demo_build.repo.path), "--wheel", str(demo_build.wheel),
                 "--format", "junit", "--output", str(tmp_path / "no" / "such" / "dir.xml")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "cannot write" in err


def test_a_pr_without_a_github_title_has_its_first_commits_subject_as_title() -> None:
    """The table shows a clone's PR by its first commit's subject: so does the report's property."""
    report = _report([HunkStatus.APPLIED], title="")
    pr = report.prs[0].pr
    titled = PRReport(replace(pr, title=None, commits=(Commit("a" * 40, ("b" * 40,), "Fix the cache key"),)),
                      report.prs[0].status, report.prs[0].counts)
    root = validate(audit_junit([replace(report, prs=(titled,))]))
    assert root.find("testsuite/properties/property[@name='title']").attrib["value"] == "Fix the cache key"
