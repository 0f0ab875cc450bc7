"""The plan as a rich table, Markdown, JSON (prstack.plan/1) and a script of git commands.

JSON, schema "prstack.plan/1":
    {"schema", "clean": bool,
     "onto": {"kind": "ref|installed", "name", "sha", "start", "note", "distribution", "version"},
     "prs": [{"number", "head_sha", "base_sha", "depends_on": [int],
              "status": "present|clean|conflict|blocked", "reason": str,
              "picks": [{"commit", "parent", "squash": bool, "paths": [str]}],
              "redundant": [sha], "blocked_by": [int],
              "conflicts": [{"path", "commit", "regions": [[first, last]], "with_onto": bool,
                             "with_prs": [int], "hunks": [{"old_start", "old_lines",
                                                           "new_start", "new_lines"}]}]}]}
PRs are in plan order; `start` is the commit a script starts from (differs from `sha` only for an
installed target without a build commit); `regions` are line ranges of conflict markers in the
merged file.
"""

from __future__ import annotations

import html
import json
import shlex
from typing import Any, assert_never

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from prstack.plan import Conflict, Onto, OntoKind, Plan, PlanStatus, PRPlan
from prstack.render.formats import OutputFormat
from prstack.render.text import clean, safe
from prstack.render.titles import FALLBACK_FOOTNOTE, FALLBACK_MARK, shown_title, table_title

SCHEMA = "prstack.plan/1"
STATUS_STYLE = {
    PlanStatus.PRESENT: "dim green",
    PlanStatus.CLEAN: "green",
    PlanStatus.CONFLICT: "bold red",
    PlanStatus.BLOCKED: "yellow",
}


def render_plan(plan: Plan, fmt: OutputFormat) -> RenderableType:
    """The plan in the asked format (a string for json/markdown, a renderable for table)."""
    if fmt is OutputFormat.TABLE:
        return plan_table(plan)
    if fmt is OutputFormat.JSON:
        return plan_json(plan)
    if fmt is OutputFormat.MARKDOWN:
        return plan_markdown(plan)
    assert_never(fmt)


def onto_line(onto: Onto) -> str:
    """One line: what the plan goes onto."""
    if onto.kind is OntoKind.REF:
        return f"onto {onto.name} ({onto.sha[:12]})"
    t = onto.target
    what = f"{t.distribution or ''} {t.version or ''}".strip() if t else ""
    line = f"onto the installed {what or 'target'} in {onto.name}"
    return line + (f": {onto.note}" if onto.note else "")


def verdict(plan: Plan) -> str:
    counts = {s: sum(p.status is s for p in plan.prs) for s in PlanStatus}
    parts = [f"{counts[s]} {s.value}" for s in PlanStatus if counts[s]]
    head = "clean" if plan.clean else "NOT clean"
    return f"Plan {head}: " + ", ".join(parts) + f"; {len(plan.picks)} commit(s) to pick."


def conflict_where(c: Conflict) -> str:
    """path:lines of the conflict regions, e.g. 'src/a.py:15-23'."""
    spans = ",".join(f"{a}-{b}" for a, b in c.regions)
    return f"{c.path}:{spans}" if spans else c.path


def _with(c: Conflict, plan: Plan) -> str:
    names = [f"#{n}" for n in c.with_prs]
    if c.with_onto:
        names.insert(0, plan.onto.label)
    return " and ".join(names)


def title_of(p: PRPlan) -> str:
    """The PR's title, or (from a clone, which has none) its first commit's subject, said so."""
    return shown_title(p.pr)


# -- table ----------------------------------------------------------------------------------


def plan_table(plan: Plan) -> RenderableType:
    table = Table(title=safe(f"Plan {onto_line(plan.onto)}"), title_justify="left")
    for col in ("step", "PR", "title", "on", "status", "picks"):
        table.add_column(col)
    for step, p in enumerate(plan.prs, 1):
        title, from_commit = table_title(p.pr)
        table.add_row(
            str(step),
            f"#{p.pr.number}",
            safe(title) + Text(FALLBACK_MARK if from_commit else "", style="dim"),
            ", ".join(f"#{n}" for n in p.pr.depends_on) or "—",
            Text(p.status.value, style=STATUS_STYLE[p.status]),
            str(len(p.picks)),
        )
    why = Text("\n").join(Text(f"#{p.pr.number}: ", style="bold") + safe(p.reason) for p in plan.prs)
    parts: list[RenderableType] = [table, why]  # (the reasons at the full width, not squeezed into a cell)
    if any(table_title(p.pr)[1] for p in plan.prs):
        parts.append(Text(FALLBACK_FOOTNOTE, style="dim"))
    for p in plan.prs:
        parts += [_conflict_panel(p, c, plan) for c in p.conflicts]
    parts.append(Text(verdict(plan), style="bold" if plan.clean else "bold red"))
    return Group(*parts)


def _conflict_panel(p: PRPlan, c: Conflict, plan: Plan) -> Panel:
    lines = [safe(c.message, "italic")] if c.message else []
    for h in c.hunks:
        for line in h.diff_text().splitlines():
            style = ("green" if line.startswith("+") else "red" if line.startswith("-")
                     else "cyan" if line.startswith("@@") else "")
            lines.append(safe(line, style))
    body = Text("\n", no_wrap=True, overflow="ellipsis").join(lines)
    body.no_wrap, body.overflow = True, "ellipsis"  # (each line cut with "…", as the audit's panels do)
    title = Text.assemble(("conflict", "bold red"), " ")
    title.append_text(safe(f"PR #{p.pr.number} {conflict_where(c)} with {_with(c, plan)}"))
    return Panel(body, title=title, title_align="left", subtitle=f"commit {c.commit[:12]}",
                 subtitle_align="right")


