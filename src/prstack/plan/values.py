"""The plan's values: onto-point, picks, conflicts, per-PR outcome, and the backend protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from prstack.models import Hunk, MergeOutcome, PullRequest, TargetInfo


class PlanStatus(StrEnum):
    """What happens to one PR in the plan. Values are the JSON strings of prstack.plan/1."""

    PRESENT = "present"
    """Already in the onto-point: nothing to pick."""
    CLEAN = "clean"
    """Its commits pick cleanly onto the onto-point plus the PRs before it."""
    CONFLICT = "conflict"
    """A pick conflicts (with the onto-point or with an earlier PR of the plan)."""
    BLOCKED = "blocked"
    """It builds on a PR that conflicts or is blocked, so it cannot go on."""


class OntoKind(StrEnum):
    """What a plan starts from."""

    REF = "ref"
    """--onto REF."""
    INSTALLED = "installed"
    """A target's build commit, or its files over a commit."""


@dataclass(frozen=True)
class Onto:
    """Where the plan starts."""

    kind: OntoKind
    name: str
    """What the user gave: the ref, or the target's path."""
    sha: str
    """The commit the picks go onto (for an installed target without a build commit: a throw-away
    commit holding the installed files over `start`)."""
    tree: str
    start: str
    """The real commit a script starts from (equals `sha` except for the throw-away case)."""
    target: TargetInfo | None = None
    note: str | None = None

    @property
    def label(self) -> str:
        """How reasons name it: the ref, the build commit, or the installed files."""
        if self.kind is OntoKind.REF:
            return self.name
        return f"the build commit {self.sha[:12]}" if self.sha == self.start else "the installed files"


@dataclass(frozen=True)
class Pick:
    """One step of the script: the change parent..commit, picked onto the plan's state."""

    parent: str
    commit: str
    subject: str = ""
    squash: bool = False
    """True when the PR's change is picked as one diff (it holds merge commits, or `paths`)."""
    paths: tuple[str, ...] = ()
    """When set, only these files' changes: re-applying what an installed target lacks."""


@dataclass(frozen=True)
class Known:
    """What is known of the PRs in the onto-point before planning, each with why."""

    present: Mapping[int, str] = field(default_factory=dict)
    """PRs known to be in it, whatever the planner's own checks say (an audit of the target)."""
    lacking: Mapping[int, Lack] = field(default_factory=dict)
    """PRs known to be missing from it (whatever its history says)."""
    held: Mapping[int, str] = field(default_factory=dict)
    """Merged PRs its history holds (lineage after merge): present where the planner's own
    checks (ancestry, patch-ids, the change reverse-applying) do not already say so."""


@dataclass(frozen=True)
class Lack:
    """What the audit of an installed target found missing of one PR."""

    hunks: int
    """How many shipped hunks are not there."""
    paths: tuple[str, ...]
    """The repository files holding them (old paths of renames included)."""

    def __str__(self) -> str:
        return f"the target lacks {self.hunks} of its shipped hunk(s), in {', '.join(self.paths)}"


@dataclass(frozen=True)
class Conflict:
    """Where one PR's pick does not merge."""

    path: str
    commit: str
    """The commit whose pick conflicts."""
    regions: tuple[tuple[int, int], ...]
    """1-based first and last lines of each conflict (markers included) in the merged file."""
    hunks: tuple[Hunk, ...]
    """The PR's own hunks in that file that do not fit the file it is picked onto."""
    with_onto: bool
    """True when the pick conflicts with the onto-point alone (plus the PR's own parents)."""
    with_prs: tuple[int, ...]
    """Earlier PRs of the plan that changed the file (and made or add to the conflict)."""
    message: str | None = None


@dataclass(frozen=True)
class PRPlan:
    """One PR's place and fate in the plan."""

    pr: PullRequest
    status: PlanStatus
    reason: str
    """One sentence: why present, what is picked, or what conflicts."""
    picks: tuple[Pick, ...] = ()
    """The picks the script does for this PR, in order (empty unless clean)."""
    redundant: tuple[str, ...] = ()
    """Commits whose change is already there (picking them changes nothing): left out."""
    conflicts: tuple[Conflict, ...] = ()
    blocked_by: tuple[int, ...] = ()


@dataclass(frozen=True)
class Plan:
    """The plan: onto-point, PRs in the order they go on, and the tree after the clean picks."""

    onto: Onto
    prs: tuple[PRPlan, ...]
    result_tree: str
    """The onto-point's tree with every clean PR picked."""

    @property
    def clean(self) -> bool:
        """True when nothing conflicts or is blocked (exit 0)."""
        return all(p.status in (PlanStatus.PRESENT, PlanStatus.CLEAN) for p in self.prs)

    @property
    def picks(self) -> tuple[Pick, ...]:
        return tuple(pick for p in self.prs for pick in p.picks)


class PlanBackend(Protocol):
    """The repository operations a plan needs (sources/gitplan.PlanGit plus GitClone)."""

    def pick(self, tree: str, parent: str, commit: str) -> MergeOutcome: ...
    def commit_tree(self, tree: str, parents: Sequence[str], message: str) -> str: ...
    def parents_of(self, commit: str) -> tuple[str, ...]: ...
    def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...
    def merge_base(self, a: str, b: str) -> str | None: ...
    def patch_id(self, base: str, head: str) -> str | None: ...
    def patch_ids(self, base: str, tip: str, paths: Sequence[str] = ()) -> dict[str, str]: ...
    def reverse_applies(self, treeish: str, base: str, head: str) -> bool: ...
    def restrict(self, base: str, head: str, paths: Sequence[str]) -> str: ...
    def file_at(self, treeish: str, path: str) -> bytes | None: ...


# -- pure helpers ---------------------------------------------------------------------------
