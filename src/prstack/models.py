"""Frozen value types shared by every part of prstack: PRs, hunks, match results, reports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Literal, NamedTuple, Protocol


class HunkStatus(StrEnum):
    """What the target holds for one hunk. Values are the JSON strings of prstack.audit/1."""

    APPLIED = "applied"
    RELOCATED = "relocated"
    MISSING = "missing"
    PARTIAL = "partial"
    DIVERGED = "diverged"
    CONFLICT = "conflict"
    FILE_MISSING = "file-missing"
    NOT_SHIPPED = "not-shipped"
    UNVERIFIABLE = "unverifiable"

    @property
    def shipped(self) -> bool:
        """True when the hunk belongs to what the distribution ships (so it counts for exit codes)."""
        return self not in (HunkStatus.NOT_SHIPPED, HunkStatus.UNVERIFIABLE)

    @property
    def present(self) -> bool:
        """True when the hunk's change is in the target."""
        return self in (HunkStatus.APPLIED, HunkStatus.RELOCATED)


class PRState(StrEnum):
    """A PR's state: GitHub's (open, closed, merged), or its place in the stack (open, merged, stale)."""

    OPEN = "open"
    CLOSED = "closed"
    MERGED = "merged"
    """In the default branch: by ancestry, or every commit / the squashed change by patch-id."""
    STALE = "stale"
    """Built on an old copy of its parent (the parent was force-pushed since)."""


class TargetKind(StrEnum):
    """What kind of target an audit reads (the CLI flag that names it)."""

    INSTALLED = "installed"
    PYTHON = "python"
    SITE_PACKAGES = "site-packages"
    WHEEL = "wheel"
    TREE = "tree"
    IMAGE = "image"


class PRStatus(StrEnum):
    """Roll-up of a PR's hunks. Values are the JSON strings of prstack.audit/1."""

    APPLIED = "applied"
    MISSING = "missing"
    PARTIAL = "partial"
    NOT_SHIPPED = "not-shipped"


class FileChange(StrEnum):
    """How a diff changes one file."""

    MODIFIED = "modified"
    ADDED = "added"
    DELETED = "deleted"
    RENAMED = "renamed"
    MODE = "mode"
    BINARY = "binary"


LineKind = Literal[" ", "-", "+"]


class HunkLine(NamedTuple):
    """One line of a hunk body (a named tuple: diffs hold tens of thousands of them)."""

    kind: LineKind
    """' ' context, '-' removed, '+' added."""
    text: str
    """The line without its line ending."""


@dataclass(frozen=True)
class Hunk:
    """One hunk of a PR's own net change, with its provenance.

    File-level changes with no text body (pure renames, mode changes, binary files) are one
    Hunk each with empty `lines` and zero ranges, so nothing a PR changes is dropped."""

    pr: int
    """The PR whose own net change holds this hunk."""
    path: str
    """Repository path after the change (for a deleted file: the path it had)."""
    old_path: str | None
    """Repository path before the change; None for a new file."""
    change: FileChange
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: tuple[HunkLine, ...] = ()
    commits: tuple[str, ...] = ()
    """Commits that introduced this hunk's lines, oldest first (empty when unknown)."""
    old_blob: str | None = None
    """Git blob id of the file before the change, where the diff names it."""
    new_blob: str | None = None
    """Git blob id of the file after the change, where the diff names it."""
    symlink: bool = False
    """The file is a symbolic link (git mode 120000) on either side: its text is where it points."""
    unread: str | None = field(default=None, compare=False)
    """Set when the source could not read this file's change (the clone lacks its blobs): the
    command that fetches them. The hunk then stands for the whole file, unverifiable, not read."""
    taken_back: frozenset[str] = field(default=frozenset(), compare=False)
    """Lines (stripped) that a commit of the PR wrote in this file and a later one removed again,
    none of them added by the PR's net change of the file: back in a target, they tell that the
    commit that removed them is not there."""
    touched_by: tuple[str, ...] = field(default=(), compare=False)
    touched_above: tuple[str, ...] = field(default=(), compare=False)
    """Every commit of the PR (above: of the PRs built on it) that changed this file, oldest first, where
    the source knows them: the file a target holds may be as one of them left it, also one that wrote
    none of the hunk's lines (a later fix-up put its text back)."""

    @property
    def commit(self) -> str | None:
        """The commit that introduced most of the hunk (the last one of `commits`)."""
        return self.commits[-1] if self.commits else None

    @property
    def old_image(self) -> tuple[str, ...]:
        """The lines the hunk expects before it is applied (context and removed)."""
        return tuple(line.text for line in self.lines if line.kind != "+")

    @property
    def new_image(self) -> tuple[str, ...]:
        """The lines the hunk leaves behind (context and added)."""
        return tuple(line.text for line in self.lines if line.kind != "-")

    @property
    def added(self) -> tuple[str, ...]:
        return tuple(line.text for line in self.lines if line.kind == "+")

    @property
    def removed(self) -> tuple[str, ...]:
        return tuple(line.text for line in self.lines if line.kind == "-")

    def diff_text(self) -> str:
        """The hunk as unified-diff text, header included."""
        header = f"@@ -{self.old_start},{self.old_lines} +{self.new_start},{self.new_lines} @@"
        return "\n".join([header, *(line.kind + line.text for line in self.lines)])


