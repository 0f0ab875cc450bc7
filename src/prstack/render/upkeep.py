"""The upkeep report as a rich table, Markdown and JSON (prstack.upkeep/1).

JSON, schema "prstack.upkeep/1":
    {"schema", "settled": bool,
     "releases": [{"name", "commit", "wheel"}],            oldest first (a tag's commit, or a wheel's path)
     "candidate": {"name", "kind", "sha", "version"},
     "items": [{"pr": int|null, "patch": str|null, "title", "note", "state", "merged_by", "merge_commit",
                "first_release", "landing_note", "verdict",
                "hunks": [{"path", "old_start", "old_lines", "new_start", "new_lines", "status",
                           "found_path", "found_line", "landed_in", "first_seen", "reverted_in": [str],
                           "commit": str|null}]}]}
`state`: open|merged|closed|unknown; `verdict`: retire|partly-upstream|keep|rebase;
`first_release` the earliest release holding every shipped hunk at once (null: none); a hunk's
`status` is its status in the candidate (the audit's statuses), `landed_in` the release from
which on every release holds it (null: the newest does not), `commit` the upstream commit that
brought a hunk present in the candidate (the first commit, after the release before the one it
landed in, whose tree holds it; null: not present, or not found).
"""

from __future__ import annotations

import html
import json
from typing import Any, assert_never

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from prstack.render.formats import OutputFormat
from prstack.render.text import clean, safe
from prstack.upkeep.values import HunkUpkeep, Item, UpkeepReport, Verdict

SCHEMA = "prstack.upkeep/1"
VERDICT_STYLE = {
    Verdict.RETIRE: "green",
    Verdict.KEEP: "cyan",
    Verdict.PARTLY_UPSTREAM: "yellow",
    Verdict.REBASE: "bold red",
}
_ADVICE = {
    Verdict.RETIRE: "drop it: the candidate has every hunk",
    Verdict.PARTLY_UPSTREAM: "carry only the hunks not upstream",
    Verdict.KEEP: "keep it: it applies cleanly",
    Verdict.REBASE: "rework it: a region diverged or is in conflict",
}


def render_upkeep(report: UpkeepReport, fmt: OutputFormat) -> RenderableType:
    """The upkeep in the asked format (a string for json/markdown, a renderable for table)."""
    if fmt is OutputFormat.TABLE:
        return upkeep_table(report)
    if fmt is OutputFormat.JSON:
        return upkeep_json(report)
    if fmt is OutputFormat.MARKDOWN:
        return upkeep_markdown(report)
    assert_never(fmt)


def item_name(item: Item) -> str:
    """#N for a PR (and the patch file holding it), else the patch file."""
    if item.patch is not None:
        return f"{item.patch} (#{item.number})" if item.number is not None else item.patch
    return f"#{item.number}"


def state_text(item: Item) -> str:
    return f"{item.state.value} ({item.merged_by.value})" if item.merged_by else item.state.value


def hunk_where(h: HunkUpkeep) -> str:
    r = h.result
    return f"{r.hunk.path}:{r.hunk.old_start}"


def candidate_line(report: UpkeepReport) -> str:
    c = report.candidate
    what = f"{c.kind} {c.name}" + (f" ({c.sha[:12]})" if c.sha else "") + (f", version {c.version}" if c.version
                                                                            else "")
    names = [r.name for r in report.releases]
    span = f"{names[0]} … {names[-1]}" if len(names) > 2 else ", ".join(names)
    return f"Upkeep onto {what}; {len(names)} release(s){': ' + span if names else ''}"


def conclusion(report: UpkeepReport) -> str:
    counts = {v: sum(i.verdict is v for i in report.items) for v in Verdict}
    parts = ", ".join(f"{counts[v]} {v.value}" for v in Verdict if counts[v])
    head = "nothing needs a person" if report.settled else "needs a person"
    return f"{len(report.items)} carried item(s): {parts}; {head}."


def brought_by(item: Item) -> str:
    """The upstream commits that brought the item's present hunks, each with how many ("" if none)."""
    counts: dict[str, int] = {}
    for h in item.hunks:
        if h.commit:
            counts[h.commit] = counts.get(h.commit, 0) + 1
    return ", ".join(f"{sha[:12]} ({n} hunk{'s' if n > 1 else ''})" for sha, n in counts.items())