# -- markdown -------------------------------------------------------------------------------


def _cell(value: str | None) -> str:
    return html.escape(clean(value)).replace("|", "\\|").replace("\n", " ")


def plan_markdown(plan: Plan) -> str:
    lines = [
        f"### prstack plan {_cell(onto_line(plan.onto))}",
        "",
        "| step | PR | title | on | status | picks | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for step, p in enumerate(plan.prs, 1):
        lines.append(
            f"| {step} | #{p.pr.number} | {_cell(title_of(p))} | "
            f"{', '.join(f'#{n}' for n in p.pr.depends_on) or '—'} | **{p.status.value}** | "
            f"{len(p.picks)} | {_cell(p.reason)} |"
        )
    conflicts = [(p, c) for p in plan.prs for c in p.conflicts]
    if conflicts:
        lines += ["", f"<details><summary>{len(conflicts)} conflict(s)</summary>", ""]
        for p, c in conflicts:
            lines += [
                f"**conflict** — PR #{p.pr.number}, `{_cell(conflict_where(c))}` with "
                f"{_cell(_with(c, plan))}, commit `{c.commit[:12]}`",
                "",
                "````diff",
                *(clean(line).replace("````", "` ` ` `") for h in c.hunks
                  for line in h.diff_text().splitlines()),
                "````",
                "",
            ]
        lines.append("</details>")
    lines += ["", _cell(verdict(plan))]
    return "\n".join(lines) + "\n"


# -- json -----------------------------------------------------------------------------------


def plan_dict(plan: Plan) -> dict[str, Any]:
    o = plan.onto
    return {
        "schema": SCHEMA,
        "onto": {"kind": o.kind, "name": o.name, "sha": o.sha, "start": o.start, "note": o.note,
                 "distribution": o.target.distribution if o.target else None,
                 "version": o.target.version if o.target else None},
        "clean": plan.clean,
        "prs": [
            {
                "number": p.pr.number,
                "head_sha": p.pr.head_sha,
                "base_sha": p.pr.base_sha,
                "depends_on": list(p.pr.depends_on),
                "status": p.status.value,
                "reason": p.reason,
                "picks": [{"commit": k.commit, "parent": k.parent, "squash": k.squash,
                           "paths": list(k.paths)} for k in p.picks],
                "redundant": list(p.redundant),
                "blocked_by": list(p.blocked_by),
                "conflicts": [
                    {
                        "path": c.path,
                        "commit": c.commit,
                        "regions": [list(r) for r in c.regions],
                        "with_onto": c.with_onto,
                        "with_prs": list(c.with_prs),
                        "hunks": [{"old_start": h.old_start, "old_lines": h.old_lines,
                                   "new_start": h.new_start, "new_lines": h.new_lines}
                                  for h in c.hunks],
                    }
                    for c in p.conflicts
                ],
            }
            for p in plan.prs
        ],
    }


def plan_json(plan: Plan) -> str:
    return json.dumps(plan_dict(plan), indent=2) + "\n"


# -- script ---------------------------------------------------------------------------------


def plan_script(plan: Plan) -> str:
    """POSIX sh: fetch each PR ref, start a branch at the onto-point, cherry-pick in order."""
    o = plan.onto
    q = shlex.quote
    lines = [
        "#!/bin/sh",
        f"# prstack plan {clean(onto_line(o))}".replace("\n", " "),
        f"# {verdict(plan)}",
        "# Run inside a clone of the repository. REMOTE: where refs/pull/N/head live (origin).",
        "set -eu",
        'REMOTE="${REMOTE:-origin}"',
        'BRANCH="${BRANCH:-prstack-plan}"',
    ]
    if o.start != o.sha:
        lines.append("# the installed files have no build commit: this starts from the commit "
                     "they were planned over; the result may differ where they were edited.")
    refs = " ".join(q(f"refs/pull/{p.pr.number}/head") for p in plan.prs if p.picks)
    if refs:
        lines.append(f'git fetch --no-tags "$REMOTE" {refs}')
    lines += [
        f'git cat-file -e {o.start}^{{commit}} 2>/dev/null || git fetch --no-tags "$REMOTE" {o.start}',
        f'git switch --create "$BRANCH" {o.start}',
    ]
    for p in plan.prs:
        title = f" ({clean(title_of(p))})".replace("\n", " ") if title_of(p) else ""
        lines.append(f"# PR #{p.pr.number}{title}: {p.status.value} — {clean(p.reason)}")
        plain = [k.commit for k in p.picks if not k.squash]
        if plain:
            lines.append("git cherry-pick -x " + " ".join(plain))
        for k in p.picks:
            if k.squash:
                only = (" -- " + " ".join(q(path) for path in k.paths)) if k.paths else ""
                what = "what the target lacks" if k.paths else "squashed by prstack plan"
                lines.append(f"git diff --binary {k.parent} {k.commit}{only} | git apply --index --3way")
                lines.append(f"git commit -q -m {q(f'PR #{p.pr.number} ({what})')}")
    return "\n".join(lines) + "\n"
