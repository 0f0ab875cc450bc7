"""The stack's values: what is known of each PR, and the evidence and edges between PRs. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property, lru_cache

from prstack.models import Commit
from prstack.stack import markers


class Evidence(StrEnum):
    """Why prstack thinks one PR builds on another (the JSON strings of prstack.graph/1)."""

    ANCESTRY = "ancestry"
    """The parent's head is an ancestor of the child's head."""
    PATCH_ID = "patch-id"
    """The child holds copies of the parent's commits (`git patch-id --stable` or commit-id)."""
    EDITED_COPY = "edited-copy"
    """The child holds edited copies of every commit of the parent (same subjects and author,
    other patches): the parent was amended after the child was built."""
    BASE_BRANCH = "base-branch"
    """The child's base branch is the parent's head branch (PR metadata)."""
    MARKER = "marker"
    """A body or commit message names the parent ("depends on #N", ghstack/spr trailers)."""


class MatchKind(StrEnum):
    """How a parent commit was found inside the child."""

    SHA = "sha"
    PATCH_ID = "patch-id"
    COMMIT_ID = "commit-id"
    SUBJECT = "subject"
    """Same subject and author, other patch: an edited copy (counts only beside an exact match)."""


@dataclass(frozen=True)
class PRFacts:
    """What the source knows about one PR: the input of the graph."""

    number: int
    head: str
    fork_point: str
    """Where the PR's history leaves the default branch (merge base, or before its merge commit)."""
    commits: tuple[Commit, ...]
    """fork_point..head, oldest first."""
    own: tuple[Commit, ...]
    """The commits beyond its ancestor PRs' heads (all of `commits` when none is below it)."""
    patch_ids: Mapping[str, str] = field(default_factory=dict)
    """Commit sha -> `git patch-id --stable` (merge commits have none)."""
    paths: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Commit sha -> the paths it changes (to tell an edited copy from a namesake commit)."""
    reverts: Mapping[str, str] = field(default_factory=dict)
    """Commit sha -> the earlier commit of `commits` whose change it undoes exactly (its message
    names that commit as `git revert` writes it, and its diff reversed has that commit's patch-id)."""
    merge_bases: tuple[str, ...] = ()
    """Every merge base with the default branch when there are several (criss-cross merges, e.g. a
    release branch merged into both), `fork_point` first; empty when there is one."""
    merged: str | None = None
    """How it is in the default branch: 'ancestry', 'rebase', 'squash' (seen in the clone by
    patch-id), 'content' (every hunk of its own change applied in the default branch's files: a
    squash whose patch differs), or 'github' (only the PR metadata says so); None when it is not."""
    landed: str | None = None
    """For a merged PR: the default-branch commit that carries it (its head, or the copy)."""
    ref: str | None = None
    title: str | None = None
    body: str | None = None
    head_branch: str | None = None
    base_branch: str | None = None

    @property
    def fork_note(self) -> str | None:
        """Which of several merge bases `fork_point` is, and why (None with one merge base)."""
        if len(self.merge_bases) < 2:
            return None
        others = ", ".join(b[:12] for b in self.merge_bases[1:])
        return (
            f"{len(self.merge_bases)} merge bases with the default branch; fork point {self.fork_point[:12]} is "
            f"the newest by committer date (also {others}); the PR's own change is measured from the "
            "merge bases merged together (when they merge cleanly), so no change of theirs counts as its own"
        )

    def undone(self, shas: Iterable[str]) -> bool:
        """Whether the PR's own history reverts every one of these commits of it (and keeps each
        revert: a revert of the revert brings the change back), so its net change holds none of them."""
        if not self.reverts:
            return False  # (nothing reverted: no commit is cancelled)
        later = {c.sha: i for i, c in enumerate(self.commits)}
        by_target: dict[str, list[str]] = {}
        for revert, target in self.reverts.items():
            if later.get(revert, -1) > later.get(target, len(later)):
                by_target.setdefault(target, []).append(revert)

        def cancelled(sha: str) -> bool:  # (a revert comes after what it reverts: no cycle)
            return any(not cancelled(r) for r in by_target.get(sha, ()))

        wanted = list(shas)
        return bool(wanted) and all(cancelled(sha) for sha in wanted)

    @cached_property
    def copy_keys(self) -> frozenset[object] | None:
        """What a copy of one of its commits would share with it (see `may_hold_copies`)."""
        return _copy_keys(self.commits, self.paths)

    @cached_property
    def copy_keys_own(self) -> frozenset[object] | None:
        """The same for its own commits (all of them when none is known as its own)."""
        return _copy_keys(self.own or self.commits, self.paths)


@dataclass(frozen=True)
class CommitMatch:
    """A parent commit and its copy inside the child."""

    parent_sha: str
    child_sha: str
    how: MatchKind


@dataclass(frozen=True)
class Stale:
    """The child holds an old copy of its parent (range-diff style, matched by patch-id)."""

    lacks: tuple[str, ...]
    """Parent commits the child has no copy of (added or rewritten since the child was built)."""
    carries: tuple[str, ...]
    """Commits of the parent copy inside the child that the parent no longer has."""


@dataclass(frozen=True)
class StackEdge:
    """PR `child` builds directly on PR `parent`, and why prstack thinks so."""

    parent: int
    child: int
    evidence: tuple[Evidence, ...]
    tip: str
    """The commit of the child's history where the parent's part ends: the child's own change
    starts here (the parent's head, or the last commit of the parent's copy inside the child)."""
    markers: tuple[str, ...] = ()
    """Marker texts that name the parent, e.g. 'Depends on #40727'."""
    matches: tuple[CommitMatch, ...] = ()
    stale: Stale | None = None


@dataclass(frozen=True)
class Unconfirmed:
    """A marker names a parent but the content does not back it."""

    parent: int
    child: int
    markers: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class MissingParent:
    """A parent named by a marker or metadata whose PR ref the clone lacks."""

    number: int
    child: int
    markers: tuple[str, ...]
    fetch: str
    """The command that fetches it."""


def _copy_keys(commits: Sequence[Commit], paths: Mapping[str, frozenset[str]]) -> frozenset[object] | None:
    """What a copy of one of `commits` shares with it (see `may_hold_copies`); None: anything."""
    keys: set[object] = set()
    for c in commits:
        changed = paths.get(c.sha)
        if changed is None:
            return None
        keys.update(commit_keys(c))
        keys.add(changed)
    return frozenset(keys)


@lru_cache(maxsize=1 << 16)
def commit_keys(c: Commit) -> tuple[object, ...]:
    cid = markers.commit_id(c.message)
    return (c.sha, (c.subject, c.author)) + ((("commit-id", cid),) if cid is not None else ())
