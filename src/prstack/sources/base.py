"""The PR source interface: what an audit asks of wherever its PRs come from (a clone, GitHub's
PRs in the cache repository, patch files). `prstack.audit.judging` connects one to a target."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from prstack.match.changes import Revisions
from prstack.models import Changes, HunkResult, Lineage
from prstack.targets.built_from import Contains

if TYPE_CHECKING:
    from prstack.placement.paths import PathMap
    from prstack.targets.base import Target


class Loading(Protocol):
    """A stack being read: `ready` holds every hunk but those of huge files, still being diffed;
    `finish` (at once when `can_finish`) the whole stack."""

    @property
    def ready(self) -> Changes: ...
    @property
    def complete(self) -> bool: ...
    @property
    def can_finish(self) -> bool: ...
    def finish(self) -> Changes: ...


@dataclass(frozen=True)
class Loaded:
    """A stack read whole at once (`Loading` with nothing left to wait for)."""

    changes: Changes
    complete: bool = True
    can_finish: bool = True

    @property
    def ready(self) -> Changes:
        return self.changes

    def finish(self) -> Changes:
        return self.changes


@dataclass(frozen=True)
class RepoHint:
    """What a source says about the repository: which distribution is the project's when none
    ships the PRs' files (a PR of tests or docs)."""

    repo: str | None = None
    """OWNER/NAME, when known."""
    names: tuple[str, ...] = ()
    """Other names it goes by (a clone's folder)."""


class PRMetadata(Protocol):
    """What a metadata source (GitHub's PRMeta, or a PullRequest) says about a PR."""

    @property
    def title(self) -> str | None: ...
    @property
    def body(self) -> str | None: ...
    @property
    def head_ref(self) -> str | None: ...
    @property
    def base_ref(self) -> str | None: ...
    @property
    def state(self) -> str | None: ...


class PRSource(Revisions, Protocol):
    """Where an audit's PRs come from: the stack, what its repository says, and (as `Revisions`)
    the files at the PRs' revisions that judging reads."""

    @property
    def hint(self) -> RepoHint: ...

    def load(self) -> Loading:
        """Start reading the stack."""
        ...

    def repo_files(self, changes: Changes, target_files: Iterable[str]) -> Sequence[str]:
        """The repository's files at the top of the stack (where its paths map into a
        distribution); a source with no tree tells them from the PRs' paths and `target_files`."""
        ...

    @property
    def contains(self) -> Contains | None:
        """Whether a build commit holds a PR's head (the build's provenance); None: never known."""
        ...

    @property
    def patch_contains(self) -> Contains | None:
        """Whether a build commit holds patch-equal copies of a commit; None: never known."""
        ...

    def judged_by_history(self, changes: Changes, target: Target, pathmap: PathMap,
                          results: Sequence[HunkResult]) -> tuple[tuple[HunkResult, ...], Lineage | None] | None:
        """`results` with the hunks of the stack's merged PRs judged by where the target sits in the
        repository's history, and what that found; None: a source with no history to place it in."""
        ...