@dataclass(frozen=True)
class Commit:
    """A commit of a PR's range."""

    sha: str
    parents: tuple[str, ...]
    subject: str
    author: str = ""
    message: str = ""
    """Full commit message (used for stack markers and trailers)."""
    committed: int = field(default=0, compare=False)
    """Committer time (Unix seconds; 0: unknown): tells an amended parent from a re-done copy."""
    authored: int = field(default=0, compare=False)
    """Author time (Unix seconds; 0: unknown): kept by a rebase, a cherry-pick and an amend."""
    tree: str = field(default="", compare=False)
    """The id of its tree ("": unknown): two commits with one tree hold the very same files."""


@dataclass(frozen=True)
class PullRequest:
    """A pull request as prstack knows it: where it starts and ends, and where it sits in a stack."""

    number: int
    head_sha: str
    base_sha: str
    """Where this PR's own net change starts: its parent PR's head, or its fork point."""
    title: str | None = None
    body: str | None = None
    state: PRState | None = None
    """Where the source knows it: open, merged or stale in the stack (GitHub's closed too)."""
    head_ref: str | None = None
    """The ref the head was read from (refs/pull/N/head) or the PR's head branch name."""
    base_ref: str | None = None
    """The branch the PR targets, where known."""
    depends_on: tuple[int, ...] = ()
    """PRs directly under this one in the stack."""
    merged: bool = False
    """True when the head is already in the default branch."""
    commits: tuple[Commit, ...] = ()
    patch: str | None = None
    """The patch file this PR was read from (`audit --patch`); None for a PR of a clone or GitHub."""
    pr_head: str | None = None
    """The PR's head where it differs from `head_sha`: the stack audited holds an older copy of
    the PR (force-pushed, rebased or merged since the PR above was built on it), whose tip is
    `head_sha`; the stack is judged as that history holds it."""
    own_base: str | None = None
    """Where the PR's own change is measured from when that is not `base_sha`: `base_sha` merged
    with the default branch (a tree or commit id), for a PR that merged the default branch since
    it forked, so that the default branch's changes are not counted as its own."""

    @property
    def change_base(self) -> str:
        """What the PR's own change is the diff from: `own_base`, else `base_sha`."""
        return self.own_base or self.base_sha


class Changes(Protocol):
    """A stack's PRs, bottom first, and each PR's own net hunks."""

    @property
    def prs(self) -> Sequence[PullRequest]: ...
    @property
    def hunks(self) -> Sequence[Hunk]: ...


@dataclass(frozen=True)
class MatchEvidence:
    """Why the matcher gave its verdict."""

    normalisation: str | None = None
    """Which normalisation made the match: None (exact), 'trailing-space', 'whitespace',
    'quotes', 'rewrapped'."""
    applied_lines: tuple[str, ...] = ()
    """Changed lines found in their post-change form (for partial)."""
    missing_lines: tuple[str, ...] = ()
    """Changed lines not found in their post-change form (for partial)."""
    found_text: tuple[str, ...] = ()
    """The target lines at the place the verdict was made."""
    note: str | None = None
    """A sentence on anything else the user should know (e.g. 'file identical to PR head')."""


@dataclass(frozen=True)
class Rewrite:
    """The later change that rewrote a hunk's lines: a later PR of the audited stack (the hunk is
    judged through it), or an upstream commit after the PR merged."""

    pr: int | None
    """The PR of the rewrite (None: an upstream commit whose PR is unknown)."""
    commit: str | None
    upstream: bool = False
    """True for an upstream commit after the PR merged; False for a later PR of the audited stack."""


