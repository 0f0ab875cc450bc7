"""Every output format renders; untrusted text from GitHub never injects markup or escape codes."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from prstack.match.report import AuditReport
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
from prstack.render import AUDIT_RENDERERS, AuditFormat, OutputFormat, render_audit, render_matrix

EVIL_TITLE = "[bold red]pwned[/] \x1b[2J\x1b]8;;http://evil\x07link\x1b]8;;\x07 | <script>"
EVIL_PATH = "src/pkg/[link=http://evil]x[/link].py"


def evil_report() -> AuditReport:
    hunk = Hunk(1, EVIL_PATH, EVIL_PATH, FileChange.MODIFIED, 3, 1, 3, 1,
                (HunkLine("-", "x = 1"), HunkLine("+", "x = '\x1b[31m' [red]2[/]")), ("a" * 40,))
    pr = PullRequest(1, "b" * 40, "c" * 40, title=EVIL_TITLE)
    results = (HunkResult(hunk, HunkStatus.MISSING, installed_path="pkg/x.py"),)
    counts = {s.value: 0 for s in HunkStatus} | {"missing": 1}
    target = TargetInfo("wheel", "/tmp/x.whl", "pkg", "1.0")
    return AuditReport(target, (PRReport(pr, PRStatus.MISSING, counts),), results)


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_every_format_renders_and_is_escaped(fmt: OutputFormat) -> None:
    console = Console(record=True, width=100, force_terminal=True)
    console.print(render_audit(evil_report(), fmt))
    text = console.export_text()
    assert "\x1b[2J" not in text and "\x1b]8" not in text and "\x07" not in text
    if fmt is OutputFormat.TABLE:
        assert "[bold red]pwned[/]" in text  # shown literally, not interpreted
        assert "[link=http://evil]" in text
    if fmt is OutputFormat.JSON:
        rendered = render_audit(evil_report(), fmt)
        assert isinstance(rendered, str)
        assert json.loads(rendered)["prs"][0]["title"] == EVIL_TITLE  # JSON keeps the data exact, escaped
    if fmt is OutputFormat.MARKDOWN:
        assert "<script>" not in text and "&lt;script&gt;" in text
        assert "\\|" in text
        assert "\n-x = 1\n" in text  # the diff keeps one line per line


def test_table_raw_output_has_no_terminal_escapes_from_data() -> None:
    console = Console(record=True, width=100, force_terminal=True, color_system=None)
    console.print(render_audit(evil_report(), OutputFormat.TABLE))
    raw = console.export_text(styles=False)
    assert "\x1b" not in raw


@pytest.mark.parametrize("fmt", list(AuditFormat))
def test_every_audit_format_has_a_renderer_for_one_target_and_for_several(fmt: AuditFormat) -> None:
    report = evil_report()
    assert fmt in AUDIT_RENDERERS
    one, many = render_audit(report, fmt), render_matrix([report, report], fmt)
    assert one is not None and many is not None
    assert (isinstance(one, str) and isinstance(many, str)) == (fmt is not AuditFormat.TABLE)
