"""The hunks to look at: a panel each (heading, diff cut rather than wrapped, evidence), or a line each."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from prstack.models import HunkResult, HunkStatus
from prstack.render.fit import shorten_middle
from prstack.render.text import clean, safe

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
DIFF_STYLE = {"+": "green", "-": "red", "@": "cyan"}
MISSING_LISTED = 10
"""Lines named under "not in the target:" in a short panel."""
PANEL_FRAME = 6
"""Cells of a panel's top border around its heading: "╭─ " before it, " ─╮" after."""


def where(r: HunkResult) -> str:
    """Where the hunk was expected or found, as path:line."""
    h = r.hunk
    if r.found_path and r.found_line:
        return f"{r.found_path}:{r.found_line}"
    path = r.installed_path or h.path
    return f"{path}:{h.new_start}" if h.new_start else path


def status_label(r: HunkResult) -> str:
    """A hunk's status as the reports name it: "applied (rewritten later by #N)" for a hunk present
    as a later PR of the stack rewrote it; "applied (since rewritten by 5e1f0c2 (#2471))" for a
    merged PR's hunk that an upstream commit rewrote after it landed."""
    w = r.superseded_by
    if w is None or not r.status.present:
        return r.status.value
    if w.upstream:
        by = (w.commit or "")[:10] + (f" (#{w.pr})" if w.pr is not None else "")
        return f"{r.status.value} (since rewritten by {by})"
    return f"{r.status.value} (rewritten later by #{w.pr})"


def heading(r: HunkResult, width: int) -> Text:
    """"missing PR #1 src/pkg/a.py → pkg/a.py:15" within `width` cells: the paths shortened in
    their middle (sharing the room), never losing their file names."""
    label = status_label(r)
    fixed = f"{label} PR #{r.hunk.pr}  → "
    paths = [clean(r.hunk.path), clean(where(r))]
    room = width - cell_len(fixed)
    repo_path, found = paths
    if cell_len(repo_path) + cell_len(found) > room:
        half = room // 2
        if cell_len(repo_path) <= half:
            found = shorten_middle(found, room - cell_len(repo_path))
        elif cell_len(found) <= half:
            repo_path = shorten_middle(repo_path, room - cell_len(found))
        else:
            repo_path = shorten_middle(repo_path, half)
            found = shorten_middle(found, room - cell_len(repo_path))
    paths = [repo_path, found]
    return Text.assemble((label, STATUS_STYLE[r.status]), f" PR #{r.hunk.pr} {paths[0]} → {paths[1]}")


class HunkPanel:
    """One hunk as a panel sized to the terminal: its diff (past `max_lines` lines, counted, not
    shown; each line cut with "…" where it is too long, never wrapped), then its evidence."""

    def __init__(self, result: HunkResult, max_lines: int | None = None) -> None:
        self.result = result
        self.max_lines = max_lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        r, max_lines = self.result, self.max_lines
        lines = r.hunk.diff_text().splitlines()
        diff = Text("\n", no_wrap=True, overflow="ellipsis").join(
            safe(line, DIFF_STYLE.get(line[:1], "")) for line in lines[:max_lines])
        diff.no_wrap, diff.overflow = True, "ellipsis"
        evidence: list[Text] = []
        if max_lines is not None and len(lines) > max_lines:
            evidence.append(Text(f"… {len(lines) - max_lines} more lines (--verbose shows them)", style="dim"))
        ev = r.evidence
        if ev.note:
            evidence.append(safe(ev.note, "italic"))
        if ev.missing_lines:
            listed = ev.missing_lines if max_lines is None else ev.missing_lines[:MISSING_LISTED]
            rest = len(ev.missing_lines) - len(listed)
            evidence.append(Text("not in the target: ", style="bold")
                            + safe(" | ".join(listed) + (f" and {rest} more" if rest else "")))
        if (w := r.superseded_by) is not None and w.upstream and ev.found_text:
            evidence.append(Text(f"as {(w.commit or '')[:10]} rewrote it since:", style="bold"))
            evidence += [safe(line, DIFF_STYLE.get(line[:1], "")) for line in ev.found_text[:max_lines]]
        commit = f"commit {r.hunk.commit[:12]}" if r.hunk.commit else "commit unknown"
        yield Panel(Group(diff, *evidence), title=heading(r, options.max_width - PANEL_FRAME), title_align="left",
                    subtitle=commit, subtitle_align="right")


def hunk_lines(shown: list[HunkResult]) -> Table:
    """One line per hunk: file, lines, status, where it was expected or found (paths fold, the rest stays whole)."""
    table = Table(title=f"{len(shown)} hunks to look at (--verbose shows each diff)", title_justify="left")
    table.add_column("PR", no_wrap=True)
    table.add_column("file", overflow="fold")
    table.add_column("lines", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("where", overflow="fold")
    for r in shown:
        h = r.hunk
        table.add_row(f"#{h.pr}", safe(h.path), f"{h.new_start},{h.new_lines}",
                      Text(status_label(r), style=STATUS_STYLE[r.status]), safe(where(r)))
    return table