@dataclass(frozen=True)
class HunkResult:
    """The verdict for one hunk in one target."""

    hunk: Hunk
    status: HunkStatus
    installed_path: str | None = None
    """Where the target holds (or should hold) the hunk's file, relative to the target root."""
    found_path: str | None = None
    """Where the post-image was found (differs from installed_path when relocated)."""
    found_line: int | None = None
    """1-based line of the post-image's first line where it was found."""
    offset: int | None = None
    """found_line minus the line the diff expected."""
    fuzz: int | None = None
    """How many context lines had to be dropped to match."""
    evidence: MatchEvidence = field(default_factory=MatchEvidence)
    unread: bool = False
    """For an unverifiable hunk: its file was not read (refused or failed: a link leading out of
    the target, unreadable, over the size cap, damaged). What could not be read is not present:
    it fails the audit. False for a source compiled into a binary (unverifiable by design)."""
    superseded_by: Rewrite | None = None
    """The later PR (and commit) of the stack that rewrote the hunk's lines, if one did: the hunk
    counts as present when its lines are there as that rewrite leaves them."""


@dataclass(frozen=True)
class TargetInfo:
    """What is being audited."""

    kind: TargetKind
    """site-packages, wheel, tree or python (an --installed audit reads the running Python)."""
    path: str
    distribution: str | None = None
    version: str | None = None
    vcs_commit: str | None = None
    """The commit the build says it came from (direct_url.json or the version's +g<sha>)."""
    image: ImageInfo | None = None
    """For a container image: which image, platform and environment were read, and from which layers."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", TargetKind(self.kind))  # (a caller may name it by its string)


@dataclass(frozen=True)
class ImageInfo:
    """What an image audit read: the image by digest, its platform, the Python environment used."""

    digest: str
    """The manifest's digest (sha256:...); for a docker save tarball, the image ID (its config's digest)."""
    digest_kind: str
    """'manifest', or 'config' for a docker save tarball (which carries no manifest blob)."""
    platform: str | None
    """The platform whose manifest was read (linux/amd64...); None when the image names none."""
    platforms: tuple[str, ...]
    """Every platform a multi-platform image offers."""
    environment: str
    """The site directory audited, as a path in the image (/opt/venv/lib/python3.12/site-packages)."""
    environments: tuple[str, ...]
    """Every Python environment found in the image."""
    layers: tuple[str, ...]
    """The layers' digests, bottom first."""
    files: tuple[tuple[str, str], ...] = ()
    """(installed path, digest of the layer that last wrote it) of each file the audit read."""


@dataclass(frozen=True)
class PRReport:
    """One PR's roll-up in an audit."""

    pr: PullRequest
    status: PRStatus
    counts: dict[str, int]


@dataclass(frozen=True)
class MergeOutcome:
    """The result of picking one change onto a tree."""

    tree: str
    """The merged tree (with conflict markers in conflicted text files)."""
    conflicted: tuple[str, ...]
    """Paths git could not merge; empty when the pick is clean."""
    messages: tuple[str, ...] = ()
    """git's own 'CONFLICT (...)' lines."""


@dataclass(frozen=True)
class EditableSource:
    """Where an editable install's code really lives."""

    mechanism: str
    """'pep660-finder' (setuptools' __editable___*_finder.py), 'editables' (hatchling's
    redirector), 'pth' (a path line in a .pth file) or 'egg-link' (legacy setup.py develop)."""
    via: str
    """The file that says so, relative to the site directory (or its absolute path)."""
    roots: tuple[tuple[str, str], ...]
    """(installed prefix, absolute directory): 'kvserve' -> /src/kvserve for a package mapping,
    '' -> /src for a path entry (every top-level package found there)."""

    @property
    def source_dirs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(d for _, d in self.roots))

    def describe(self) -> str:
        dirs = ", ".join(self.source_dirs)
        return f"editable install: read from {dirs} ({self.mechanism} {PurePosixPath(self.via).name})"


@dataclass(frozen=True)
class Landed:
    """Where a merged PR's change entered upstream's history."""

    commit: str
    """The landing commit: the merge commit, the squash or last rebased commit, or the commit whose
    tree first held the change (by content)."""
    how: str
    """merge | squash | rebase | cherry-pick | content."""
    first_release: str | None = None
    """The earliest release (tag) holding the landing commit and not taking it back, where known."""
    taken_back_in: tuple[str, ...] = ()
    """Releases after `first_release` that took it back (a revert), oldest first."""


@dataclass(frozen=True)
class Placed:
    """How a target was tied to a point of upstream's history (or why it could not be)."""

    ref: str | None
    """The commit the target's files are taken to be from; None when it could not be placed."""
    how: str | None = None
    """build-commit | version-tag | content."""
    name: str | None = None
    """The tag's name (or the short commit) the target was placed at."""
    files_matched: int = 0
    files_compared: int = 0
    reason: str | None = None
    """Why the target was not placed (None when it was)."""


@dataclass(frozen=True)
class Lineage:
    """What lineage after merge adds to an audit of merged PRs."""

    placed: Placed
    """How the target was tied to history, or why it could not be."""
    landed: dict[int, Landed]
    """Each merged PR's landing (commit, how, first release)."""
