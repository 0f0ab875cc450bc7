"""Build metadata joined to the PR graph and the hunk verdicts: the header sentence and its red flags.

Pure: the git questions come in as callables, so this is tested with plain values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from prstack.models import HunkResult, PRReport, PRStatus
from prstack.targets.evidence import BuildEvidence

Contains = Callable[[str, str], bool | None]
"""(build commit, PR head or commit) -> True when the build commit contains it, False when not,
None when the answer is unknown (the build commit is not in the clone)."""


class Containment(StrEnum):
    """Whether the build commit holds a PR. Values are the JSON strings."""

    HEAD = "head"
    """The PR's head is an ancestor of the build commit."""
    PATCHES = "patch-equal"
    """Not the head, but patch-equal copies of every commit of the PR (a rebase or cherry-pick)."""
    NO = "no"
    UNKNOWN = "unknown"
    """No build commit, no clone, or the build commit is not in the clone."""

    @property
    def contained(self) -> bool | None:
        return {Containment.HEAD: True, Containment.PATCHES: True, Containment.NO: False}.get(self)


@dataclass(frozen=True)
class Disagreement:
    """Build metadata and hunk evidence contradict each other for one PR."""

    pr: int
    containment: Containment
    """What the build metadata says (via the build commit's history)."""
    status: PRStatus
    """What the hunks say."""
    cause: str
    """The likely cause, as a sentence."""
    files: tuple[str, ...] = ()
    """Installed files involved (the hunks not present, or the files not matching RECORD)."""

    def sentence(self) -> str:
        said = "contains" if self.containment.contained else "does not contain"
        found = {PRStatus.APPLIED: "present", PRStatus.PARTIAL: "only partly in the files"}.get(
            self.status, "missing from the files")
        return f"the build commit {said} #{self.pr}, but its hunks are {found}: {self.cause}"


@dataclass(frozen=True)
class BuildReport:
    """Build metadata beside the hunk evidence: what the report's header says."""

    evidence: BuildEvidence
    header: str
    """e.g. 'kvserve 0.3.0+g077986dfa, built from 077986dfa (direct_url: github.com/o/kvserve@077986dfa),
    which contains #40727 and #40898's heads'."""
    contains: Mapping[int, Containment] = field(default_factory=dict)
    disagreements: tuple[Disagreement, ...] = ()


def containment(build_commit: str | None, pr_head: str, pr_commits: Sequence[str],
                contains: Contains | None, patch_contains: Contains | None = None) -> Containment:
    """Does the build commit hold the PR: by ancestry of its head, else by patch-equal copies."""
    if build_commit is None or contains is None:
        return Containment.UNKNOWN
    answer = contains(build_commit, pr_head)
    if answer is None:
        return Containment.UNKNOWN
    if answer:
        return Containment.HEAD
    if patch_contains is not None and pr_commits:
        copies = [patch_contains(build_commit, c) for c in pr_commits]
        if all(copies):
            return Containment.PATCHES
    return Containment.NO


def _names(numbers: Sequence[int]) -> str:
    tags = [f"#{n}" for n in numbers]
    return tags[0] if len(tags) == 1 else ", ".join(tags[:-1]) + " and " + tags[-1]


def _heads(numbers: Sequence[int]) -> str:
    return _names(numbers) + ("'s head" if len(numbers) == 1 else "'s heads")


def where_from(ev: BuildEvidence) -> str:
    """The parenthetical that says where the build commit (or its absence) comes from."""
    bits = []
    d = ev.direct_url
    if d is not None and d.kind == "vcs":
        bits.append(f"direct_url: {d.shown}")
        if d.requested_revision and d.commit_id and not d.commit_id.startswith(d.requested_revision):
            bits.append(f"requested {d.requested_revision}")
    elif d is not None and d.kind == "archive":
        bits.append(f"direct_url: archive {d.url}")
    elif d is not None and d.kind == "dir":
        bits.append(f"direct_url: {'editable ' if d.editable else ''}directory {d.url}")
    from_checkout = ev.checkout_commit is not None and ev.build_commit == ev.checkout_commit
    if ev.version_commit and not (d and d.commit_id) and not from_checkout:
        bits.append("from the version's local part")
    if ev.commits_disagree:
        bits.append(f"but the version names g{ev.version_commit}")
    if ev.version is not None and ev.version.dirty_date:
        bits.append(f"tree with uncommitted changes, {ev.version.dirty_date}")
    if from_checkout:
        bits.append("the checkout's .git/HEAD")
    return f" ({'; '.join(bits)})" if bits else ""