def _remaining(item: Item) -> str:
    left = item.remaining
    return "; ".join(f"{hunk_where(h)} {h.result.status.value}" for h in left)


# -- table ----------------------------------------------------------------------------------


def upkeep_table(report: UpkeepReport) -> RenderableType:
    table = Table(title=safe(candidate_line(report)), title_justify="left")
    for col in ("item", "state", "first release", "verdict", "hunks"):
        table.add_column(col)
    for item in report.items:
        present = sum(h.counted and h.result.status.present for h in item.hunks)
        counted = sum(h.counted for h in item.hunks)
        table.add_row(safe(item_name(item)), state_text(item), safe(item.first_release or "—"),
                      Text(item.verdict.value, style=VERDICT_STYLE[item.verdict]), f"{present}/{counted} in")
    parts: list[RenderableType] = [table]
    for item in report.items:
        lines = [f"{item_name(item)}: {_ADVICE[item.verdict]}"]
        if item.note:
            lines.append(f"  note: {item.note}")
        if item.landing_note:
            lines.append(f"  {item.landing_note}")
        if item.merge_commit:
            lines.append(f"  upstream commit: {item.merge_commit[:12]}")
        if brought := brought_by(item):
            lines.append(f"  brought by: {brought}")
        if item.verdict is not Verdict.RETIRE and (left := _remaining(item)):
            lines.append(f"  not in the candidate: {left}")
        parts += [safe(line) for line in lines]
    parts.append(Text(conclusion(report), style="bold" if report.settled else "bold red"))
    return Group(*parts)


# -- markdown -------------------------------------------------------------------------------


def _md(value: str | None) -> str:
    return html.escape(clean(value)).replace("|", "\\|").replace("`", "\\`") if value else ""


def upkeep_markdown(report: UpkeepReport) -> str:
    out = [f"**{_md(conclusion(report))}**", "", _md(candidate_line(report)), "",
           "| item | state | first release | verdict | not in the candidate |", "|---|---|---|---|---|"]
    for item in report.items:
        out.append(f"| {_md(item_name(item))} | {_md(state_text(item))} | {_md(item.first_release) or '—'} | "
                   f"{item.verdict.value} | {_md(_remaining(item)) or '—'} |")
    notes = [(item, n) for item in report.items
             for n in (item.note, item.landing_note, brought_by(item) and f"brought by {brought_by(item)}") if n]
    if notes:
        out += ["", "<details><summary>Notes</summary>", ""]
        out += [f"- {_md(item_name(item))}: {_md(n)}" for item, n in notes]
        out += ["", "</details>"]
    return "\n".join(out) + "\n"


# -- json -----------------------------------------------------------------------------------


def upkeep_json(report: UpkeepReport) -> str:
    c = report.candidate
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "settled": report.settled,
        "releases": [{"name": r.name, "commit": r.commit, "wheel": r.wheel} for r in report.releases],
        "candidate": {"name": c.name, "kind": c.kind, "sha": c.sha, "version": c.version},
        "items": [_item(item) for item in report.items],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _item(item: Item) -> dict[str, Any]:
    return {
        "pr": item.number, "patch": item.patch, "title": item.pr.title, "note": item.note,
        "state": item.state.value, "merged_by": item.merged_by.value if item.merged_by else None,
        "merge_commit": item.merge_commit, "first_release": item.first_release,
        "landing_note": item.landing_note, "verdict": item.verdict.value,
        "hunks": [_hunk(h) for h in item.hunks],
    }


def _hunk(h: HunkUpkeep) -> dict[str, Any]:
    r, hk = h.result, h.result.hunk
    return {
        "path": hk.path, "old_start": hk.old_start, "old_lines": hk.old_lines, "new_start": hk.new_start,
        "new_lines": hk.new_lines, "status": r.status.value, "found_path": r.found_path, "found_line": r.found_line,
        "landed_in": h.landing.landed_in, "first_seen": h.landing.first_seen,
        "reverted_in": list(h.landing.reverted_in), "commit": h.commit,
    }
