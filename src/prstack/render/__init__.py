"""Renderers: each turns a report into a string or a rich renderable; only the CLI prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

from prstack.render.formats import AuditFormat, AuditSchema, GraphFormat, HunksFormat, OutputFormat

if TYPE_CHECKING:  # not imported at run time: `--help` and JSON/markdown output need no rich
    from rich.console import RenderableType

    from prstack.match.report import AuditReport
    from prstack.render.summary import Summary

__all__ = ["AuditFormat", "AuditSchema", "GraphFormat", "HunksFormat", "OutputFormat", "render_audit"]


def render_audit(report: AuditReport, fmt: AuditFormat | OutputFormat, *, verbose: bool = False,
                 summary: Summary | None = None, schema: AuditSchema = AuditSchema.V2) -> RenderableType:
    """The audit report in the asked format (a string for json/markdown/junit, a renderable for table);
    the table ends with `summary`, markdown starts with it; JSON is written in `schema`."""
    fmt = AuditFormat(fmt)
    if fmt is AuditFormat.TABLE:
        from prstack.render import table

        return table.audit_table(report, verbose=verbose, summary=summary)
    if fmt is AuditFormat.JSON:  # imported alone: JSON needs no rich (~20 ms)
        from prstack.render import json_report

        return json_report.audit_json(report, schema)
    if fmt is AuditFormat.MARKDOWN:
        from prstack.render import markdown

        return markdown.audit_markdown(report, verbose=verbose, summary=summary)
    if fmt is AuditFormat.JUNIT:
        from prstack.render import junit

        return junit.audit_junit([report])
    assert_never(fmt)
