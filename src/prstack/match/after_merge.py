"""A merged PR's hunk judged by lineage: upstream holds the PR at the ref the target was placed at,
so the hunk is present as upstream's later commits left it (as written, rewritten, moved, deleted).
Pure: the history was read by the source (`prstack.sources.git.landing`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from prstack.models import HunkResult, HunkStatus, Rewrite


@dataclass(frozen=True)
class Since:
    """What became of a hunk's lines between the landing and the ref the target was placed at."""

    why: str
    """Why it counts as present: "0.28.0 holds the landing 1a2b3c4d5e; rewritten since by ..."."""
    rewrite: Rewrite | None = None
    """The upstream commit that rewrote, moved or deleted its lines (None: nothing did)."""
    moved_to: str | None = None
    """Where the target holds the file now (installed path), when a later commit moved it."""
    now: tuple[str, ...] = ()
    """The rewriting commit's diff lines ("-" and "+") that changed the hunk's lines."""


def held_upstream(result: HunkResult, since: Since) -> HunkResult:
    """`result` (the hunk judged by text) where the ref holds the PR's landing commit: present as
    judged, else present as the later commit left it (applied with `superseded_by` that commit, or
    relocated where the file was moved)."""
    if not result.status.shipped:
        return result
    if result.status.present and since.moved_to is None:
        return result
    if since.moved_to is not None:
        return replace(result, status=HunkStatus.RELOCATED, found_path=since.moved_to, found_line=None, fuzz=None,
                       offset=None, superseded_by=since.rewrite or result.superseded_by,
                       evidence=replace(result.evidence, note=since.why, found_text=since.now))
    return replace(result, status=HunkStatus.APPLIED, superseded_by=since.rewrite or result.superseded_by,
                   evidence=replace(result.evidence, note=since.why, found_text=since.now))


def taken_back(result: HunkResult, reverted_by: str) -> HunkResult:
    """A hunk of a PR that the ref took back, not present in the target: say which commit did."""
    if result.status.present or not result.status.shipped:
        return result
    note = f"taken back upstream by {reverted_by[:10]}"
    old = result.evidence.note
    return replace(result, evidence=replace(result.evidence, note=f"{old}; {note}" if old else note))