def header_sentence(ev: BuildEvidence, fallback_name: str, contains: Mapping[int, Containment]) -> str:
    """'vllm 0.20.2.dev123+g3cfc8f8b7, built from 3cfc8f8b7 (direct_url: ...), which contains ...'."""
    version = ev.version.version if ev.version else ""
    text = f"{ev.distribution or fallback_name} {version}".strip()
    if ev.editable is not None:
        text += f", {ev.editable.describe()}"
    commit = ev.build_commit
    if commit is None and ev.distribution is None and ev.version is None:
        return text + ", no build commit recorded (no package metadata, not a git checkout)"
    if commit is None:
        return text + ", no build commit recorded (no direct_url.json vcs_info, no +g<sha> in the version)" + (
            where_from(ev)
        )
    text += f", built from {commit[:9]}{where_from(ev)}"
    if not contains:
        return text
    by = {state: [n for n, s in contains.items() if s is state] for state in Containment}
    if len(by[Containment.UNKNOWN]) == len(contains):
        return text + f", which is not in the clone, so whether it holds {_names(list(contains))} is unknown"
    held = []
    if by[Containment.HEAD]:
        held.append(_heads(by[Containment.HEAD]))
    if by[Containment.PATCHES]:
        held.append(f"patch-equal copies of {_names(by[Containment.PATCHES])}'s commits")
    parts = [f"which contains {' and '.join(held)}"] if held else []
    if by[Containment.NO]:
        lead = "but not " if held else "which does not contain "
        parts.append(lead + _heads(by[Containment.NO]))
    if by[Containment.UNKNOWN]:
        parts.append(f"{_names(by[Containment.UNKNOWN])} unknown")
    return text + ", " + ", ".join(parts)


def _cause_missing(ev: BuildEvidence, files: Sequence[str], how: Containment) -> tuple[str, tuple[str, ...]]:
    issues = ev.file_issues()
    touched = tuple(f for f in files if f in issues)
    if touched:
        return f"files changed after install ({'; '.join(f'{f}: {issues[f]}' for f in touched)})", touched
    if ev.version is not None and ev.version.dirty_date:
        return "the build was made from a tree with uncommitted changes, so it is not exactly that commit", ()
    if ev.editable is not None:
        return "the editable source directory differs from that commit (uncommitted or other checkout)", ()
    if ev.candidates:
        return f"another distribution ships the same files ({', '.join(ev.candidates)}) and may have replaced them", ()
    if how is Containment.PATCHES:
        return "the copies of its commits were changed again later in the build's history", ()
    return ("a later commit of the build rewrote or reverted these hunks (a conflict resolution?), "
            "or the files are from a different build than the metadata says"), ()


def _cause_present(ev: BuildEvidence, files: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    issues = ev.file_issues()
    touched = tuple(f for f in files if f in issues)
    if touched:
        return f"a python-only overlay: files changed after install ({', '.join(touched)})", touched
    if ev.editable is not None:
        return "the editable source directory holds the change, but not in the recorded commit", ()
    return ("the change came another way: a cherry-pick or rebase whose patches differ, or a python-only "
            "overlay copied over a different build"), ()


def disagreements(ev: BuildEvidence, prs: Sequence[PRReport], results: Sequence[HunkResult],
                  contains: Mapping[int, Containment]) -> tuple[Disagreement, ...]:
    """Each PR whose build-commit containment contradicts its hunk verdicts, with a likely cause."""
    out = []
    for p in prs:
        how = contains.get(p.pr.number, Containment.UNKNOWN)
        contradicts = (how.contained is True and p.status in (PRStatus.MISSING, PRStatus.PARTIAL)) or (
            how.contained is False and p.status is PRStatus.APPLIED)
        if not contradicts:
            continue
        mine = [r for r in results if r.hunk.pr == p.pr.number and r.status.shipped]
        if how.contained is True:
            files = tuple(dict.fromkeys(r.installed_path or r.hunk.path for r in mine if not r.status.present))
            cause, touched = _cause_missing(ev, files, how)
            out.append(Disagreement(p.pr.number, how, p.status, cause, touched or files))
        else:
            files = tuple(dict.fromkeys(r.found_path or r.installed_path or r.hunk.path for r in mine))
            cause, touched = _cause_present(ev, files)
            out.append(Disagreement(p.pr.number, how, p.status, cause, touched or files))
    return tuple(out)


def join_build(ev: BuildEvidence, fallback_name: str, prs: Sequence[PRReport], results: Sequence[HunkResult],
               contains: Contains | None = None, patch_contains: Contains | None = None) -> BuildReport:
    """The build metadata joined to the PRs: containment of each PR, the header, the red flags.

    `contains(build_commit, pr_head)` answers ancestry; `patch_contains(build_commit, commit)`
    answers whether a patch-equal copy of one PR commit is in the build's history. Without a
    clone, pass neither: the header then says only what the metadata says.
    """
    commit = ev.build_commit
    held = {
        p.pr.number: containment(commit, p.pr.head_sha, [c.sha for c in p.pr.commits], contains, patch_contains)
        for p in prs
    } if contains is not None else {}
    header = header_sentence(ev, fallback_name, held)
    return BuildReport(ev, header, held, disagreements(ev, prs, results, held))
