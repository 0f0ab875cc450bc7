"""Every hunk of a stack with file, ranges, commits and PR: a rich table or JSON."""

from __future__ import annotations

from typing import Any, assert_never

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from prstack.models import Hunk, PRState, PullRequest
from prstack.render.formats import HunksFormat
from prstack.render.json_rows import dumps_rows_last
from prstack.render.text import safe

SCHEMA = "prstack.hunks/1"


def render_hunks(
    prs: tuple[PullRequest, ...], hunks: tuple[Hunk, ...], fmt: HunksFormat
) -> RenderableType:
    """The hunks in the asked format (a rich renderable for table, a string for json)."""
    if fmt is HunksFormat.TABLE:
        return hunks_table(prs, hunks)
    if fmt is HunksFormat.JSON:
        return dumps_rows_last(hunks_dict(prs, hunks))
    assert_never(fmt)


def _range(start: int, count: int) -> str:
    return f"{start},{count}" if count != 1 else str(start)


def hunks_table(prs: tuple[PullRequest, ...], hunks: tuple[Hunk, ...]) -> RenderableType:
    parts: list[RenderableType] = []
    for pr in prs:
        mine = [h for h in hunks if h.pr == pr.number]
        title = Text(f"PR #{pr.number} ", style="bold")
        title.append(f"{pr.change_base[:10]}..{pr.head_sha[:10]}", style="cyan")
        if pr.own_base is not None:
            title.append(f"  ({pr.base_sha[:10]} merged with the default branch)", style="dim")
        if pr.merged:
            title.append("  merged", style="blue")
        elif pr.state is PRState.STALE:
            title.append("  stale parent copy", style="yellow")
        if pr.depends_on:
            title.append("  on " + ", ".join(f"#{n}" for n in pr.depends_on), style="dim")
        title.append(f"  {len(mine)} hunk{'s' if len(mine) != 1 else ''}", style="dim")
        table = Table(title=title, title_justify="left")
        for col in ("file", "change", "old", "new", "+", "-", "commits"):
            table.add_column(col)
        for h in mine:
            path = h.path if not h.old_path or h.old_path == h.path else f"{h.old_path} → {h.path}"
            table.add_row(
                safe(path),
                h.change.value,
                _range(h.old_start, h.old_lines),
                _range(h.new_start, h.new_lines),
                Text(str(len(h.added)), style="green"),
                Text(str(len(h.removed)), style="red"),
                " ".join(c[:10] for c in h.commits) or "—",
            )
        parts.append(table)
    return Group(*parts)


def hunks_dict(prs: tuple[PullRequest, ...], hunks: tuple[Hunk, ...]) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "prs": [
            {
                "number": p.number,
                "title": p.title,
                "head_sha": p.head_sha,
                "base_sha": p.base_sha,
                "change_base": p.change_base,
                "depends_on": list(p.depends_on),
                "merged": p.merged,
                "commits": [c.sha for c in p.commits],
            }
            for p in prs
        ],
        "hunks": [
            {
                "pr": h.pr,
                "path": h.path,
                "old_path": h.old_path,
                "change": h.change.value,
                "old_start": h.old_start,
                "old_lines": h.old_lines,
                "new_start": h.new_start,
                "new_lines": h.new_lines,
                "added": len(h.added),
                "removed": len(h.removed),
                "commit": h.commit,
                "commits": list(h.commits),
            }
            for h in hunks
        ],
    }
