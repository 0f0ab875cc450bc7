"""The audit as GitHub-flavoured Markdown, for pasting into a PR comment (details collapsed)."""

from __future__ import annotations

import html

from prstack.models import AuditReport, HunkStatus
from prstack.render.table import build_notes, pr_state_note, where
from prstack.render.text import clean


def _cell(value: str | None) -> str:
    return html.escape(clean(value)).replace("|", "\\|").replace("\n", " ")


def _target_lines(report: AuditReport) -> list[str]:
    t = report.target
    build = report.build
    if build is None:
        return [f"Target: `{_cell(t.kind)}` {_cell(t.path)}"
                + (f", built from `{t.vcs_commit[:12]}`" if t.vcs_commit else "")]
    lines = [f"Target: `{_cell(t.kind)}` {_cell(t.path)}", "", f"Build: {_prose(build.header)}"]
    notes = build_notes(build)
    if notes:
        lines.append("")
        lines += [f"- {'**' + _prose(text) + '**' if 'red' in style else _prose(text)}" for text, style in notes]
    return lines


def _prose(value: str) -> str:
    """A sentence with untrusted parts: escaped like a cell, but apostrophes left readable."""
    return html.escape(clean(value), quote=False).replace("|", "\\|").replace("\n", " ")


def audit_markdown(report: AuditReport, *, verbose: bool = False) -> str:
    t = report.target
    head = f"{t.distribution or ''} {t.version or ''}".strip() or t.kind
    lines = [
        f"### prstack audit: {_cell(head)}",
        "",
        *_target_lines(report),
        "",
        "| PR | title | head | on | status | applied | missing | other | not shipped |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in report.prs:
        c = p.counts
        other = c["partial"] + c["diverged"] + c["conflict"] + c["file-missing"]
        lines.append(
            f"| #{p.pr.number} | {_cell(p.pr.title)} | `{p.pr.head_sha[:10]}` | "
            f"{', '.join(f'#{n}' for n in p.pr.depends_on) or '—'} | **{p.status.value}**{pr_state_note(p.pr)} | "
            f"{c['applied'] + c['relocated']} | {c['missing']} | {other} | {c['not-shipped'] + c['unverifiable']} |"
        )
    shown = [r for r in report.results if verbose or (r.status.shipped and r.status is not HunkStatus.APPLIED)]
    if shown:
        lines += ["", f"<details><summary>{len(shown)} hunk(s) to look at</summary>", ""]
        for r in shown:
            lines += [
                f"**{r.status.value}** — PR #{r.hunk.pr}, `{_cell(where(r))}`"
                + (f", commit `{r.hunk.commit[:12]}`" if r.hunk.commit else ""),
                "",
                "````diff",
                *(clean(line).replace("````", "` ` ` `") for line in r.hunk.diff_text().splitlines()),
                "````",
                "",
            ]
        lines.append("</details>")
    return "\n".join(lines) + "\n"
