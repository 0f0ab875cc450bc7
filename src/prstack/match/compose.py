"""A stack as one composed change: each hunk carried forward through the later PRs built on it,
composed with the later hunks that rewrote its lines (pure: hunks in, hunks out).

A hunk of PR A states A's lines as they were at A's head. When a PR built on A rewrites some of
them, the top of the stack no longer holds A's image, yet A's change is in it as rewritten. The
composed hunk goes from A's base to the stack's last head over the same region: its old side is
what A started from, its new side what the stack leaves there. Judged present, A's change is
present as rewritten (`Composed.by` names the rewrite).

Coordinates: a hunk's new side counts lines of its PR's head; a later PR X built on that head
(X's base is it) counts its old side in the same lines, so the hunk is carried through X's hunks
of its file by position, and each of X's hunks with a change inside the hunk's span is composed
into it. X's old lines there must equal the hunk's new lines (else X was measured from another
tree, a merge of the default branch: the hunk is looked for a few lines off, then left alone).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import NamedTuple

from prstack.diff.plain import hunk_line
from prstack.match.splice import SLIP, LaterHunk, Line, change_spots, first_line, inside, through
from prstack.match.stack_shape import carried_pairs, chains_above
from prstack.models import FileChange, Hunk, PullRequest, Rewrite


@dataclass(frozen=True)
class Composed:
    """A hunk as the stack above it leaves it."""

    hunk: Hunk
    """The composed hunk: the original's PR, base and old side; new side at `head`'s lines."""
    head: str
    """The head whose file the composed hunk's new side counts lines of."""
    by: Rewrite
    """The latest change that rewrote the hunk's lines."""
    earlier: tuple[Composed, ...] = ()
    """The hunk as the stack left it after each earlier rewrite, oldest first (a target built
    from part of the stack holds one of these)."""


def compose_stack(prs: Sequence[PullRequest], hunks: Sequence[Hunk]) -> dict[int, Composed]:
    """Index in `hunks` -> the hunk composed with the later hunks of the stack that rewrote its
    lines, for the hunks some later PR rewrote. `prs` bottom-first; each PR's hunks in diff order.
    Asked again for the very same PRs and hunks (the next target of a run), the answer is given
    again, not composed anew."""
    key: tuple[PullRequest | Hunk, ...] = (*prs, *hunks)
    if _last and len(_last[0][0]) == len(key) and all(a is b for a, b in zip(_last[0][0], key, strict=True)):
        return dict(_last[0][1])
    out = _composed(prs, hunks)
    _last[:] = [(key, out)]
    return dict(out)


_last: list[tuple[tuple[PullRequest | Hunk, ...], dict[int, Composed]]] = []
"""The last stack composed, its objects held (so compared by identity) with its answer."""


def _composed(prs: Sequence[PullRequest], hunks: Sequence[Hunk]) -> dict[int, Composed]:
    by_pr: dict[int, dict[str, list[Hunk]]] = {}
    for h in hunks:
        for path in {h.path, h.old_path or h.path}:
            by_pr.setdefault(h.pr, {}).setdefault(path, []).append(h)
    by_number = {pr.number: pr for pr in prs}
    above = chains_above(prs)
    numbers_above = {n: {pr.number for pr in chain} for n, chain in above.items()}
    touching: dict[str, set[int]] = {}
    for number, paths in by_pr.items():
        for path in paths:
            touching.setdefault(path, set()).add(number)
    stack = _Stack(by_pr, carried_pairs(prs, hunks), touching)
    old_blobs = _old_blobs(by_pr)
    out: dict[int, Composed] = {}
    for i, h in enumerate(hunks):
        if not h.lines or h.change is FileChange.DELETED or h.pr not in by_number:
            continue
        if numbers_above[h.pr].isdisjoint(touching.get(h.path, ())):
            # no PR above changes the file: nothing to compose, unless the top's diff is from the
            # same base as this one's and so leaves the file as it was there
            kept = _same_base(h, above[h.pr], stack)
            if kept is not None:
                out[i] = kept
            continue
        if h.old_blob and not _starting_from(old_blobs, h.path, h.old_blob).isdisjoint(numbers_above[h.pr]):
            # a PR above diffs the file from the blob this hunk starts from: the diffs are not one
            # on another but each from the same base
            done = _same_base(h, above[h.pr], stack)
        else:
            done = _carry(h, by_number[h.pr], above[h.pr], stack)
        if done is not None:
            out[i] = done
    return out


