"""The audit as rich renderables: one row per PR in stack order, then each hunk that is not applied."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from prstack.build import BuildReport
from prstack.models import HunkResult, HunkStatus, PRState, PRStatus, PullRequest
from prstack.render.text import safe
from prstack.render.titles import shown_title
from prstack.report import AuditReport

STATUS_STYLE = {
    HunkStatus.APPLIED: "green",
    HunkStatus.RELOCATED: "green",
    HunkStatus.MISSING: "bold red",
    HunkStatus.PARTIAL: "yellow",
    HunkStatus.DIVERGED: "magenta",
    HunkStatus.CONFLICT: "bold red",
    HunkStatus.FILE_MISSING: "bold red",
    HunkStatus.NOT_SHIPPED: "dim",
    HunkStatus.UNVERIFIABLE: "dim",
}
PANEL_LINES = 60
"""Diff lines shown in a panel (a whole-file rewrite is thousands); --verbose shows all."""
MISSING_LISTED = 10
"""Lines named under "not in the target:" in a short panel."""
PANELS_UP_TO = 30
"""Past this many hunks to show, a line per hunk instead of a panel each (--verbose keeps the panels)."""
OTHER_STATUSES = (HunkStatus.PARTIAL, HunkStatus.DIVERGED, HunkStatus.CONFLICT, HunkStatus.FILE_MISSING)
DIFF_STYLE = {"+": "green", "-": "red", "@": "cyan"}
PR_STYLE = {PRStatus.APPLIED: "green", PRStatus.MISSING: "bold red",
            PRStatus.PARTIAL: "yellow", PRStatus.NOT_SHIPPED: "dim"}


def pr_state_note(pr: PullRequest) -> str:
    """' (merged)' or ' (stale parent)' after a PR's status, where the graph says so."""
    held = f", held as an older copy: its head is {pr.pr_head[:10]}" if pr.pr_head else ""
    if pr.merged:
        return f" (merged{held})"
    if pr.state is PRState.STALE:
        return f" (built on a stale parent{held})"
    return f" ({held[2:]})" if held else ""


def target_line(report: AuditReport) -> Text:
    t = report.target
    line = Text("Target: ", style="bold")
    line.append_text(safe(f"{t.kind} {t.path}"))
    build = report.build
    if build is not None:
        line.append("\nBuild: ", style="bold")
        line.append_text(safe(build.header))
        for text, style in build_notes(build):
            line.append("\n")
            line.append_text(safe(text, style))
        return line
    if t.distribution:
        line.append(" — ")
        line.append_text(safe(f"{t.distribution} {t.version or ''}".strip(), "bold"))
    if t.vcs_commit:
        line.append_text(safe(f", built from {t.vcs_commit[:12]}"))
    return line


def build_notes(build: BuildReport) -> list[tuple[str, str]]:
    """Lines under the header: red flags first, then RECORD findings and how the dist was chosen."""
    ev = build.evidence
    notes = [(f"⚠ {d.sentence()}", "bold red") for d in build.disagreements]
    record = ev.record
    if record is not None:
        for label, paths in (("edited after install (RECORD hash differs)", record.edited),
                             ("added after install (not in RECORD)", record.unrecorded),
                             ("deleted after install (in RECORD, gone)", record.absent)):
            if paths:
                shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
                notes.append((f"{len(paths)} file(s) {label}: {shown}", "yellow"))
    if ev.candidates:
        why = f" (chosen: {ev.chosen_by})" if ev.chosen_by else ""
        notes.append((f"also shipping these files: {', '.join(ev.candidates)}{why}; --dist picks another", "dim"))
    return notes


def where(r: HunkResult) -> str:
    """Where the hunk was expected or found, as path:line."""
    h = r.hunk
    if r.found_path and r.found_line:
        return f"{r.found_path}:{r.found_line}"
    path = r.installed_path or h.path
    return f"{path}:{h.new_start}" if h.new_start else path


def status_label(r: HunkResult) -> str:
    """A hunk's status as the reports name it: "applied (rewritten later by #N)" for a hunk present
    as a later PR of the stack rewrote it."""
    w = r.superseded_by
    return f"{r.status.value} (rewritten later by #{w.pr})" if w is not None and r.status.present else r.status.value


def hunk_panel(r: HunkResult, max_lines: int | None = None) -> Panel:
    """The hunk's diff and evidence; past `max_lines` diff lines, the rest is counted, not shown."""
    h = r.hunk
    body = Text()
    lines = h.diff_text().splitlines()
    for line in lines[:max_lines]:
        body.append_text(safe(line, DIFF_STYLE.get(line[:1], "")))
        body.append("\n")
    if max_lines is not None and len(lines) > max_lines:
        body.append(f"… {len(lines) - max_lines} more lines (--verbose shows them)\n", style="dim")
    ev = r.evidence
    if ev.note:
        body.append_text(safe(ev.note, "italic"))
        body.append("\n")
    if ev.missing_lines:
        body.append("not in the target: ", style="bold")
        listed = ev.missing_lines if max_lines is None else ev.missing_lines[:MISSING_LISTED]
        rest = len(ev.missing_lines) - len(listed)
        body.append_text(safe(" | ".join(listed) + (f" and {rest} more" if rest else "")))
        body.append("\n")
    title = Text.assemble((status_label(r), STATUS_STYLE[r.status]), " ")
    title.append_text(safe(f"PR #{h.pr} {h.path} → {where(r)}"))
    commit = f"commit {h.commit[:12]}" if h.commit else "commit unknown"
    return Panel(body, title=title, title_align="left", subtitle=commit, subtitle_align="right")


def audit_table(report: AuditReport, *, verbose: bool = False) -> RenderableType:
    table = Table(title="PRs in stack order (bottom first)", title_justify="left")
    titled = any(shown_title(p.pr) for p in report.prs)
    for col in ("PR", "title", "head", "on", "status", "applied", "missing", "other", "not shipped"):
        if col != "title" or titled:
            table.add_column(col)
    for p in report.prs:
        c = p.counts
        other = sum(c[s.value] for s in OTHER_STATUSES)
        state = p.status.value + pr_state_note(p.pr)
        table.add_row(
            f"#{p.pr.number}",
            *([safe(shown_title(p.pr))] if titled else []),
            p.pr.head_sha[:10],
            ", ".join(f"#{n}" for n in p.pr.depends_on) or "—",
            Text(state, style=PR_STYLE[p.status]),
            str(c["applied"] + c["relocated"]),
            str(c["missing"]),
            str(other),
            str(c["not-shipped"] + c["unverifiable"]),
        )
    shown = [r for r in report.results if verbose or (r.status.shipped and r.status is not HunkStatus.APPLIED)]
    parts: list[RenderableType] = [target_line(report), table]
    if verbose or len(shown) <= PANELS_UP_TO:
        parts += [hunk_panel(r, None if verbose else PANEL_LINES) for r in shown]
    elif shown:
        parts.append(hunk_lines(shown))
    return Group(*parts)



def hunk_lines(shown: list[HunkResult]) -> Table:
    """One line per hunk: file, lines, status, where it was expected or found."""
    table = Table(title=f"{len(shown)} hunks to look at (--verbose shows each diff)", title_justify="left")
    for col in ("PR", "file", "lines", "status", "where"):
        table.add_column(col)
    for r in shown:
        h = r.hunk
        table.add_row(f"#{h.pr}", safe(h.path), f"{h.new_start},{h.new_lines}",
                      Text(status_label(r), style=STATUS_STYLE[r.status]), safe(where(r)))
    return table
