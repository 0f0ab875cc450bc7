"""Matching shared with a helper process gives the verdicts of matching alone, and survives the
helper's death; the share is split by weight and never takes a file held in memory."""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
from pathlib import Path
from types import ModuleType

import pytest

from prstack.audit import audit, audit_stack
from prstack.matchjobs import SHARE_MIN_LINES, FileJob, MatchHelper, split_share
from prstack.models import FileChange, Hunk, HunkLine, HunkResult
from prstack.sources.git import GitSource
from prstack.sources.loader import load_stack
from prstack.targets.base import TargetSpec, open_target

BENCH = Path(__file__).resolve().parents[1] / "bench"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the helper is forked: Linux only")


def benchgen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchgen", BENCH / "benchgen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["benchgen"] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> object:
    """The bench's generator at a small scale: every status, relocations among them."""
    return benchgen().build(tmp_path_factory.mktemp("case") / "c", modules=120, units=8, prs=10,
                            files_per_pr=6, edits_per_file=4, big_mb=0)


def verdicts(results: tuple[HunkResult, ...]) -> list[tuple[object, ...]]:
    return [(r.hunk.pr, r.hunk.path, r.hunk.old_start, r.status, r.installed_path, r.found_path,
             r.found_line, r.offset, r.fuzz, r.evidence) for r in results]


@linux_only
def test_a_helper_gives_the_verdicts_of_matching_alone(case: object) -> None:
    source = GitSource(case.repo)  # type: ignore[attr-defined]
    spec = TargetSpec("tree", path=case.tree)  # type: ignore[attr-defined]
    numbers = case.numbers  # type: ignore[attr-defined]
    alone = audit_stack(source, numbers, spec, helper=False)
    changes = load_stack(source, numbers)
    target = open_target(spec, (), ())
    helper = MatchHelper.start(target, source.path, source.env)
    assert helper is not None
    try:
        shared = audit(changes.prs, changes.hunks, target, source.tree_paths(changes.top_sha),
                       source.file_at, source.prefetch_files, None, helper, source.holds)
    finally:
        helper.close()
    assert helper.answered > 0  # the helper judged a share of the files
    assert verdicts(shared.results) == verdicts(alone.results)
    truth = case.truth  # type: ignore[attr-defined]
    assert sum(t.status.value == "relocated" for t in truth.values()) >= 5
    relocated = [r for r in shared.results if r.status.value == "relocated"]
    assert relocated and all(r.found_path for r in relocated)  # found through the helper's index
    assert verdicts(audit_stack(source, numbers, spec, helper=True).results) == verdicts(alone.results)


@linux_only
def test_a_helper_that_dies_leaves_its_share_to_the_audit(case: object) -> None:
    source = GitSource(case.repo)  # type: ignore[attr-defined]
    spec = TargetSpec("tree", path=case.tree)  # type: ignore[attr-defined]
    numbers = case.numbers  # type: ignore[attr-defined]
    alone = audit_stack(source, numbers, spec, helper=False)
    changes = load_stack(source, numbers)
    target = open_target(spec, (), ())
    helper = MatchHelper.start(target, source.path, source.env)
    assert helper is not None and helper.pid is not None
    os.kill(helper.pid, signal.SIGKILL)
    try:
        shared = audit(changes.prs, changes.hunks, target, source.tree_paths(changes.top_sha),
                       source.file_at, source.prefetch_files, None, helper, source.holds)
    finally:
        helper.close()
    assert helper.answered == 0
    assert verdicts(shared.results) == verdicts(alone.results)


def job(name: str, lines: int, head_rev: str = "h") -> FileJob:
    hunk = Hunk(1, name, name, FileChange.MODIFIED, 1, lines, 1, lines,
                tuple(HunkLine(" ", f"line {i}") for i in range(lines)))
    return FileJob((hunk,), name, True, ("b", name), (head_rev, name))


def test_the_helper_s_share_is_half_the_weight_from_the_end_and_skips_held_files() -> None:
    jobs = [job(f"m{i}.py", 480) for i in range(10)]  # weight 500 each
    here, away = split_share(jobs, lambda key: False)
    assert away == [5, 6, 7, 8, 9] and here == [0, 1, 2, 3, 4]
    held = {("h", "m9.py"), ("b", "m7.py")}
    here, away = split_share(jobs, lambda key: key in held)
    assert away == [3, 4, 5, 6, 8] and 9 in here and 7 in here  # still half, held ones passed over
    small = [job("a.py", SHARE_MIN_LINES // 4), job("b.py", SHARE_MIN_LINES // 4)]
    assert split_share(small, lambda key: False) == ([0, 1], [])  # too little to be worth sending
