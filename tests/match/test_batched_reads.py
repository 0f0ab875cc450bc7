"""Several targets in one run: the files at the heads above a PR and at its earlier commits, which a
target's file that is not the head's is compared with, are read in batches (no git round trip per
file), and the verdicts are those judged reading them one by one."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path

from prstack.audit.same_content import RememberingSource
from prstack.demo.example import DemoBuild
from prstack.match.changes import TargetIndex, judge_changes
from prstack.match.jobs import FileKey, KeptVerdicts
from prstack.models import HunkResult
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets.base import TargetSpec, open_target


class _Asked(RememberingSource):
    """A run's source that notes each file asked for without having been named in a batch before."""

    def __init__(self, source: ClonePRs) -> None:
        super().__init__(source)
        self.batched: set[FileKey] = set()
        self.alone: list[FileKey] = []

    def prefetch_files(self, keys: Iterable[FileKey]) -> None:
        keys = list(keys)
        self.batched.update(keys)
        super().prefetch_files(keys)

    def file_at(self, rev: str, path: str) -> bytes | None:
        if (rev, path) not in self.batched:
            self.alone.append((rev, path))
        return super().file_at(rev, path)


def _run(demo: DemoBuild, tree: Path, batched: bool) -> tuple[tuple[HunkResult, ...], _Asked]:
    source = _Asked(ClonePRs(GitClone(demo.repo.path), [40898]))
    changes = source.load().finish()
    target = open_target(TargetSpec("tree", str(tree)), (), ())
    kept = KeptVerdicts(source.prefetch_files if batched else None)
    index = TargetIndex.of(target, source.repo_files(changes, target.files()))
    return judge_changes(changes, target, source, index, None, kept), source


def test_the_files_a_stale_file_is_compared_with_are_read_in_batches(demo_build: DemoBuild, tmp_path: Path) -> None:
    """A target whose files are those of the stack's first PR: its files are compared with the
    heads above and the PRs' commits, all of them read in batches with the run's batch read, one
    by one without it; the verdicts are the same."""
    repo = demo_build.repo
    tree = tmp_path / "first"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(repo.path), "archive", repo.heads[min(repo.heads)]],
                             capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    alone_results, alone = _run(demo_build, tree, batched=False)
    batched_results, batched = _run(demo_build, tree, batched=True)
    assert batched_results == alone_results
    assert len(alone.alone) >= 2  # (files compared: read one by one)
    assert batched.alone == []
