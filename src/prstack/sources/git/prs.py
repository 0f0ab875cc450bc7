"""A clone's PRs (the user's, or the cache repository GitHub's PRs are fetched into) as an audit's PR source."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from prstack import progress
from prstack.models import Changes, HunkResult, Lineage
from prstack.sources.base import PRMetadata, RepoHint
from prstack.sources.git.changes import ChangesLoad, StackChanges, start_changes
from prstack.sources.git.detect import read_graph
from prstack.sources.git.held import after_merge
from prstack.sources.git.repo import GitClone
from prstack.sources.github.repo_id import repo_from_git
from prstack.stack.graph import Stack
from prstack.targets.built_from import Contains

if TYPE_CHECKING:
    from prstack.placement.paths import PathMap
    from prstack.targets.base import Target


class ClonePRs:
    """The stack under `numbers` in the clone `git` (with GitHub's metadata where known; `base`:
    where PRs whose fork point cannot be found start)."""

    with_files = True

    def __init__(self, git: GitClone, numbers: Sequence[int], base: str | None = None,
                 metadata: Mapping[int, PRMetadata] | None = None) -> None:
        self.git, self.numbers, self.base, self.metadata = git, numbers, base, metadata
        self._paths: dict[str, list[str]] = {}
        self._load: ChangesLoad | None = None

    @cached_property
    def hint(self) -> RepoHint:
        """The clone's remote's OWNER/NAME and its folder's name (a cache repository's folder,
        `owner+name`, names the repository too)."""
        path = self.git.path
        found = repo_from_git(path, self.git.remote_urls)
        folder = path.name.removesuffix(".git")
        names = (folder, path.parent.name.rpartition("+")[2]) if "+" in path.parent.name else (folder,)
        return RepoHint(found.full_name if found else None, names)

    def load(self) -> ChangesLoad:
        """The stack, read once (a plan and the audit it runs share it)."""
        if self._load is None:
            progress.step("reading the stack and diffing its PRs")
            self._load = start_changes(self.git, self.numbers, self.base, self.metadata)
        return self._load

    def graph(self) -> Stack:
        """Which PR of the stack builds on which, and why (no diff read)."""
        return read_graph(self.git, self.numbers, self.metadata, self.git.resolve(self.base) if self.base else None)

    def repo_files(self, changes: Changes, target_files: Iterable[str]) -> list[str]:
        assert isinstance(changes, StackChanges)
        if changes.top_sha not in self._paths:
            self._paths[changes.top_sha] = self.git.objects.tree_paths(changes.top_sha)
        return self._paths[changes.top_sha]

    def file_at(self, rev: str, path: str) -> bytes | None:
        return self.git.objects.file_at(rev, path)

    def prefetch_files(self, keys: Iterable[tuple[str, str]]) -> None:
        self.git.objects.prefetch_files(keys)

    def tree_blobs(self, rev: str) -> list[tuple[str, str, int]]:
        return self.git.objects.tree_blobs(rev)

    @property
    def contains(self) -> Contains:
        return self.git.ancestry.contains

    @property
    def patch_contains(self) -> Contains:
        return self.git.ancestry.patch_contains

    def judged_by_history(self, changes: Changes, target: Target, pathmap: PathMap,
                          results: Sequence[HunkResult]) -> tuple[tuple[HunkResult, ...], Lineage | None] | None:
        """The merged PRs' hunks judged by lineage where the target can be placed in the clone's
        history (`prstack.sources.git.held.after_merge`)."""
        return after_merge(self.git, changes, target, pathmap, results) if isinstance(changes, StackChanges) else None
