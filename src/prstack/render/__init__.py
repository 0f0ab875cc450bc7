"""Renderers: each turns a report into a string or a rich renderable; only the CLI prints."""

from __future__ import annotations

from enum import StrEnum
from typing import assert_never

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
    from prstack.render import json_report, markdown, table

    if fmt is OutputFormat.TABLE:
        return table.audit_table(report, verbose=verbose)
    if fmt is OutputFormat.JSON:
        return json_report.audit_json(report)
    if fmt is OutputFormat.MARKDOWN:
        return markdown.audit_markdown(report, verbose=verbose)
    assert_never(fmt)
