"""The audit as GitHub-flavoured Markdown, for pasting into a PR comment (details collapsed)."""

from __future__ import annotations

import html

from prstack.match.report import AuditReport
from prstack.models import HunkResult, HunkStatus
from prstack.render.graph import audit_mermaid
from prstack.render.panels import status_label, where
from prstack.render.summary import Summary
from prstack.render.table import build_notes, image_note, pr_state_note
from prstack.render.text import clean
from prstack.render.titles import FALLBACK_FOOTNOTE, FALLBACK_MARK, table_title


def _cell(value: str | None) -> str:
    return html.escape(clean(value)).replace("|", "\\|").replace("\n", " ")


def _target_name(report: AuditReport) -> str:
    """The target by kind, distribution and version: a local absolute path does not belong in a PR comment."""
    t = report.target
    name = f"`{_cell(t.kind)}`"
    if t.distribution:
        name += f" {_cell(t.distribution)} {_cell(t.version or '')}".rstrip()
    return name


def _target_lines(report: AuditReport) -> list[str]:
    t = report.target
    if (image := image_note(t)) is not None:
        return [*_build_lines(report), "", _prose(image)]
    return _build_lines(report)


def _build_lines(report: AuditReport) -> list[str]:
    t = report.target
    build = report.build
    if build is None:
        return [f"Target: {_target_name(report)}"
                + (f", built from `{t.vcs_commit[:12]}`" if t.vcs_commit else "")]
    lines = [f"Target: {_target_name(report)}", "", f"Build: {_prose(build.header)}"]
    notes = build_notes(build)
    if notes:
        lines.append("")
        lines += [f"- {'**' + _prose(text) + '**' if 'red' in style else _prose(text)}" for text, style in notes]
    return lines


def _prose(value: str) -> str:
    """A sentence with untrusted parts: escaped like a cell, but apostrophes left readable."""
    return html.escape(clean(value), quote=False).replace("|", "\\|").replace("\n", " ")


LIMIT = 65_536
"""GitHub refuses a comment longer than this many characters."""


def summary_lines(summary: Summary) -> list[str]:
    """The conclusion in bold, then the next steps as a shell block (commands with their `# why`,
    local absolute paths named by their option's metavar: a PR comment is read on other machines)."""
    lines = [f"**{_prose(summary.sentence())}**" + (" Next:" if summary.steps else ""), ""]
    if summary.steps:
        commands = (clean(f"{s.shareable}  # {s.why}").replace("````", "` ` ` `") for s in summary.steps)
        lines += ["````sh", *commands, "````", ""]
    return lines


def audit_markdown(report: AuditReport, *, verbose: bool = False, limit: int = LIMIT,
                   summary: Summary | None = None) -> str:
    """The stack drawn (a Mermaid graph, each PR coloured by its status), the conclusion and next
    steps, then the table, then the hunks to look at that fit within `limit` characters."""
    t = report.target
    head = f"{t.distribution or ''} {t.version or ''}".strip() or t.kind
    lines = [
        f"### prstack audit: {_cell(head)}",
        "",
        *(["```mermaid", *audit_mermaid(report.prs).splitlines(), "```", ""] if report.prs else []),
        *(summary_lines(summary) if summary is not None else []),
        *_target_lines(report),
        "",
        "| PR | title | head | on | status | applied | missing | other | not shipped |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in report.prs:
        c = p.counts
        other = c["partial"] + c["diverged"] + c["conflict"] + c["file-missing"]
        title, from_commit = table_title(p.pr)
        mark = "\\" + FALLBACK_MARK if from_commit else ""
        lines.append(
            f"| #{p.pr.number} | {_cell(title)}{mark} | `{p.pr.head_sha[:10]}` | "
            f"{', '.join(f'#{n}' for n in p.pr.depends_on) or '—'} | **{p.status.value}**{pr_state_note(p.pr)} | "
            f"{c['applied'] + c['relocated']} | {c['missing']} | {other} | {c['not-shipped'] + c['unverifiable']} |"
        )
    if any(table_title(p.pr)[1] for p in report.prs):
        lines += ["", "\\" + FALLBACK_FOOTNOTE]
    shown = [r for r in report.results if verbose or (r.status.shipped and r.status is not HunkStatus.APPLIED)]
    if not shown:
        return "\n".join(lines) + "\n"
    head_text = "\n".join([*lines, "", f"<details><summary>{len(shown)} hunk(s) to look at</summary>", ""])
    tail = "</details>\n"
    reserve = 200  # the "N more not shown" line
    sections: list[str] = []
    used = len(head_text) + 1 + len(tail) + reserve
    for r in shown:
        section = "\n".join(_hunk_section(r)) + "\n"
        if used + len(section) > limit:
            break
        sections.append(section)
        used += len(section)
    rest = len(shown) - len(sections)
    more = f"{rest} more not shown (GitHub's comment limit): run with --format json for all.\n\n" if rest else ""
    return head_text + "\n" + "".join(sections) + more + tail


def _hunk_section(r: HunkResult) -> list[str]:
    return [
        f"**{status_label(r)}** — PR #{r.hunk.pr}, `{_cell(where(r))}`"
        + (f", commit `{r.hunk.commit[:12]}`" if r.hunk.commit else ""),
        "",
        "````diff",
        *(clean(line).replace("````", "` ` ` `") for line in r.hunk.diff_text().splitlines()),
        "````",
        "",
    ]
