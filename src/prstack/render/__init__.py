"""Renderers: each turns a report into a string or a rich renderable; only the CLI prints."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prstack.render.formats import AuditFormat, AuditSchema, GraphFormat, HunksFormat, OutputFormat

if TYPE_CHECKING:  # not imported at run time: `--help` and JSON/markdown output need no rich
    from rich.console import RenderableType

    from prstack.match.report import AuditReport
    from prstack.render.summary import Summary

__all__ = ["AUDIT_RENDERERS", "AuditFormat", "AuditSchema", "GraphFormat", "HunksFormat", "OutputFormat",
           "render_audit", "render_matrix"]


def render_audit(report: AuditReport, fmt: AuditFormat | OutputFormat, *, verbose: bool = False,
                 summary: Summary | None = None, schema: AuditSchema = AuditSchema.V2) -> RenderableType:
    """The audit report in the asked format (a string for json/markdown/junit, a renderable for table);
    the table ends with `summary`, markdown starts with it; JSON is written in `schema`."""
    return AUDIT_RENDERERS[AuditFormat(fmt)].one(report, AuditView(verbose, summary, schema))


def render_matrix(reports: Sequence[AuditReport], fmt: AuditFormat, schema: AuditSchema = AuditSchema.V2
                  ) -> RenderableType:
    """The reports of one stack against several targets, PR by target, in the asked format."""
    return AUDIT_RENDERERS[fmt].many(reports, AuditView(schema=schema))


@dataclass(frozen=True)
class AuditView:
    """How an audit is shown beside its format: every hunk or not, the summary, the JSON schema."""

    verbose: bool = False
    summary: Summary | None = None
    schema: AuditSchema = AuditSchema.V2


@dataclass(frozen=True)
class AuditRenderer:
    """An output format of the audit: one report, and one stack against several targets. Each imports
    its module when called (JSON needs no rich)."""

    one: Callable[[AuditReport, AuditView], RenderableType]
    many: Callable[[Sequence[AuditReport], AuditView], RenderableType]


def _table(report: AuditReport, view: AuditView) -> RenderableType:
    from prstack.render.table import audit_table

    return audit_table(report, verbose=view.verbose, summary=view.summary)


def _json(report: AuditReport, view: AuditView) -> RenderableType:
    from prstack.render.json_report import audit_json

    return audit_json(report, view.schema)


def _markdown(report: AuditReport, view: AuditView) -> RenderableType:
    from prstack.render.markdown import audit_markdown

    return audit_markdown(report, verbose=view.verbose, summary=view.summary)


def _junit(reports: Sequence[AuditReport], view: AuditView) -> RenderableType:
    from prstack.render.junit import audit_junit

    return audit_junit(reports)


def _matrix_table(reports: Sequence[AuditReport], view: AuditView) -> RenderableType:
    from prstack.render.matrix import matrix_table

    return matrix_table(reports)


def _matrix_json(reports: Sequence[AuditReport], view: AuditView) -> RenderableType:
    from prstack.render.matrix import matrix_json

    return matrix_json(reports, view.schema)


def _matrix_markdown(reports: Sequence[AuditReport], view: AuditView) -> RenderableType:
    from prstack.render.matrix import matrix_markdown

    return matrix_markdown(reports)


AUDIT_RENDERERS: dict[AuditFormat, AuditRenderer] = {
    AuditFormat.TABLE: AuditRenderer(_table, _matrix_table),
    AuditFormat.JSON: AuditRenderer(_json, _matrix_json),
    AuditFormat.MARKDOWN: AuditRenderer(_markdown, _matrix_markdown),
    AuditFormat.JUNIT: AuditRenderer(lambda report, view: _junit([report], view), _junit),
}
"""Every audit format's renderers: a new format is an `AuditFormat` member, an entry here and its module."""
