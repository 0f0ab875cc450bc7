"""Several targets' audits as one PR x target matrix: a table (a row per PR, a column per target),
markdown, and JSON prstack.matrix/1 (a prstack.audit/2 report per target, plus the matrix)."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from prstack.match.report import AuditReport
from prstack.models import HunkResult
from prstack.render.formats import AuditSchema
from prstack.render.text import clean

if TYPE_CHECKING:
    from rich.console import RenderableType

SCHEMA = "prstack.matrix/1"


def target_name(report: AuditReport) -> str:
    """A target as a column names it: kind, the last part of its path, the version found."""
    t = report.target
    name = t.path.rstrip("/").rpartition("/")[2] or t.path
    return clean(f"{t.kind} {name}" + (f" ({t.version})" if t.version else ""))


def not_present(report: AuditReport) -> list[HunkResult]:
    """The shipped hunks (or files not read) the target lacks."""
    return [r for r in report.results if (r.status.shipped or r.unread) and not r.status.present]


def _numbers(reports: Sequence[AuditReport]) -> list[int]:
    seen: dict[int, None] = {}
    for report in reports:
        for p in report.prs:
            seen.setdefault(p.pr.number, None)
    return list(seen)


def _status(report: AuditReport, number: int) -> str:
    return next((p.status.value for p in report.prs if p.pr.number == number), "—")


def matrix_dict(reports: Sequence[AuditReport], schema: AuditSchema = AuditSchema.V2) -> dict[str, Any]:
    from prstack.render.json_report import audit_dict

    return {**_matrix_head(reports), "reports": [audit_dict(r, schema) for r in reports]}


def _matrix_head(reports: Sequence[AuditReport]) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "all_present": all(r.all_present for r in reports),
        "targets": [{"kind": r.target.kind.value, "path": r.target.path, "name": target_name(r),
                     "all_present": r.all_present} for r in reports],
        "matrix": [{"pr": n, "statuses": [_status(r, n) for r in reports]} for n in _numbers(reports)],
    }


def matrix_json(reports: Sequence[AuditReport], schema: AuditSchema = AuditSchema.V2) -> str:
    """`matrix_dict` as JSON, each target's report written as its audit's own document is (a hunk a
    line, see `prstack.render.json_rows`), indented into the list. The whole document indented by
    Python's pure-Python encoder took ~0.4 s for 10 targets of 1,924 hunks each; the hunk rows of
    targets judged the same (one results tuple: see `prstack.audit.same_content`) are written once."""
    from prstack.render.json_report import audit_dict
    from prstack.render.json_rows import dumps_rows_last, rows_text

    head = json.dumps(_matrix_head(reports), indent=2).removesuffix("\n}")
    if not reports:
        return f'{head},\n  "reports": []\n}}\n'
    written: dict[int, str] = {}  # id of a report's results (each held by `reports`) -> its rows
    docs = []
    for report in reports:
        data = audit_dict(report, schema)
        rows = written.get(id(report.results))
        if rows is None:
            rows = written[id(report.results)] = rows_text(data[next(reversed(data))])  # (the hunks, last)
        docs.append(_indented(dumps_rows_last(data, rows), "    "))
    return f'{head},\n  "reports": [\n' + ",\n".join(docs) + '\n  ]\n}\n'


def _indented(document: str, prefix: str) -> str:
    """A JSON document's lines each behind `prefix` (a JSON string holds no raw newline)."""
    return "\n".join(prefix + line for line in document.rstrip("\n").split("\n"))


def matrix_table(reports: Sequence[AuditReport]) -> RenderableType:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from prstack.render.panels import STATUS_STYLE
    from prstack.render.table import PR_STYLE

    table = Table(title=f"PRs x {len(reports)} targets (bottom of the stack first)", title_justify="left")
    table.add_column("PR", no_wrap=True)
    for i, report in enumerate(reports, 1):
        table.add_column(Text(f"{i}. {report.target.kind}"), no_wrap=True)
    styles = {s.value: style for s, style in PR_STYLE.items()}
    for n in _numbers(reports):
        cells = [Text(s := _status(r, n), style=styles.get(s, "")) for r in reports]
        table.add_row(f"#{n}", *cells)
    parts: list[RenderableType] = [table]
    for i, report in enumerate(reports, 1):
        parts.append(Text(f"{i}. ", style="bold") + Text(target_line_text(report)))
        lacking = not_present(report)
        for r in lacking:
            line = Text("   ")
            line.append(r.status.value, style=STATUS_STYLE[r.status])
            line.append_text(Text(clean(f" PR #{r.hunk.pr} {r.hunk.path} → {_where(r)}")))
            parts.append(line)
    verdict = ("Every shipped hunk is in every target." if all(r.all_present for r in reports)
               else f"Not fully in {sum(not r.all_present for r in reports)} of the {len(reports)} targets.")
    parts.append(Text(verdict, style="bold"))
    return Group(*parts)


def target_line_text(report: AuditReport) -> str:
    t = report.target
    what = f"{t.kind} {t.path}" + (f" — {t.distribution} {t.version or ''}".rstrip() if t.distribution else "")
    if t.image is not None:
        what += f" — {t.image.digest[:19]}… {t.image.platform or ''} {t.image.environment}".rstrip()
    return clean(what)


def _where(r: HunkResult) -> str:
    from prstack.render.panels import where

    return where(r)


def matrix_markdown(reports: Sequence[AuditReport]) -> str:
    def cell(value: str) -> str:
        return html.escape(clean(value)).replace("|", "\\|")

    ok = all(r.all_present for r in reports)
    lines = [f"### prstack audit: {len(reports)} targets", "",
             "**Every shipped hunk is in every target.**" if ok
             else f"**Not fully in {sum(not r.all_present for r in reports)} of the {len(reports)} targets.**", "",
             "| PR | " + " | ".join(f"{i}. {cell(target_name(r))}" for i, r in enumerate(reports, 1)) + " |",
             "|---|" + "---|" * len(reports)]
    for n in _numbers(reports):
        lines.append(f"| #{n} | " + " | ".join(f"**{_status(r, n)}**" for r in reports) + " |")
    for i, report in enumerate(reports, 1):
        lacking = not_present(report)
        if lacking:
            lines += ["", f"<details><summary>{i}. {cell(target_name(report))}: {len(lacking)} hunk(s) "
                      "not present</summary>", ""]
            lines += [f"- **{r.status.value}** — PR #{r.hunk.pr}, `{cell(_where(r))}`" for r in lacking]
            lines += ["", "</details>"]
    return "\n".join(lines) + "\n"