class _OldBlobs(NamedTuple):
    """Path -> blob a hunk of the path starts from -> the PRs with such a hunk; and, as asked, per
    path and blob, the PRs with a hunk of the path starting from that same blob (abbreviated or not)."""

    of_path: dict[str, dict[str, set[int]]]
    same: dict[tuple[str, str], set[int]]


def _old_blobs(by_pr: dict[int, dict[str, list[Hunk]]]) -> _OldBlobs:
    out: dict[str, dict[str, set[int]]] = {}
    for number, paths in by_pr.items():
        for path, path_hunks in paths.items():
            for s in path_hunks:
                if s.old_blob:
                    out.setdefault(path, {}).setdefault(s.old_blob, set()).add(number)
    return _OldBlobs(out, {})


def _starting_from(old_blobs: _OldBlobs, path: str, blob: str) -> set[int]:
    """The PRs with a hunk of `path` starting from `blob`."""
    got = old_blobs.same.get((path, blob))
    if got is None:
        got = old_blobs.same[(path, blob)] = {number for other, numbers in old_blobs.of_path.get(path, {}).items()
                                              if _same_blob(other, blob) for number in numbers}
    return got


def _carry(h: Hunk, own: PullRequest, above: Sequence[PullRequest], stack: _Stack) -> Composed | None:
    """`h` carried through every later PR built on the PR the hunk is at (None: never rewritten,
    or the file deleted above it)."""
    lines: Sequence[Line] = h.lines
    start, path = first_line(h.new_start, h.new_lines), h.path
    old_first = first_line(h.old_start, h.old_lines)
    rewrite: Rewrite | None = None
    steps: list[tuple[str, Sequence[Line], int, int, str, Rewrite]] = []  # each rewrite's, made a hunk if kept
    span = _sides(lines)[1]
    at = 0  # the place in `above` to look on from (the PRs not changing the file leave it as it was)
    while (j := stack.next_changing(own.number, above, path, at)) is not None:
        pr = above[j]
        theirs = stack.steps(pr.number, path)
        if theirs.deleted:
            return None
        moved = through(lines, start, span, theirs.spans)
        if moved is None:
            return _same_base(h, above, stack) if j == 0 else None
        lines, start, before, by = moved
        if by is not None:
            span = _sides(lines)[1]
        old_first -= before
        path = theirs.renamed_to or path
        at = j + 1
        if by is not None:
            rewrite = Rewrite(pr.number, by.commit)
            steps.append((path, lines, old_first, start, pr.head_sha, rewrite))
    if rewrite is None:
        return _same_base(h, above, stack)
    head = above[-1].head_sha
    earlier = steps[:-1] if steps and steps[-1][4] == head else steps
    return Composed(_hunk_of(h, path, lines, old_first, start), head, rewrite,
                    tuple(Composed(_hunk_of(h, *step[:4]), step[4], step[5]) for step in earlier))


def _hunk_of(h: Hunk, path: str, lines: Sequence[Line], old_first: int, start: int) -> Hunk:
    """`h` with composed `lines`, its old side from line `old_first`, its new side from `start`."""
    old, new = _sides(lines)
    return replace(h, path=path, lines=tuple(map(hunk_line, lines)),
                   old_start=old_first if old else old_first - 1, old_lines=old,
                   new_start=start if new else start - 1, new_lines=new, new_blob=None)


def _sides(lines: Sequence[Line]) -> tuple[int, int]:
    """How many lines the old and the new side of `lines` count."""
    kinds = "".join(map(itemgetter(0), lines))
    return len(kinds) - kinds.count("+"), len(kinds) - kinds.count("-")


def _same_base(h: Hunk, above: Sequence[PullRequest], stack: _Stack) -> Composed | None:
    """A hunk of PRs whose diffs all start from the same base (patches as GitHub serves a fork's
    stacked PRs: each one holds the PRs under it too): how the last PR above that changes the file
    leaves the hunk's lines. Where its diff of the file starts from the same file (the same blob),
    its hunks over the hunk's lines are exactly what the stack did there (nothing, where none
    changes them: the stack undid the hunk). Else, its hunk whose old side holds the hunk's whole
    old side, a few lines off at most."""
    for pr, theirs in stack.telling(h, above):
        if not theirs:
            # a diff from the same tree that leaves the file as it was (for patches, only where
            # the target holds that diff: see match.changes, since a target without the stack
            # holds those lines too)
            return _kept_old(h, pr)
        if any(s.change is FileChange.DELETED for s in theirs):
            return None  # the file is gone: nothing of its lines is left to compose
        from_base = _from_same_file(h, theirs, pr)
        if from_base is not None:
            return from_base
        held = next((s for s in reversed(theirs) if _holds_old_side(s, h)), None)
        if held is not None:
            return Composed(replace(held, pr=h.pr, commits=h.commits), pr.head_sha, Rewrite(pr.number, held.commit))
    return None


