"""The stack graph as a rich tree, JSON (prstack.graph/1), Graphviz dot or Mermaid (values)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, assert_never

from rich.console import Group, RenderableType
from rich.text import Text
from rich.tree import Tree

from prstack.models import PRReport, PRState, PRStatus
from prstack.render.formats import GraphFormat
from prstack.render.text import clean, safe
from prstack.render.titles import table_title
from prstack.stack.facts import Evidence, MatchKind, StackEdge
from prstack.stack.graph import Stack

SCHEMA = "prstack.graph/1"
_MATCH_WORD = {
    MatchKind.SHA: "same",
    MatchKind.PATCH_ID: "copied",
    MatchKind.COMMIT_ID: "same commit-id",
    MatchKind.SUBJECT: "edited",
}
STATE_STYLE = {PRState.OPEN: "green", PRState.MERGED: "blue", PRState.STALE: "bold yellow"}


def render_graph(stack: Stack, fmt: GraphFormat) -> RenderableType:
    """The stack in the asked format (a rich renderable for table, a string otherwise)."""
    if fmt is GraphFormat.TABLE:
        return graph_tree(stack)
    if fmt is GraphFormat.JSON:
        return json.dumps(graph_dict(stack), indent=2) + "\n"
    if fmt is GraphFormat.DOT:
        return graph_dot(stack)
    if fmt is GraphFormat.MERMAID:
        return graph_mermaid(stack)
    assert_never(fmt)


def _subject(stack: Stack, sha: str) -> str:
    for f in stack.facts.values():
        for c in f.commits:
            if c.sha == sha:
                return c.subject
    return ""


def _short(sha: str) -> str:
    return sha[:10]


def _merged_how(stack: Stack, number: int) -> str | None:
    f = stack.facts.get(number)
    return f.merged if f else None


def _state_text(stack: Stack, number: int) -> str:
    state = stack.states.get(number, PRState.OPEN)
    how = _merged_how(stack, number)
    return f"{state.value} ({how})" if state is PRState.MERGED and how else state.value


# -- rich tree ---------------------------------------------------------------------


def _node_label(stack: Stack, number: int, edge: StackEdge | None) -> Text:
    f = stack.facts.get(number)
    state = stack.states.get(number, PRState.OPEN)
    label = Text.assemble((f"#{number}", "bold"), "  ")
    if f is not None:
        label.append(_short(f.head), style="cyan")
        label.append("  ")
    label.append(_state_text(stack, number), style=STATE_STYLE[state])
    if f is not None:
        own = _own_count(stack, number)
        label.append(f"  {own} commit{'s' if own != 1 else ''}", style="dim")
        if f.title:
            label.append("  ")
            label.append_text(safe(f.title, "italic"))
    if edge is not None:
        label.append("  ← ", style="dim")
        label.append(", ".join(e.value for e in edge.evidence), style="magenta")
        kinds = Counter(_MATCH_WORD[m.how] for m in edge.matches)
        if kinds and set(kinds) != {"same"}:
            label.append(" (" + ", ".join(f"{n} {w}" for w, n in kinds.items()) + ")", style="dim")
        if edge.markers:
            label.append(" (")
            label.append_text(safe("; ".join(edge.markers)))
            label.append(")")
    return label


def _own_count(stack: Stack, number: int) -> int:
    return len(stack.own_commits(number))


def _stale_lines(stack: Stack, edge: StackEdge) -> list[Text]:
    if edge.stale is None:
        return []
    lines = [Text(f"built on an old #{edge.parent} (force-pushed since):", style="yellow")]
    for sha in edge.stale.lacks:
        line = Text(f"  lacks    {_short(sha)} ", style="yellow")
        lines.append(line.append_text(safe(_subject(stack, sha))))
    for sha in edge.stale.carries:
        line = Text(f"  carries  {_short(sha)} ", style="yellow")
        lines.append(line.append_text(safe(_subject(stack, sha))))
    return lines


LEGEND = {
    Evidence.ANCESTRY: "parent's head in its history",
    Evidence.PATCH_ID: "copies of its commits",
    Evidence.EDITED_COPY: "edited copies of them",
    Evidence.BASE_BRANCH: "GitHub base branch",
    Evidence.MARKER: "named in a message",
}
"""Why a child builds on its parent, as the one-line legend under the tree says it."""


def legend(stack: Stack) -> Text | None:
    """One line saying what the evidence words after "←" mean, those the tree uses only."""
    used = {e for edge in stack.edges for e in edge.evidence}
    if not used:
        return None
    return Text("← " + "; ".join(f"{e.value}: {why}" for e, why in LEGEND.items() if e in used), style="dim")


def graph_tree(stack: Stack) -> RenderableType:
    """A rich tree: bottom PRs at the root, the PRs built on each beneath it. Each PR is drawn
    once, under its first parent; under another parent it is named, not drawn again."""
    tree = Tree(Text("PR stack (each PR under the one it builds on)", style="bold"))
    drawn: set[int] = set()

    def add(branch: Tree, number: int, edge: StackEdge | None) -> None:
        if number in drawn:
            line = Text.assemble((f"#{number}", "bold"), ("  (drawn above; also builds on this PR)", "dim"))
            if edge is not None:
                line.append("  ← ", style="dim")
                line.append(", ".join(e.value for e in edge.evidence), style="magenta")
            branch.add(line)
            return
        drawn.add(number)
        node = branch.add(_node_label(stack, number, edge))
        if edge is not None:
            for line in _stale_lines(stack, edge):
                node.add(line)
        for child in stack.children(number):
            add(node, child, stack.edge(number, child))

    for number in stack.order:
        if not stack.parents.get(number):
            add(tree, number, None)
    for number in stack.order:  # a cycle's PRs have parents but no root above them
        if number not in drawn:
            add(tree, number, None)
    notes: list[RenderableType] = [tree, *filter(None, [legend(stack)])]
    for u in stack.unconfirmed:
        line = Text(f"unconfirmed: #{u.child} names #{u.parent} (", style="yellow")
        line.append_text(safe("; ".join(u.markers) or "base branch"))
        line.append(") but ")
        notes.append(line.append_text(safe(u.reason)))
    for m in stack.missing:
        line = Text(f"missing: #{m.child} builds on #{m.number} (", style="bold red")
        line.append_text(safe("; ".join(m.markers) or "its base branch"))
        line.append("), which is not in the clone; fetch it with: ")
        notes.append(line.append_text(safe(m.fetch)))
    for cycle in stack.cycles:
        names = " ↔ ".join(f"#{n}" for n in cycle)
        notes.append(
            Text(f"cycle: {names} claim to build on each other (edges dropped but those of ancestry)", "bold red")
        )
    return Group(*notes)


# -- JSON --------------------------------------------------------------------------


def graph_dict(stack: Stack) -> dict[str, Any]:
    """The stack as plain data, schema prstack.graph/1."""
    prs = []
    for number in stack.order:
        f = stack.facts.get(number)
        prs.append(
            {
                "number": number,
                "title": f.title if f else None,
                "head_sha": f.head if f else None,
                "state": stack.states.get(number, PRState.OPEN).value,
                "merged_by": f.merged if f else None,
                "fork_point": f.fork_point if f else None,
                "merge_bases": list(f.merge_bases) if f else [],
                "fork_note": f.fork_note if f else None,
                "base_sha": stack.base_of(number) or (f.fork_point if f else None),
                "parents": list(stack.parents.get(number, ())),
                "commits": [
                    {
                        "sha": c.sha,
                        "subject": c.subject,
                        "pr": stack.owner(c.sha),
                        "carried_from": stack.carried_from(c.sha),
                    }
                    for c in (f.commits if f else ())
                ],
            }
        )
    return {
        "schema": SCHEMA,
        "order": list(stack.order),
        "prs": prs,
        "edges": [
            {
                "parent": e.parent,
                "child": e.child,
                "evidence": [ev.value for ev in e.evidence],
                "tip": e.tip,
                "markers": list(e.markers),
                "matches": [
                    {"parent": m.parent_sha, "child": m.child_sha, "how": m.how.value}
                    for m in e.matches
                ],
                "stale": None
                if e.stale is None
                else {"lacks": list(e.stale.lacks), "carries": list(e.stale.carries)},
            }
            for e in stack.edges
        ],
        "unconfirmed": [
            {"parent": u.parent, "child": u.child, "markers": list(u.markers), "reason": u.reason}
            for u in stack.unconfirmed
        ],
        "missing": [
            {"number": m.number, "child": m.child, "markers": list(m.markers), "fetch": m.fetch}
            for m in stack.missing
        ],
        "cycles": [list(c) for c in stack.cycles],
    }


# -- dot and mermaid -----------------------------------------------------------------


def _plain_label(stack: Stack, number: int, sep: str) -> str:
    f = stack.facts.get(number)
    parts = [f"#{number}"]
    if f is not None:
        parts.append(_short(f.head))
    parts.append(_state_text(stack, number))
    if f is not None and f.title:
        parts.append(clean(f.title)[:60])
    return sep.join(parts)


def _dot_str(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def graph_dot(stack: Stack) -> str:
    """Graphviz: parents below children (rankdir=BT), each arrow labelled with its evidence."""
    lines = ["digraph prstack {", "  rankdir=BT;", "  node [shape=box, fontname=monospace];"]
    for number in stack.order:
        label = _plain_label(stack, number, "\n")
        style = {
            PRState.MERGED: ", style=filled, fillcolor=lightblue",
            PRState.STALE: ", style=filled, fillcolor=lightyellow",
        }.get(stack.states.get(number, PRState.OPEN), "")
        lines.append(f'  "{number}" [label={_dot_str(label)}{style}];')
    for e in stack.edges:
        label = ", ".join(ev.value for ev in e.evidence) + (" (stale)" if e.stale else "")
        lines.append(f'  "{e.parent}" -> "{e.child}" [label={_dot_str(label)}];')
    for u in stack.unconfirmed:
        lines.append(f'  "{u.parent}" -> "{u.child}" [label="unconfirmed marker", style=dashed];')
    for m in stack.missing:
        lines.append(
            f'  "{m.number}" [label="#{m.number}\\nmissing ref", style=dashed, color=red];'
        )
        lines.append(f'  "{m.number}" -> "{m.child}" [label="marker", style=dashed, color=red];')
    lines.append("}")
    return "\n".join(lines) + "\n"


_MERMAID_UNSAFE = re.compile(r'["<>`|{}\[\]();#&]')


def _mermaid_text(value: str) -> str:
    """Untrusted text for inside a quoted Mermaid label: quotes, brackets, backticks, `#`, `;`, `&`
    and HTML's characters as Mermaid's entity codes (`#34;`), controls as escapes (`clean`)."""
    return _MERMAID_UNSAFE.sub(lambda m: f"#{ord(m.group(0))};", clean(value))


AUDIT_STATUS_FILL = {
    PRStatus.APPLIED: "fill:#dcfce7,stroke:#16a34a,color:#14532d",
    PRStatus.PARTIAL: "fill:#fef9c3,stroke:#ca8a04,color:#713f12",
    PRStatus.MISSING: "fill:#fee2e2,stroke:#dc2626,color:#7f1d1d",
    PRStatus.NOT_SHIPPED: "fill:#f3f4f6,stroke:#9ca3af,color:#374151",
}
"""Each PR status's colours in the audit's Mermaid graph (green, yellow, red, grey)."""


def _status_class(status: PRStatus) -> str:
    return status.value.replace("-", "_")


def audit_mermaid(prs: Sequence[PRReport]) -> str:
    """The audited stack as a Mermaid `graph TD` (GitHub renders it in a comment or job summary):
    each PR a node above the PR it builds on, its label quoted and its title escaped, coloured by
    its status."""
    lines = ["graph TD"]
    known = {p.pr.number for p in prs}
    for p in reversed(prs):  # the top of the stack first: drawn at the top
        title = table_title(p.pr)[0]
        label = " · ".join(part for part in (f"#{p.pr.number}", p.status.value, title[:60]) if part)
        lines.append(f'  pr{p.pr.number}["{_mermaid_text(label)}"]')
    for p in reversed(prs):
        lines += [f'  pr{p.pr.number} -->|"on"| pr{n}' for n in p.pr.depends_on if n in known]
    used = list(dict.fromkeys(p.status for p in prs))
    lines += [f"  classDef {_status_class(s)} {AUDIT_STATUS_FILL[s]};" for s in used]
    lines += [f"  class {','.join(f'pr{p.pr.number}' for p in prs if p.status is s)} {_status_class(s)};"
              for s in used]
    return "\n".join(lines) + "\n"


def graph_mermaid(stack: Stack) -> str:
    """Mermaid flowchart (renders in GitHub comments): parents below children."""
    lines = ["flowchart BT"]
    for number in stack.order:
        f = stack.facts.get(number)
        parts = [_mermaid_text(f"#{number}")]
        if f is not None:
            parts.append(_short(f.head))
        parts.append(_mermaid_text(_state_text(stack, number)))
        if f is not None and f.title:
            parts.append(_mermaid_text(f.title[:60]))
        lines.append(f'  pr{number}["{" · ".join(parts)}"]')
        state = stack.states.get(number, PRState.OPEN)
        if state is not PRState.OPEN:
            lines.append(f"  class pr{number} {state.value}")
    for e in stack.edges:
        label = ", ".join(ev.value for ev in e.evidence) + (", stale" if e.stale else "")
        lines.append(f'  pr{e.parent} -->|"{label}"| pr{e.child}')
    for u in stack.unconfirmed:
        for n in (u.parent, u.child):
            if n not in stack.order:
                lines.append(f'  pr{n}["#35;{n}"]')
        lines.append(f'  pr{u.parent} -.->|"unconfirmed marker"| pr{u.child}')
    for m in stack.missing:
        lines.append(f'  pr{m.number}["#35;{m.number} · missing ref"]')
        lines.append(f'  pr{m.number} -.->|"marker"| pr{m.child}')
    lines.append("  classDef merged fill:#dbeafe;")
    lines.append("  classDef stale fill:#fef9c3;")
    return "\n".join(lines) + "\n"
