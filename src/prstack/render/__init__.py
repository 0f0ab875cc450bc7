"""Renderers: each turns a report into a string or a rich renderable; only the CLI prints."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, assert_never

if TYPE_CHECKING:  # not imported at run time: `--help` and JSON/markdown output need no rich
    from rich.console import RenderableType

    from prstack.report import AuditReport


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    MARKDOWN = "markdown"


class GraphFormat(StrEnum):
    """`graph --format` (here, not in render.graph, so the CLI's help needs no graph library)."""

    TABLE = "table"
    JSON = "json"
    DOT = "dot"
    MERMAID = "mermaid"


class HunksFormat(StrEnum):
    """`hunks --format`."""

    TABLE = "table"
    JSON = "json"


def render_audit(report: AuditReport, fmt: OutputFormat, *, verbose: bool = False) -> RenderableType:
    """The audit report in the asked format (a string for json/markdown, a renderable for table)."""
    if fmt is OutputFormat.TABLE:
        from prstack.render import table

        return table.audit_table(report, verbose=verbose)
    if fmt is OutputFormat.JSON:  # imported alone: JSON needs no rich (~20 ms)
        from prstack.render import json_report

        return json_report.audit_json(report)
    if fmt is OutputFormat.MARKDOWN:
        from prstack.render import markdown

        return markdown.audit_markdown(report, verbose=verbose)
    assert_never(fmt)
