"""The verdicts settled as a stack leaves its files: ordered passes over every hunk's result, each a
function from the stack and the results to new results. Pure: they read only what they are given."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from prstack.match.stack_shape import chains_above, stacked_above
from prstack.models import FileChange, HunkResult, HunkStatus, MatchEvidence, PullRequest, Rewrite
from prstack.placement.paths import PathMap, Placement
from prstack.targets.evidence import BuildEvidence


@dataclass(frozen=True)
class StackView:
    """What the passes read beside the results: the stack's PRs (bottom first), the pairs of patches
    of which the upper one is cumulative over the lower, where the repository's paths land, and the
    target's files."""

    prs: Sequence[PullRequest]
    cumulative: frozenset[tuple[int, int]]
    pathmap: PathMap
    files: frozenset[str]


Pass = Callable[[StackView, Sequence[HunkResult]], list[HunkResult]]


def renames_done(stack: StackView, results: Sequence[HunkResult]) -> list[HunkResult]:
    """A rename is applied only where its old name is gone (see `_rename_done`)."""
    return [_rename_done(r, stack.pathmap, stack.files) for r in results]


def gone_later(stack: StackView, results: Sequence[HunkResult]) -> list[HunkResult]:
    """A hunk of a file the target lacks is present where a PR built on its own deletes the file
    or moves it away: the stack leaves no file there (patches name no heads to read that from)."""
    if not any(r.status is HunkStatus.FILE_MISSING for r in results):
        return list(results)
    above = chains_above(stack.prs)
    gone: dict[tuple[int, str], Rewrite] = {}
    for r in results:
        h = r.hunk
        if h.change is FileChange.DELETED or (h.change is FileChange.RENAMED and h.old_path and h.old_path != h.path):
            gone.setdefault((h.pr, h.old_path or h.path), Rewrite(h.pr, h.commit))
    out = []
    for r in results:
        by = next((gone[(pr.number, r.hunk.path)] for pr in reversed(above.get(r.hunk.pr, ()))
                   if (pr.number, r.hunk.path) in gone), None) if r.status is HunkStatus.FILE_MISSING else None
        if by is not None:
            r = replace(r, status=HunkStatus.APPLIED, superseded_by=by, evidence=replace(
                r.evidence, note=f"the file is gone at #{by.pr} (deleted or moved there), as in the target"))
        out.append(r)
    return out


def back_later(stack: StackView, results: Sequence[HunkResult]) -> list[HunkResult]:
    """A deletion not done where a PR built on its own (a clone's: it names its head) adds the file
    back: the stack leaves the file as that PR adds it, and where that hunk is present, so is the
    deletion, as rewritten by it."""
    above = stacked_above(stack.prs)
    added = {(r.hunk.pr, r.hunk.path): r for r in results if r.hunk.change is FileChange.ADDED}
    out = list(results)
    for i, r in enumerate(results):
        h = r.hunk
        if h.change is not FileChange.DELETED or r.status.present or not r.status.shipped:
            continue
        back = next((added[(pr.number, h.path)] for pr in above.get(h.pr, ()) if pr.head_sha
                     and (pr.number, h.path) in added), None)
        if back is not None and back.status.present:
            note = f"the file is back at #{back.hunk.pr} (added again there), as in the target"
            out[i] = replace(r, status=HunkStatus.APPLIED, superseded_by=Rewrite(back.hunk.pr, back.hunk.commit),
                             evidence=replace(r.evidence, note=note))
    return out


def left_by_cumulative(stack: StackView, results: Sequence[HunkResult]) -> list[HunkResult]:
    """Patches: a hunk of a file that the last patch cumulative over its own does not name is as
    that patch leaves the file, its base's: where the target holds every hunk of that patch, the
    stack took the hunk's change back (a child's history reverted it, deleted or moved its new
    file), as in the target. Only a hunk whose file is as before it (pre-change lines there) or,
    for a new file, not there."""
    cumulative = stack.cumulative
    if not cumulative:
        return list(results)
    names: defaultdict[int, set[str]] = defaultdict(set)
    held: dict[int, bool] = {}
    for r in results:
        names[r.hunk.pr].update(p for p in (r.hunk.path, r.hunk.old_path) if p)
        if r.status.shipped:
            held[r.hunk.pr] = held.get(r.hunk.pr, True) and r.status.present
    place = {pr.number: i for i, pr in enumerate(stack.prs)}
    lasts: dict[int, int] = {}
    """Patch -> the last patch in stack order cumulative over it."""
    for low, up in cumulative:
        if up in place and (low not in lasts or place[up] > place[lasts[low]]):
            lasts[low] = up
    out = list(results)
    for i, r in enumerate(results):
        h = r.hunk
        if not (r.status is HunkStatus.MISSING or (r.status is HunkStatus.FILE_MISSING and h.old_path is None)):
            continue
        last = lasts.get(h.pr)
        if last is None or not held.get(last) or names[last] & {h.path, h.old_path}:
            continue
        note = (f"#{last}'s diff, cumulative over this one, leaves the file as its base had it: the stack "
                "took this change back, as in the target")
        out[i] = replace(r, status=HunkStatus.APPLIED, superseded_by=Rewrite(last, None),
                         evidence=replace(r.evidence, note=note))
    return out


