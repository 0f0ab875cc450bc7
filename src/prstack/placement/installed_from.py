"""Which installed distribution is the audited PRs' project, by what its install records say. Pure.

A distribution installed from a PR's ref (PEP 610 direct_url.json), or from a clone that holds the
PRs, says where the PRs live; one installed from a repository, or built from a commit (`+g<sha>`),
says less. The strongest evidence wins; equally strong evidence for different projects is asked
about, naming only those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from packaging.utils import canonicalize_name

from prstack.errors import InputError, Option
from prstack.placement.forge import RepoId


@dataclass(frozen=True)
class InstallRecord:
    """What one distribution's records say of where it came from."""

    dist: str
    how: str
    """'vcs' (direct_url.json vcs_info), 'dir' (a local folder, editable or not) or 'version' (a
    `+g<sha>` local version)."""
    repo: RepoId | None = None
    """The repository the install names: the VCS URL's, the clone's remote, or for a `+g<sha>`
    build its one GitHub Project-URL."""
    requested_revision: str | None = None
    """direct_url.json's vcs_info.requested_revision (refs/pull/N/head, a branch, a tag)."""
    commit: str | None = None
    """The commit it was built from: vcs_info.commit_id, or the version's `+g<sha>`."""
    clone: str | None = None
    """The git clone it was installed from (a `file://` URL, an editable install's folder)."""
    clone_head: str | None = None
    """That clone's HEAD commit."""
    clone_prs: Mapping[int, str] = field(default_factory=dict)
    """Audited PR number -> head commit, for the PR refs the clone holds."""

    @property
    def source(self) -> str:
        """Where the PRs would be read from: the clone, else the repository."""
        return self.clone or (f"{self.repo.host}/{self.repo.full_name}" if self.repo else "")


class Strength(IntEnum):
    """How strongly a record names the audited PRs' project."""

    NONE = 0
    REPOSITORY = 1
    """Installed from a repository, or built from a commit of one; nothing ties it to the PRs."""
    CLONE_HOLDS_PRS = 2
    """Installed from a clone that holds every audited PR's ref."""
    NAMES_PR = 3
    """Installed from an audited PR's ref (refs/pull/N/head), or its clone's HEAD is that PR's head."""


@dataclass(frozen=True)
class Found:
    """The project found in the target: its distribution, where to read the PRs, and why."""

    dist: str
    repo: RepoId | None
    clone: str | None
    """A clone holding the PRs (read as --git reads one), or None to ask the repository."""
    reason: str
    """The evidence, e.g. 'vllm was installed from refs/pull/40898/head of github.com/vllm-project/vllm
    (its direct_url.json)'."""


def _pr_refs(number: int) -> frozenset[str]:
    return frozenset({f"refs/pull/{number}/head", f"pull/{number}/head", f"refs/pull/{number}/merge"})


Heads = Mapping[str, Mapping[int, tuple[str, str]]]
"""Where PRs are read from (InstallRecord.source) -> PR number -> (head commit, head branch), as
the repository says (GitHub asked about the PRs in each repository that is a candidate)."""


def at_pr_head(record: InstallRecord, heads: Mapping[int, tuple[str, str]]) -> tuple[int, str] | None:
    """(PR, how) when the record was built from a PR's head: its commit (a `+g<sha>` abbreviation
    too) is the head, or its requested revision is the PR's head branch."""
    commit, rev = (record.commit or "").lower(), record.requested_revision
    for number, (sha, branch) in sorted(heads.items()):
        if len(commit) >= 7 and sha.lower().startswith(commit):
            return number, f"#{number}'s head {sha[:9]}"
        if rev and branch and rev in (branch, f"refs/heads/{branch}"):
            return number, f"#{number}'s branch {branch}"
    return None


