"""The markdown report opens with the audited stack as a Mermaid `graph TD` in the shape GitHub
renders: quoted labels, untrusted titles escaped to entity codes, each PR coloured by its status."""

from __future__ import annotations

import re

from prstack.match.report import AuditReport
from prstack.models import PRReport, PRStatus, PullRequest, TargetInfo
from prstack.render.graph import audit_mermaid
from prstack.render.markdown import audit_markdown

NODE = re.compile(r'  pr(\d+)\["([^"\[\]<>`;{}|]|#\d+;)*"\]')
EDGE = re.compile(r'  pr(\d+) -->\|"on"\| pr(\d+)')
CLASS_DEF = re.compile(r"  classDef (applied|partial|missing|not_shipped) fill:#[0-9a-f]{6},stroke:#[0-9a-f]{6},"
                       r"color:#[0-9a-f]{6};")
CLASS = re.compile(r"  class (pr\d+(?:,pr\d+)*) (applied|partial|missing|not_shipped);")
HOSTILE = 'x"] --> evil["` ```\nclick pr1 call alert() <b>&amp;</b> #1; [bold]{a|b}'


def prs() -> tuple[PRReport, ...]:
    counts = dict.fromkeys(("applied", "relocated", "missing", "partial", "diverged", "conflict", "file-missing",
                            "not-shipped", "unverifiable"), 0)
    return (PRReport(PullRequest(1, "a" * 40, "b" * 40, title="Fix the offsets"), PRStatus.APPLIED, counts),
            PRReport(PullRequest(2, "c" * 40, "a" * 40, title=HOSTILE, depends_on=(1,)), PRStatus.PARTIAL, counts),
            PRReport(PullRequest(3, "d" * 40, "c" * 40, title="docs", depends_on=(2,)), PRStatus.NOT_SHIPPED, counts),
            PRReport(PullRequest(5, "e" * 40, "f" * 40, title=None), PRStatus.MISSING, counts))


def parse(text: str) -> tuple[dict[int, str], set[tuple[int, int]], dict[int, str]]:
    """Nodes (number -> label), edges (child, parent) and status classes of a graph, every line
    checked against the shape (an unknown line fails)."""
    lines = text.splitlines()
    assert lines[0] == "graph TD"
    nodes, edges, classes, defined = {}, set(), {}, set()
    for line in lines[1:]:
        if m := NODE.fullmatch(line):
            nodes[int(m.group(1))] = line.split('["', 1)[1][:-2]
        elif m := EDGE.fullmatch(line):
            edges.add((int(m.group(1)), int(m.group(2))))
        elif m := CLASS_DEF.fullmatch(line):
            defined.add(m.group(1))
        elif m := CLASS.fullmatch(line):
            assert m.group(2) in defined  # a class is defined before it is used
            classes |= {int(n.removeprefix("pr")): m.group(2) for n in m.group(1).split(",")}
        else:
            raise AssertionError(f"not a line of the shape: {line!r}")
    assert set(classes) == set(nodes) and {n for e in edges for n in e} <= set(nodes)
    return nodes, edges, classes


def test_each_pr_is_a_node_above_its_parent_coloured_by_status() -> None:
    nodes, edges, classes = parse(audit_mermaid(prs()))
    assert list(nodes) == [5, 3, 2, 1]  # the top of the stack first
    assert edges == {(2, 1), (3, 2)}
    assert classes == {1: "applied", 2: "partial", 3: "not_shipped", 5: "missing"}
    assert nodes[1] == "#35;1 · applied · Fix the offsets"
    assert nodes[5] == "#35;5 · missing"


def test_a_hostile_title_stays_inside_its_label() -> None:
    nodes, _, _ = parse(audit_mermaid(prs()))
    label = nodes[2]
    for raw in ('"', "`", "<", ">", "[", "]", "\n", "|", "{"):
        assert raw not in label
    assert "#34;#93; --#62; evil#91;#34;#96;" in label  # the quote, ], >, [ and ` as entity codes
    assert "click pr1 call alert#40;#41;" in label  # on the node's own line, inside its quotes


def test_the_markdown_report_opens_with_the_graph_in_a_mermaid_fence() -> None:
    report = AuditReport(TargetInfo("wheel", "/tmp/x.whl", "pkg", "1.0"), prs(), ())
    text = audit_markdown(report)
    lines = text.splitlines()
    assert lines[0].startswith("### prstack audit:") and lines[2] == "```mermaid"
    end = lines.index("```", 3)
    parse("\n".join(lines[3:end]))
    assert text.count("```mermaid") == 1