def removals_of_missing_lines(stack: StackView, results: Sequence[HunkResult]) -> list[HunkResult]:
    """A pure deletion of lines that the PR under it (its base is that PR's head) added is done
    only with them: where the hunks that added them are not present, the lines were never there
    to remove, and the deletion is missing with them (a branch that merged main takes back a line
    its parent's squash-merged copy dropped: in the parent's own tree it says nothing)."""
    prs = stack.prs
    under = {pr.number: below for pr in prs if pr.head_sha
             and (below := next((p for p in prs if p.head_sha == pr.base_sha and p is not pr), None)) is not None}
    if not under:
        return list(results)
    added: dict[tuple[int, str], dict[tuple[int, str], int]] = defaultdict(dict)
    """(PR, path) -> (line of its head, text) -> the result that added it."""
    for i, r in enumerate(results):
        line = r.hunk.new_start
        for kind, text in r.hunk.lines:
            if kind == "+":
                added[(r.hunk.pr, r.hunk.path)][(line, text)] = i
            if kind != "-":
                line += 1
    out = list(results)
    for i, r in enumerate(results):
        h, below = r.hunk, under.get(r.hunk.pr)
        if below is None or not r.status.present or not h.removed or h.added or h.old_path != h.path:
            continue
        theirs, line, by = added.get((below.number, h.path), {}), h.old_start, set()
        for kind, text in h.lines:
            if kind == "-":
                by.add(theirs.get((line, text), -1))
            if kind != "+":
                line += 1
        if -1 not in by and not all(results[j].status.present for j in by):
            note = f"the lines it removes came with #{below.number}'s change, which is not there"
            out[i] = replace(r, status=HunkStatus.MISSING, found_path=None, found_line=None, offset=None,
                             fuzz=None, evidence=replace(r.evidence, note=note))
    return out


def _rename_done(r: HunkResult, pathmap: PathMap, files: frozenset[str]) -> HunkResult:
    """A pure rename is applied only where the old name is gone too (git pairs identical files,
    empty __init__.py ones among them, by chance: the new name alone is no evidence). Nor is a
    rename with edits where the new name lands on the old name's file (a folder moved, judged
    against a target from before the move: the path map cannot tell the two apart)."""
    h = r.hunk
    if r.status is not HunkStatus.APPLIED or h.change is not FileChange.RENAMED or not h.old_path:
        return r
    old = pathmap.locate(h.old_path)
    if h.lines and old.installed_path != r.installed_path:
        return r
    if old.placement is Placement.SHIPPED and old.installed_path in files:
        return replace(r, status=HunkStatus.MISSING, found_path=None, evidence=replace(
            r.evidence, note=f"the old name {h.old_path} is still there (the rename is not done)"))
    return r


BEFORE_REWRITES: tuple[Pass, ...] = (renames_done,)
"""Passes over the hunks judged one by one, before the stack's rewrites are followed."""
AFTER_REWRITES: tuple[Pass, ...] = (gone_later, back_later, left_by_cumulative, removals_of_missing_lines)
"""Passes once rewrites are followed: a file a later PR deletes or moves, a deleted file a later PR adds
back, a patch's change a cumulative patch above takes back, a removal of lines that never came."""


def settled(passes: Sequence[Pass], stack: StackView, results: Sequence[HunkResult]) -> list[HunkResult]:
    """`results` through each of `passes` in turn."""
    out = list(results)
    for step in passes:
        out = step(stack, out)
    return out


def noted_by_build(results: Sequence[HunkResult], ev: BuildEvidence,
                   binary_for: Callable[[str], str | None] | None = None) -> tuple[HunkResult, ...]:
    """The last pass, which only annotates (a build's metadata never changes a verdict): a note where
    RECORD says the file changed after install, and naming the shipped binary of an unverifiable
    compiled source where it can be told."""
    issues = ev.file_issues()
    out = []
    for r in results:
        old = r.evidence.note or ""
        added = []
        path = r.found_path or r.installed_path
        if path and path in issues:
            added.append(f"{path}: {issues[path]}")
        if r.status is HunkStatus.UNVERIFIABLE and binary_for is not None and (binary := binary_for(r.hunk.path)):
            added.append(f"compiled into {binary}, which cannot be checked hunk by hunk")
        added = [note for note in added if note not in old]  # idempotent: flagging twice adds nothing
        if not added:
            out.append(r)
            continue
        evidence = r.evidence if r.evidence is not None else MatchEvidence()
        out.append(replace(r, evidence=replace(evidence, note="; ".join([old, *added] if old else added))))
    return tuple(out)