class _Stack:
    """The stack's hunks by PR and path, and what is known of pairs (PR, PR above it)."""

    def __init__(self, by_pr: dict[int, dict[str, list[Hunk]]], carried: frozenset[tuple[int, int]],
                 touching: dict[str, set[int]]) -> None:
        self.by_pr = by_pr
        self.carried = carried
        """The upper diff carries the lower one (see `carried_pairs`)."""
        self._touching = touching
        """Path -> the PRs with hunks of it (at that path or from it)."""
        self._rank: dict[int, dict[int, int]] = {}
        self._changing: dict[tuple[int, str], list[int]] = {}
        self._same: dict[tuple[int, int], bool] = {}
        self._steps: dict[tuple[int, str], _Steps] = {}
        self._telling: dict[tuple[int, str, bool], tuple[tuple[PullRequest, tuple[Hunk, ...]], ...]] = {}
        self._may_tell: dict[int, tuple[PullRequest, ...]] = {}
        """PR -> the PRs above it, top first, less the patches that carry nothing of it."""

    def same(self, low: int, up: int) -> bool:
        """Whether their diffs start from the same tree (see `_same_start`); told once per pair."""
        if (low, up) not in self._same:
            self._same[(low, up)] = _same_start(self.by_pr.get(low, {}), self.by_pr.get(up, {}))
        return self._same[(low, up)]

    def telling(self, h: Hunk, above: Sequence[PullRequest]) -> tuple[tuple[PullRequest, tuple[Hunk, ...]], ...]:
        """The PRs `above` `h`'s PR (its chain), top first, that may tell how the stack leaves `h`'s
        lines (see `_same_base`), each with its hunks of `h`'s file: those changing the file, and
        for a modified file those whose diff starts from the same tree and leaves the file as it
        was (no hunks). Patches that carry nothing of `h`'s: siblings from the same base, left out."""
        modified = h.change is FileChange.MODIFIED
        key = (h.pr, h.path, modified)
        if key not in self._telling:
            if h.pr not in self._may_tell:
                self._may_tell[h.pr] = tuple(pr for pr in reversed(above)
                                             if pr.head_sha or (h.pr, pr.number) in self.carried)
            out = []
            for pr in self._may_tell[h.pr]:
                theirs = tuple(s for s in self.by_pr.get(pr.number, {}).get(h.path, ()) if s.lines)
                if theirs or (modified and pr.head_sha and self.same(h.pr, pr.number)):
                    out.append((pr, theirs))
            self._telling[key] = tuple(out)
        return self._telling[key]

    def next_changing(self, own: int, above: Sequence[PullRequest], path: str, at: int) -> int | None:
        """The place in `above` (PR `own`'s chain) of the first PR from place `at` on with hunks of
        `path`, or None: a hunk is carried through only those (the others leave its lines as they are)."""
        places = self._changing.get((own, path))
        if places is None:
            rank = self._rank.get(own)
            if rank is None:
                rank = self._rank[own] = {pr.number: i for i, pr in enumerate(above)}
            places = self._changing[(own, path)] = sorted(
                i for number in self._touching.get(path, ()) if (i := rank.get(number)) is not None)
        k = bisect.bisect_left(places, at)
        return places[k] if k < len(places) else None

    def steps(self, number: int, path: str) -> _Steps:
        """PR `number`'s hunks of the file at `path` (its old path), as a hunk is carried through them."""
        if (number, path) not in self._steps:
            theirs = [s for s in self.by_pr[number][path] if (s.old_path or s.path) == path]
            spans = []
            for s in theirs:
                if s.lines:
                    first = first_line(s.old_start, s.old_lines)
                    spots = change_spots(s, first)
                    spans.append(LaterHunk(s, first, min(spots, default=None), max(spots, default=None),
                                           list(s.old_image)))
            self._steps[(number, path)] = _Steps(
                tuple(spans), any(s.change is FileChange.DELETED for s in theirs),
                next((s.path for s in theirs if s.change is FileChange.RENAMED), None))
        return self._steps[(number, path)]


class _Steps(NamedTuple):
    """A PR's hunks of one file, as a hunk is carried through them."""

    spans: tuple[LaterHunk, ...]
    deleted: bool
    """The PR deletes the file."""
    renamed_to: str | None
    """Where the PR moves the file, if it does."""


