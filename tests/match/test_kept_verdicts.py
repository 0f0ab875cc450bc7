"""Several targets in one run: a file holding the same bytes as in a target judged before keeps that
target's verdicts (judged once), and every target's report is the one it gets alone."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from prstack.audit import audit, audit_targets
from prstack.demo.example import DemoBuild
from prstack.match.changes import TargetIndex, judge_changes
from prstack.match.jobs import KeptVerdicts
from prstack.models import HunkResult, HunkStatus
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets.base import TargetSpec, open_target


def _tree_at(demo: DemoBuild, rev: str, dest: Path) -> Path:
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(demo.repo.path), "archive", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


@pytest.fixture()
def trees(demo_build: DemoBuild, tmp_path: Path) -> list[Path]:
    """The stack's head; the same with one file at the stack's base (another build); the head again."""
    head = _tree_at(demo_build, demo_build.repo.heads[40898], tmp_path / "head")
    older = tmp_path / "older"
    shutil.copytree(head, older)
    runner = "src/kvserve/runner.py"
    base = subprocess.run(["git", "-C", str(demo_build.repo.path), "show", f"refs/heads/main:{runner}"],
                          capture_output=True, check=True).stdout
    (older / runner).write_bytes(base)
    again = tmp_path / "again"
    shutil.copytree(head, again)
    return [head, older, again]


@pytest.mark.slow
def test_each_target_of_a_run_gets_the_report_it_gets_alone(demo_build: DemoBuild, trees: list[Path]) -> None:
    specs = [TargetSpec("tree", str(t)) for t in trees]
    together = audit_targets(ClonePRs(GitClone(demo_build.repo.path), [40898]), specs)
    alone = [audit(ClonePRs(GitClone(demo_build.repo.path), [40898]), spec) for spec in specs]
    assert [r.results for r in together] == [r.results for r in alone]
    assert [r.all_present for r in together] == [True, False, True]


def test_a_file_with_the_same_bytes_keeps_its_verdicts_and_another_is_judged(
        demo_build: DemoBuild, trees: list[Path]) -> None:
    """Jobs run against a target with the same files: those whose file holds the bytes judged before
    give back the very verdicts kept; the file that differs is judged anew, and differently."""
    source = ClonePRs(GitClone(demo_build.repo.path), [40898])
    changes = source.load().finish()
    kept = KeptVerdicts()
    runs = []
    for tree in trees[:2]:
        target = open_target(TargetSpec("tree", str(tree)), (), ())
        index = TargetIndex.of(target, source.repo_files(changes, target.files()))
        runs.append(judge_changes(changes, target, source, index, None, kept))
    first, second = runs
    runner = [i for i, r in enumerate(first) if r.hunk.path == "src/kvserve/runner.py"]
    others = [i for i, r in enumerate(first) if r.hunk.path != "src/kvserve/runner.py" and r.status.present]
    assert runner and others
    assert all(second[i] is first[i] for i in others)
    assert all(second[i] is not first[i] for i in runner)
    assert any(not second[i].status.present for i in runner)


def _judged(source: ClonePRs, specs: list[TargetSpec], kept: KeptVerdicts | None) -> list[tuple[HunkResult, ...]]:
    changes = source.load().finish()
    runs = []
    for spec in specs:
        target = open_target(spec, sorted({h.path for h in changes.hunks}), source.repo_files(changes, ()))
        index = TargetIndex.of(target, source.repo_files(changes, target.files()))
        runs.append(judge_changes(changes, target, source, index, None, kept))
    return runs


def test_a_target_with_other_files_besides_keeps_the_verdicts_of_files_with_the_same_bytes(
        demo_build: DemoBuild, trees: list[Path]) -> None:
    """The verdicts kept are those of a file's bytes, whatever else the target holds: a target with
    one more module gets the very verdicts of the files it shares with the target judged before,
    and the report it gets alone."""
    head = trees[0]
    more = head.parent / "more"
    shutil.copytree(head, more)
    (more / "src/kvserve/extra.py").write_text("EXTRA = 1\n")
    source = ClonePRs(GitClone(demo_build.repo.path), [40898])
    specs = [TargetSpec("tree", str(head)), TargetSpec("tree", str(more))]
    first, second = _judged(source, specs, KeptVerdicts())
    assert all(a is b for a, b in zip(first, second, strict=True))
    assert second == _judged(source, specs[1:], None)[0]


def test_a_block_kept_as_missing_in_its_file_is_looked_for_again_in_the_other_files(
        demo_build: DemoBuild, trees: list[Path]) -> None:
    """A file with the same bytes as before keeps what its own text said, but its blocks not
    found there are looked for again among the target's other files: there, they moved."""
    older = trees[1]
    moved = older.parent / "moved"
    shutil.copytree(older, moved)
    (moved / "src/kvserve/moved.py").write_bytes((trees[0] / "src/kvserve/runner.py").read_bytes())
    source = ClonePRs(GitClone(demo_build.repo.path), [40898])
    specs = [TargetSpec("tree", str(older)), TargetSpec("tree", str(moved))]
    together = _judged(source, specs, KeptVerdicts())
    alone = [_judged(source, [spec], None)[0] for spec in specs]
    assert together == alone
    runner = [i for i, r in enumerate(alone[0]) if r.hunk.path == "src/kvserve/runner.py"]
    assert runner and all(together[0][i].status is HunkStatus.MISSING for i in runner)
    assert any(together[1][i].status is HunkStatus.RELOCATED for i in runner)
