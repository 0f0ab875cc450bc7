"""The upkeep's values: releases, each carried item's state, where its hunks landed, and its verdict."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from prstack.models import HunkResult, PullRequest


class Verdict(StrEnum):
    """What to do with a carried item on the candidate release. Values are prstack.upkeep/1's strings."""

    RETIRE = "retire"
    """Every shipped hunk is in the candidate: stop carrying it."""
    PARTLY_UPSTREAM = "partly-upstream"
    """Some shipped hunks are in the candidate; carry the rest."""
    KEEP = "keep"
    """None is in the candidate and every pre-image is there: it applies cleanly."""
    REBASE = "rebase"
    """Still needed, but a hunk's region diverged or is in conflict: it needs a person."""

    @property
    def settled(self) -> bool:
        """True when nobody needs to look at the item (the exit code is 0 when all are)."""
        return self in (Verdict.RETIRE, Verdict.KEEP)


class ItemState(StrEnum):
    """A carried item's state upstream."""

    OPEN = "open"
    MERGED = "merged"
    CLOSED = "closed"
    """Closed without being merged (only where the source knows it)."""
    UNKNOWN = "unknown"
    """A patch file that names no PR and holds nothing the default branch has."""


class MergedBy(StrEnum):
    """How a merged item reached the default branch."""

    ANCESTRY = "ancestry"
    """Its head is an ancestor of the default branch (a merge commit or a fast-forward)."""
    REBASE = "rebase"
    """Its commits are there by patch-id (rebased onto it)."""
    SQUASH = "squash"
    """Its whole change is there as one commit, by patch-id."""
    CONTENT = "content"
    """Every hunk is in the default branch's tree, whatever its history says."""
    GITHUB = "github"
    """Only GitHub's metadata says so."""


@dataclass(frozen=True)
class Release:
    """One upstream release: a tag of the clone, read as a tree (never checked out), or a wheel."""

    name: str
    """The tag's name (v1.2.0), or a wheel's version."""
    commit: str | None
    """The commit the tag points to (None: a release given as a wheel)."""
    wheel: str | None = None
    """The wheel file the release was read from, for a release given as a wheel."""


@dataclass(frozen=True)
class Landing:
    """Where a hunk is present across the releases, oldest first."""

    present: tuple[bool, ...]
    """Per release, in release order: whether its tree holds the hunk."""
    landed_in: str | None
    """The release from which on every release holds the hunk (None: the newest does not)."""
    first_seen: str | None
    """The first release that held it (differs from `landed_in` when it was reverted between)."""
    reverted_in: tuple[str, ...] = ()
    """Releases that lacked the hunk after an earlier one held it."""


@dataclass(frozen=True)
class HunkUpkeep:
    """One hunk of a carried item: its verdict in the candidate and its landing in the releases."""

    result: HunkResult
    """Its verdict in the candidate (status, where, evidence)."""
    landing: Landing
    commit: str | None = None
    """The upstream commit that brought it, where found (the first commit whose file holds it)."""

    @property
    def counted(self) -> bool:
        """Whether it counts for the verdict (shipped, and not unverifiable by design)."""
        return self.result.status.shipped


@dataclass(frozen=True)
class Item:
    """One carried PR or patch and what to do with it."""

    pr: PullRequest
    """The PR (for a patch: the PR it names, else its place in the series) as the source read it."""
    number: int | None
    """The PR number, None for a patch that names none."""
    patch: str | None
    """The patch file it was read from; None for a PR of a clone."""
    state: ItemState
    merged_by: MergedBy | None
    merge_commit: str | None
    """The default branch's commit that carries it (its head, or the copy), where known."""
    first_release: str | None
    """The earliest release whose tree holds every shipped hunk at once (later ones may lack some again)."""
    landing_note: str | None
    """How its hunks landed when that is not one release for all: different releases, a later
    release lacking some (taken back or rewritten), hunks not in the newest release."""
    verdict: Verdict
    hunks: tuple[HunkUpkeep, ...]
    note: str | None = None
    """The manifest's note for it."""

    @property
    def remaining(self) -> tuple[HunkUpkeep, ...]:
        """The shipped hunks the candidate lacks."""
        return tuple(h for h in self.hunks if h.counted and not h.result.status.present)


@dataclass(frozen=True)
class Candidate:
    """The release the user is moving to."""

    name: str
    """A ref of the clone, or the target's path."""
    kind: str
    """'ref' or the target's kind (wheel, site-packages, tree, ...)."""
    sha: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class UpkeepReport:
    """The upkeep of a carried set across the releases and against the candidate."""

    releases: tuple[Release, ...]
    candidate: Candidate
    items: tuple[Item, ...]

    @property
    def settled(self) -> bool:
        return all(item.verdict.settled for item in self.items)
