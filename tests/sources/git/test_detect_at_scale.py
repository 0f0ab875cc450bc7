"""The bench's repository at a small scale: many PR refs, noise stacks, and the measured stack
(right edges and hunks among 400 refs; how fast is measured by bench/bench_stack.py, not here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from prstack.sources.git.changes import load_changes, read_graph
from prstack.sources.git.repo import GitClone
from prstack.stack.facts import Evidence

BENCH = Path(__file__).resolve().parents[3] / "bench" / "bench_stack.py"


@pytest.mark.slow
def test_detection_among_many_pr_refs(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_stack", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    repo = bench.build(tmp_path / "repo", 400)
    stack = read_graph(GitClone(repo), [3])
    assert stack.order == (1, 2, 3)
    assert [(e.parent, e.child, e.evidence) for e in stack.edges] == [
        (1, 2, (Evidence.ANCESTRY,)),
        (2, 3, (Evidence.PATCH_ID, Evidence.MARKER)),
    ]
    changes = load_changes(GitClone(repo), [3])
    assert {h.path for h in changes.hunks_of(3)} == {"pkg/c.py"}
    assert {h.path for h in changes.hunks_of(2)} == {"pkg/b.py"}
