"""Graph and hunks renderers, every format, on a stack with stale, merged, missing, unconfirmed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from conftest import GitRepo
from prstack.models import PullRequest
from prstack.render.graph import GraphFormat, render_graph
from prstack.render.hunks import HunksFormat, render_hunks
from prstack.sources.git.changes import load_changes, read_graph
from prstack.sources.git.repo import GitClone
from prstack.stack.graph import Stack

TEXT = "".join(f"row {i}\n" for i in range(40))


def rows(**changes: str) -> str:
    out = TEXT.splitlines()
    for key, value in changes.items():
        out[int(key[1:])] = value
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def messy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """#1 merged (merge commit) <- #2 <- #3 built on an old #2 (stale); #3 names #999 (no ref)
    and #4 (unrelated)."""
    repo = GitRepo(tmp_path_factory.mktemp("messy") / "repo")
    repo.commit("base", {"m.py": TEXT, "n.py": TEXT})
    repo.branch("one")
    repo.commit("One", {"m.py": rows(r1="one")})
    repo.pr_ref(1)
    repo.branch("two")
    two = repo.commit("Two", {"m.py": rows(r1="one", r10="two")})
    repo.commit("Two more", {"m.py": rows(r1="one", r10="two", r15="two more")})
    repo.branch("three")
    repo.commit("Three\n\nDepends on #999\nStacked on #4", {"n.py": rows(r5="three")})
    repo.pr_ref(3)
    repo.branch("two", two)
    repo.commit("Two more", {"m.py": rows(r1="one", r10="two", r15="two more, fixed")})
    repo.pr_ref(2)
    repo.branch("main", "main")
    repo.commit("main", {"o.py": "x\n"})
    repo.git("merge", "--no-ff", "--quiet", "-m", "Merge #1", "one")
    repo.branch("four", "main")
    repo.commit("Four", {"o.py": "y\n"})
    repo.pr_ref(4)
    return repo.path


@pytest.fixture(scope="module")
def stack(messy: Path) -> Stack:
    meta = {2: PullRequest(2, "", "", title="Two: [bold]not markup[/] \x1b[31mred")}
    return read_graph(GitClone(messy), [3], meta)


@pytest.mark.slow
def test_graph_facts(stack: Stack) -> None:
    assert stack.order == (1, 2, 3)
    assert [s.value for s in stack.states.values()] == ["merged", "open", "stale"]
    assert [m.number for m in stack.missing] == [999]
    assert [(u.parent, u.child) for u in stack.unconfirmed] == [(4, 3)]


@pytest.mark.parametrize("fmt", list(GraphFormat))
def test_every_graph_format_renders(stack: Stack, fmt: GraphFormat) -> None:
    console = Console(record=True, width=100)
    console.print(render_graph(stack, fmt))
    text = console.export_text()
    assert "1" in text and "3" in text
    assert "\x1b" not in text


def test_tree(stack: Stack) -> None:
    console = Console(record=True, width=120)
    console.print(render_graph(stack, GraphFormat.TABLE))
    text = console.export_text()
    assert "#1" in text and "merged (ancestry)" in text
    assert "#3" in text and "stale" in text and "lacks" in text and "carries" in text
    assert "[bold]not markup[/]" in text  # untrusted title shown literally
    assert "missing: #3 builds on #999" in text and "refs/pull/999/head" in text
    assert "unconfirmed: #3 names #4" in text


@pytest.mark.slow
def test_json(stack: Stack) -> None:
    data = json.loads(str(render_graph(stack, GraphFormat.JSON)))
    assert data["schema"] == "prstack.graph/1"
    assert data["order"] == [1, 2, 3]
    edge = next(e for e in data["edges"] if e["child"] == 3)
    assert edge["evidence"] == ["ancestry"] or edge["evidence"][0] == "patch-id"
    assert edge["stale"]["lacks"] and edge["stale"]["carries"]
    assert data["missing"][0]["number"] == 999
    assert data["prs"][0]["merged_by"] == "ancestry"


def test_dot_and_mermaid(stack: Stack) -> None:
    dot = str(render_graph(stack, GraphFormat.DOT))
    assert dot.startswith("digraph prstack {") and '"2" -> "3"' in dot and "(stale)" in dot
    assert '\\"' not in dot.split("Two:")[0]
    mermaid = str(render_graph(stack, GraphFormat.MERMAID))
    assert mermaid.startswith("flowchart BT")
    assert 'pr2 -->|"patch-id, stale"| pr3' in mermaid and "pr3" in mermaid
    assert "[bold]" not in mermaid  # brackets escaped as entities
    assert "class pr3 stale" in mermaid and "class pr1 merged" in mermaid


@pytest.mark.parametrize("fmt", list(HunksFormat))
def test_every_hunks_format_renders(messy: Path, fmt: HunksFormat) -> None:
    changes = load_changes(GitClone(messy), [3])
    console = Console(record=True, width=100)
    console.print(render_hunks(changes.prs, changes.hunks, fmt))
    text = console.export_text()
    assert "n.py" in text and "m.py" in text


def test_hunks_json(messy: Path) -> None:
    changes = load_changes(GitClone(messy), [3])
    data = json.loads(str(render_hunks(changes.prs, changes.hunks, HunksFormat.JSON)))
    assert data["schema"] == "prstack.hunks/1"
    assert [p["number"] for p in data["prs"]] == [1, 2, 3]
    three = [h for h in data["hunks"] if h["pr"] == 3]
    assert [h["path"] for h in three] == ["m.py", "n.py"]  # #3 carries a stale copy of #2's m.py
    assert three[0]["commits"] and three[0]["commit"] == three[0]["commits"][-1]