def strength(record: InstallRecord, numbers: Sequence[int], heads: Heads | None = None) -> tuple[Strength, str]:
    """How strongly `record` names the project of PRs `numbers`, and the evidence as what the
    distribution "was" ('was installed from refs/pull/2/head of github.com/acme/widget ...').
    `heads`: what the candidate repositories say of the PRs, when they were asked."""
    rev, clone = record.requested_revision, record.clone
    named = next((n for n in numbers if rev in _pr_refs(n)), None) if rev else None
    holds = bool(clone) and bool(numbers) and all(n in record.clone_prs for n in numbers)
    at_head = next((n for n in numbers if record.clone_head and record.clone_prs.get(n) == record.clone_head), None)
    where = record.source
    if named is not None and record.how == "vcs" and (record.repo or holds):
        return Strength.NAMES_PR, f"was installed from {rev} of {where} (its direct_url.json)"
    if holds and at_head is not None:
        return Strength.NAMES_PR, f"was installed from the clone {clone}, checked out at #{at_head}'s head"
    if holds:
        shown = ", ".join(f"#{n}" for n in numbers)
        return Strength.CLONE_HOLDS_PRS, f"was installed from the clone {clone}, which holds {shown}"
    if record.repo is None:
        return Strength.NONE, ""
    if heads and (hit := at_pr_head(record, heads.get(where, {}))) is not None:
        return Strength.NAMES_PR, f"was built from {hit[1]} of {where}"
    if record.how == "version":
        return Strength.REPOSITORY, f"was built from {record.commit} of {where} (its version)"
    if record.how == "dir":
        return Strength.REPOSITORY, f"was installed from the clone {clone} of {record.repo}"
    return Strength.REPOSITORY, f"was installed from {where} (its direct_url.json)"


def _ranked(records: Sequence[InstallRecord], numbers: Sequence[int], dist: str | None,
            heads: Heads | None) -> tuple[Strength, list[tuple[str, InstallRecord]]]:
    """The strongest evidence found, and the records (with their evidence) that have it, by name."""
    if dist is not None:
        records = [r for r in records if canonicalize_name(r.dist) == canonicalize_name(dist)]
    ranked = [(s, why, r) for r in records for s, why in [strength(r, numbers, heads)] if s is not Strength.NONE]
    if not ranked:
        return Strength.NONE, []
    best = max(s for s, _, _ in ranked)
    return best, sorted(((why, r) for s, why, r in ranked if s == best), key=lambda t: canonicalize_name(t[1].dist))


def worth_asking(records: Sequence[InstallRecord], numbers: Sequence[int], dist: str | None = None
                 ) -> list[InstallRecord]:
    """The records to ask the PRs' repositories about (whether they were built from a PR's head or
    branch) before asking the user: those tied on naming only a repository, when they disagree."""
    best, top = _ranked(records, numbers, dist, None)
    disagree = len({r.source for _, r in top}) > 1
    return [r for _, r in top if r.repo is not None] if best is Strength.REPOSITORY and disagree else []


def find_project(records: Sequence[InstallRecord], numbers: Sequence[int], dist: str | None = None,
                 heads: Heads | None = None) -> Found | None:
    """The distribution whose install records name the PRs' project most strongly (only `dist`
    when given), or None when no record names a project. Records of equal strength that agree on
    where the PRs are (one clone or one repository: a monorepo's distributions) are one answer;
    records of equal strength that disagree are asked about, naming only them. `heads`: what the
    repositories of `worth_asking`'s records said of the PRs."""
    best, top = _ranked(records, numbers, dist, heads)
    if not top:
        return None
    if len({r.source for _, r in top}) > 1:
        shown = "; ".join(f"{r.dist} {why}" for why, r in top)
        raise InputError(
            f"which project are the PRs of? {len(top)} installed distributions may be: {shown}; say which with ",
            Option("dist"), " NAME (or give ", Option("repo"), " OWNER/NAME or ", Option("git"), " PATH).")
    why, chosen = top[0]
    clone = chosen.clone if best >= Strength.CLONE_HOLDS_PRS else None
    return Found(chosen.dist, chosen.repo, clone, f"{chosen.dist} {why}")