def _holds_old_side(s: Hunk, h: Hunk) -> bool:
    """Whether the later hunk `s` (from the same base as `h`) covers `h`'s whole old side (for a
    new file: is the same new file)."""
    if h.old_path is None:
        return s.old_path is None and s.path == h.path
    old = [t for k, t in h.lines if k != "+"]
    first, at = first_line(h.old_start, h.old_lines), first_line(s.old_start, s.old_lines)
    if not old or not at - SLIP <= first <= at + s.old_lines + SLIP:
        return False
    mine = [t for k, t in s.lines if k != "+"]
    return any(mine[i : i + len(old)] == old and abs(at + i - first) <= SLIP
               for i in range(len(mine) - len(old) + 1) if mine[i] == old[0])


def _from_same_file(h: Hunk, theirs: Sequence[Hunk], pr: PullRequest) -> Composed | None:
    """`h`'s lines as a later PR's diff of the file (`theirs`) leaves them, where that diff starts
    from `h`'s own old blob, so that both count the same lines: the later hunks whose changes fall
    among `h`'s lines (and among theirs, and so on), composed over the lines they and `h` cover.
    None when the blobs are not known to be the same, or the diffs disagree about a line."""
    if not h.old_blob or h.change is not FileChange.MODIFIED or h.old_path != h.path:
        return None
    if not all(s.old_blob and _same_blob(s.old_blob, h.old_blob) and s.path == h.path
               and s.change is FileChange.MODIFIED for s in theirs):
        return None
    base: dict[int, str] = {}  # line -> text, of the file both diffs start from

    def learn(s: Hunk) -> bool:
        pos = first_line(s.old_start, s.old_lines)
        for kind, text in s.lines:
            if kind != "+":
                if base.setdefault(pos, text) != text:
                    return False
                pos += 1
        return True

    if not learn(h):
        return None
    lo, hi = first_line(h.old_start, h.old_lines), first_line(h.old_start, h.old_lines) + h.old_lines
    touching: list[Hunk] = []
    rest = list(theirs)
    while grown := [s for s in rest if inside(s, first_line(s.old_start, s.old_lines), lo, hi - lo)]:
        for s in grown:
            rest.remove(s)
            touching.append(s)
            if not learn(s):
                return None
            at = first_line(s.old_start, s.old_lines)
            lo, hi = min(lo, at), max(hi, at + s.old_lines)
    if any(p not in base for p in range(lo, hi)):
        return None
    removed: set[int] = set()
    put: defaultdict[int, list[str]] = defaultdict(list)
    for s in touching:
        pos = first_line(s.old_start, s.old_lines)
        for kind, text in s.lines:
            if kind == "+":
                put[pos].append(text)
            else:
                if kind == "-":
                    removed.add(pos)
                pos += 1
    lines: list[Line] = []
    for pos in range(lo, hi + 1):
        lines += [("+", t) for t in put.get(pos, ())]
        if pos < hi:
            lines.append(("-" if pos in removed else " ", base[pos]))
    before = [s for s in rest if max(change_spots(s, first_line(s.old_start, s.old_lines))) <= lo]
    shift = sum(s.new_lines - s.old_lines for s in before)
    by = Rewrite(pr.number, touching[-1].commit if touching else None)
    return Composed(_hunk_of(h, h.path, lines, lo, lo + shift), pr.head_sha, by)


def _same_start(lower: dict[str, list[Hunk]], upper: dict[str, list[Hunk]]) -> bool:
    """Whether two PRs' diffs start from the same tree, as far as their blobs tell: every file
    both change starts from the same blob in both (or is new in both), one of them at least from a
    blob."""
    shared = [(lower[path][0].old_blob, upper[path][0].old_blob) for path in lower.keys() & upper.keys()]
    known = [(a, b) for a, b in shared if a or b]
    return bool(known) and all(a and b and _same_blob(a, b) for a, b in known)


def _kept_old(h: Hunk, pr: PullRequest) -> Composed:
    """`h` undone by `pr`, whose diff starts from the same tree and leaves the file as it was."""
    first = first_line(h.old_start, h.old_lines)
    return Composed(_hunk_of(h, h.path, [(" ", t) for k, t in h.lines if k != "+"], first, first),
                    pr.head_sha, Rewrite(pr.number, None))


def _same_blob(a: str, b: str) -> bool:
    """Whether two (possibly abbreviated) blob ids name the same blob."""
    n = min(len(a), len(b))
    return n >= 7 and a[:n] == b[:n]
