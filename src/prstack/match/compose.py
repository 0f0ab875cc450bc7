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

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple, TypeVar, cast

from prstack.models import FileChange, Hunk, HunkLine, LineKind, PullRequest, Rewrite

SLIP = 50
"""How far off (in lines) a later PR's hunk may sit from where the positions put it."""


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


_T = TypeVar("_T")


def _asked_again(question: str, of: Sequence[object], answer: Callable[[], _T]) -> _T:
    """`answer()`, or the answer given last to `question` when that was asked of the very same
    objects (a run asks several of these of one stack; each is quadratic in a series' patches)."""
    last = _answers.get(question)
    if last is not None and len(last[0]) == len(of) and all(a is b for a, b in zip(last[0], of, strict=True)):
        return cast(_T, last[1])
    out = answer()
    _answers[question] = (tuple(of), out)
    return out


_answers: dict[str, tuple[tuple[object, ...], object]] = {}
"""Per question, the objects it was last asked of (held, so compared by identity) and its answer."""


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
    stack = _Stack(by_pr, carried_pairs(prs, hunks))
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
        if h.old_blob and any(_same_blob(blob, h.old_blob) and not numbers.isdisjoint(numbers_above[h.pr])
                              for blob, numbers in old_blobs.get(h.path, {}).items()):
            # a PR above diffs the file from the blob this hunk starts from: the diffs are not one
            # on another but each from the same base
            done = _same_base(h, above[h.pr], stack)
        else:
            done = _carry(h, by_number[h.pr], above[h.pr], stack)
        if done is not None:
            out[i] = done
    return out


def _old_blobs(by_pr: dict[int, dict[str, list[Hunk]]]) -> dict[str, dict[str, set[int]]]:
    """Path -> blob a hunk of the path starts from -> the PRs with such a hunk."""
    out: dict[str, dict[str, set[int]]] = {}
    for number, paths in by_pr.items():
        for path, path_hunks in paths.items():
            for s in path_hunks:
                if s.old_blob:
                    out.setdefault(path, {}).setdefault(s.old_blob, set()).add(number)
    return out


def chains_above(prs: Sequence[PullRequest]) -> dict[int, tuple[PullRequest, ...]]:
    """PR -> the PRs built one on another from its head up: each one's change starts at the head
    of the one before (the first such PR in stack order where the stack branches)."""
    return dict(_asked_again("chains_above", prs, lambda: _chains_above(prs)))


def _chains_above(prs: Sequence[PullRequest]) -> dict[int, tuple[PullRequest, ...]]:
    on = _built_on_each(prs)
    first_up = {pr.number: next((up for up in on[pr.number] if up.number != pr.number), None) for pr in prs}
    out: dict[int, tuple[PullRequest, ...]] = {}
    numbers: dict[int, tuple[int, ...]] = {}
    for top in prs:
        # the PRs from `top` up to one whose chain is known (or the end), then their chains downwards:
        # a PR's chain is the one above it plus that one's chain, unless that chain comes back to it
        path: list[PullRequest] = []
        at: PullRequest | None = top
        while at is not None and at.number not in out and all(at.number != pr.number for pr in path):
            path.append(at)
            at = first_up[at.number]
        for own in reversed(path):
            up = first_up[own.number]
            if up is not None and up.number in numbers and own.number not in numbers[up.number]:
                out[own.number] = (up, *out[up.number])
            else:
                out[own.number] = _walked_chain(own, on)
            numbers[own.number] = tuple(pr.number for pr in out[own.number])
    return out


def _walked_chain(own: PullRequest, on: dict[int, list[PullRequest]]) -> tuple[PullRequest, ...]:
    """`own`'s chain (see `chains_above`), PR by PR."""
    chain, at, seen = [], own, {own.number}
    while (up := next((pr for pr in on[at.number] if pr.number not in seen), None)) is not None:
        chain.append(up)
        seen.add(up.number)
        at = up
    return tuple(chain)


def stacked_above(prs: Sequence[PullRequest]) -> dict[int, tuple[PullRequest, ...]]:
    """PR -> every PR of the stack that builds on it, directly or not (by `depends_on`: on its head,
    or on a copy of its commits; or by its change starting at the PR's head), the top first. Each
    one's head holds the PR's change as the stack left it there, even where the stack's line
    positions cannot carry a hunk up to it."""
    return dict(_asked_again("stacked_above", prs, lambda: _stacked_above(prs)))


def _stacked_above(prs: Sequence[PullRequest]) -> dict[int, tuple[PullRequest, ...]]:
    order = {pr.number: i for i, pr in enumerate(prs)}
    on: dict[int, list[PullRequest]] = {}
    for below, ups in _built_on_each(prs).items():
        on[below] = [pr for pr in ups if pr.number != below]
    for pr in prs:
        for below in pr.depends_on:
            if pr not in on.setdefault(below, []):
                on[below].append(pr)
    out = {}
    for pr in prs:
        seen: dict[int, PullRequest] = {}
        todo = list(on.get(pr.number, ()))
        while todo:
            up = todo.pop()
            if up.number not in seen and up.number != pr.number:
                seen[up.number] = up
                todo.extend(on.get(up.number, ()))
        out[pr.number] = tuple(sorted(seen.values(), key=lambda p: -order[p.number]))
    return out


def _built_on_each(prs: Sequence[PullRequest]) -> dict[int, list[PullRequest]]:
    """PR -> the PRs whose change starts at its head (`_built_on`), in stack order; found through
    their bases and the PRs they name, not by trying every pair (a series of 300 patches)."""
    by_base: defaultdict[str, list[PullRequest]] = defaultdict(list)
    by_named: defaultdict[int, list[PullRequest]] = defaultdict(list)
    for pr in prs:
        by_base[pr.base_sha].append(pr)
        for below in dict.fromkeys(pr.depends_on):
            by_named[below].append(pr)
    return {below.number: [pr for pr in (by_base.get(below.head_sha, []) if below.head_sha
                                         else by_named.get(below.number, [])) if _built_on(pr, below)]
            for below in prs}


def _built_on(pr: PullRequest, below: PullRequest) -> bool:
    """Whether `pr`'s change starts at `below`'s head (patches, which name no commits, by the
    order they were given in)."""
    return pr.base_sha == below.head_sha and (bool(below.head_sha) or below.number in pr.depends_on)


def _carry(h: Hunk, own: PullRequest, above: Sequence[PullRequest], stack: _Stack) -> Composed | None:
    """`h` carried through every later PR built on the PR the hunk is at (None: never rewritten,
    or the file deleted above it)."""
    lines: list[Line] = [(k, t) for k, t in h.lines]
    start, path, at = _first(h.new_start, h.new_lines), h.path, own
    old_first = _first(h.old_start, h.old_lines)
    rewrite: Rewrite | None = None
    steps: list[Composed] = []
    span = sum(1 for k, _ in lines if k != "-")
    by_pr = stack.by_pr
    for pr in above:
        mine = by_pr.get(pr.number)
        if mine is None or path not in mine:  # (the file as it was: nothing moves)
            at = pr
            continue
        theirs = stack.steps(pr.number, path)
        if theirs.deleted:
            return None
        moved = _through(lines, start, span, theirs.spans)
        if moved is None:
            return _same_base(h, above, stack) if at is own else None
        lines, start, before, by = moved
        if by is not None:
            span = sum(1 for k, _ in lines if k != "-")
        old_first -= before
        path = theirs.renamed_to or path
        at = pr
        if by is not None:
            rewrite = Rewrite(pr.number, by.commit)
            steps.append(Composed(_hunk_of(h, path, lines, old_first, start), at.head_sha, rewrite))
    if rewrite is None:
        return _same_base(h, above, stack)
    last = Composed(_hunk_of(h, path, lines, old_first, start), at.head_sha, rewrite)
    return replace(last, earlier=tuple(steps[:-1]) if steps and steps[-1].head == last.head else tuple(steps))


def _hunk_of(h: Hunk, path: str, lines: Sequence[Line], old_first: int, start: int) -> Hunk:
    """`h` with composed `lines`, its old side from line `old_first`, its new side from `start`."""
    old = sum(1 for k, _ in lines if k != "+")
    new = sum(1 for k, _ in lines if k != "-")
    return replace(h, path=path, lines=tuple(HunkLine(k, t) for k, t in lines),
                   old_start=old_first if old else old_first - 1, old_lines=old,
                   new_start=start if new else start - 1, new_lines=new, new_blob=None)


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

    def __init__(self, by_pr: dict[int, dict[str, list[Hunk]]], carried: frozenset[tuple[int, int]]) -> None:
        self.by_pr = by_pr
        self.carried = carried
        """The upper diff carries the lower one (see `carried_pairs`)."""
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

    def steps(self, number: int, path: str) -> _Steps:
        """PR `number`'s hunks of the file at `path` (its old path), as a hunk is carried through them."""
        if (number, path) not in self._steps:
            theirs = [s for s in self.by_pr[number][path] if (s.old_path or s.path) == path]
            spans = []
            for s in theirs:
                if s.lines:
                    first = _first(s.old_start, s.old_lines)
                    spots = _change_spots(s, first)
                    spans.append(_LaterHunk(s, first, min(spots, default=None), max(spots, default=None)))
            self._steps[(number, path)] = _Steps(
                tuple(spans), any(s.change is FileChange.DELETED for s in theirs),
                next((s.path for s in theirs if s.change is FileChange.RENAMED), None))
        return self._steps[(number, path)]


class _LaterHunk(NamedTuple):
    """A later hunk as `_through` meets it: the hunk, the first line its old side covers, the
    old-side positions of its first and last change (None: it changes nothing)."""

    hunk: Hunk
    first: int
    first_change: int | None
    last_change: int | None


class _Steps(NamedTuple):
    """A PR's hunks of one file, as a hunk is carried through them."""

    spans: tuple[_LaterHunk, ...]
    deleted: bool
    """The PR deletes the file."""
    renamed_to: str | None
    """Where the PR moves the file, if it does."""


def carried_pairs(prs: Sequence[PullRequest], hunks: Sequence[Hunk]) -> frozenset[tuple[int, int]]:
    """(PR, PR given after it) of PRs that name no heads (patches) where the later diff carries
    the earlier one: in some file, it adds at least half the lines the earlier one adds there (a
    stack's cumulative patch, which may rewrite some of them). Patches of siblings from one base
    carry nothing of each other: the file one of them leaves says nothing of the other's change."""
    rank, by_patch = _patches_added(prs, hunks)
    added: defaultdict[str, dict[int, set[str]]] = defaultdict(dict)
    for number, files in by_patch.items():
        for path, lines in files.items():
            added[path][number] = lines
    out: set[tuple[int, int]] = set()
    for by_pr in added.values():  # (per file: only the patches that change it meet)
        for low, lines in by_pr.items():
            out.update((low, up) for up, theirs in by_pr.items()
                       if rank[up] > rank[low] and lines and 2 * len(lines & theirs) >= len(lines))
    return frozenset(out)


def cumulative_pairs(prs: Sequence[PullRequest], hunks: Sequence[Hunk]) -> frozenset[tuple[int, int]]:
    """(patch, patch given after it) where the later diff is cumulative over the earlier one as a
    whole: it changes most of the earlier one's files, and of those where the earlier one adds
    lines, in at least half it adds at least half of them, at least MIN_CARRIED lines in all. Where
    a diff is that, a file of the earlier patch it does not name is as the later one's base had it
    (two unrelated patches can share a file and a few lines, not most of one's files)."""
    rank, added = _patches_added(prs, hunks)
    changing: defaultdict[str, list[int]] = defaultdict(list)
    for number, files in added.items():
        for path in files:
            changing[path].append(number)
    out = set()
    for low, files in added.items():
        # the later patches sharing more than half of this one's files (only those that share one meet)
        sharing = Counter(up for path in files for up in changing[path] if rank[up] > rank[low])
        for up, count in sharing.items():
            if 2 * count <= len(files):
                continue
            theirs = added[up]
            shared = [(lines, lines & theirs[path]) for path, lines in files.items() if lines and path in theirs]
            carried = sum(2 * len(both) >= len(lines) for lines, both in shared)
            if shared and 2 * carried >= len(shared) and sum(len(both) for _, both in shared) >= MIN_CARRIED:
                out.add((low, up))
    return frozenset(out)


def _patches_added(prs: Sequence[PullRequest],
                   hunks: Sequence[Hunk]) -> tuple[dict[int, int], dict[int, dict[str, set[str]]]]:
    """The patches' (PRs naming no head) places in the order given, and per patch and file the
    lines it adds (stripped, not blank)."""
    return _asked_again("_patches_added", (*prs, *hunks), lambda: _added_by_patch(prs, hunks))


def _added_by_patch(prs: Sequence[PullRequest],
                    hunks: Sequence[Hunk]) -> tuple[dict[int, int], dict[int, dict[str, set[str]]]]:
    rank = {pr.number: i for i, pr in enumerate(prs) if not pr.head_sha}
    added: defaultdict[int, defaultdict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for h in hunks:
        if h.pr in rank:
            added[h.pr][h.path].update(t.strip() for k, t in h.lines if k == "+" and t.strip())
    return rank, {number: dict(files) for number, files in added.items()}


MIN_CARRIED = 3
"""Lines a later diff must carry of an earlier one to count as cumulative over it (a line or two
in common is what two unrelated patches can share)."""


def _holds_old_side(s: Hunk, h: Hunk) -> bool:
    """Whether the later hunk `s` (from the same base as `h`) covers `h`'s whole old side (for a
    new file: is the same new file)."""
    if h.old_path is None:
        return s.old_path is None and s.path == h.path
    old = [t for k, t in h.lines if k != "+"]
    first, at = _first(h.old_start, h.old_lines), _first(s.old_start, s.old_lines)
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
        pos = _first(s.old_start, s.old_lines)
        for kind, text in s.lines:
            if kind != "+":
                if base.setdefault(pos, text) != text:
                    return False
                pos += 1
        return True

    if not learn(h):
        return None
    lo, hi = _first(h.old_start, h.old_lines), _first(h.old_start, h.old_lines) + h.old_lines
    touching: list[Hunk] = []
    rest = list(theirs)
    while grown := [s for s in rest if _inside(s, _first(s.old_start, s.old_lines), lo, hi - lo)]:
        for s in grown:
            rest.remove(s)
            touching.append(s)
            if not learn(s):
                return None
            lo, hi = min(lo, _first(s.old_start, s.old_lines)), max(hi, _first(s.old_start, s.old_lines) + s.old_lines)
    if any(p not in base for p in range(lo, hi)):
        return None
    removed: set[int] = set()
    put: defaultdict[int, list[str]] = defaultdict(list)
    for s in touching:
        pos = _first(s.old_start, s.old_lines)
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
    before = [s for s in rest if max(_change_spots(s, _first(s.old_start, s.old_lines))) <= lo]
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
    first = _first(h.old_start, h.old_lines)
    return Composed(_hunk_of(h, h.path, [(" ", t) for k, t in h.lines if k != "+"], first, first),
                    pr.head_sha, Rewrite(pr.number, None))


def _same_blob(a: str, b: str) -> bool:
    """Whether two (possibly abbreviated) blob ids name the same blob."""
    n = min(len(a), len(b))
    return n >= 7 and a[:n] == b[:n]


def _first(start: int, count: int) -> int:
    """The first line a side covers (a side with no lines names the line before it)."""
    return start if count else start + 1


Line = tuple[LineKind, str]


def _through(lines: list[Line], start: int, span: int,
             theirs: Sequence[_LaterHunk]) -> tuple[list[Line], int, int, Hunk | None] | None:
    """A hunk's lines (new side from line `start`) carried through one later PR's hunks of its file:
    (lines, new start in that PR's head, lines of the base the hunk grew by in front, the last of
    the later hunks composed in). None when a hunk of the later PR changes the span (`span` lines:
    the hunk's new side) but its old lines do not agree with the hunk's new ones."""
    delta, touching = 0, []
    for s, first, first_change, last_change in theirs:
        if last_change is not None and last_change < start:
            delta += s.new_lines - s.old_lines
        elif first_change is not None and first_change < start + span and _inside(s, first, start, span):
            touching.append((s, first))
    if not touching:
        return lines, start + delta, 0, None
    placed = []
    for s, first in touching:
        slip = _agreeing_slip(lines, start, s, first)
        if slip is None:
            return None
        placed.append((s, first + slip))
    composed, lo = _compose(lines, start, placed)
    return composed, lo + delta, max(0, start - lo), placed[-1][0]


def _change_spots(s: Hunk, first: int) -> list[int]:
    """Old-side positions of a hunk's changes: each removed line's, and for each run of added
    lines the position of the old line it goes before."""
    spots, pos = [], first
    for kind, _ in s.lines:
        if kind == "+":
            spots.append(pos)
        else:
            if kind == "-":
                spots.append(pos)
            pos += 1
    return spots


def _inside(s: Hunk, first: int, start: int, span: int) -> bool:
    """Whether a change of `s` falls inside the span [start, start+span): a removed line in it,
    or added lines between two of its lines (added just before or after the span are beside it)."""
    pos = first
    for kind, _ in s.lines:
        if kind == "+":
            if start < pos < start + span:
                return True
        else:
            if kind == "-" and start <= pos < start + span:
                return True
            pos += 1
    return False


def _agreeing_slip(lines: list[Line], start: int, s: Hunk, first: int) -> int | None:
    """How far `s` sits from `first` so that its old lines agree with the hunk's new lines where
    they meet: 0 when the positions hold, else the smallest slip within SLIP at which every old
    line of `s` meets one of the hunk's and agrees (a slip trusts content alone, so all of it);
    None if none."""
    mine = [t for k, t in lines if k != "-"]
    old = [t for k, t in s.lines if k != "+"]
    for slip in sorted(range(-SLIP, SLIP + 1), key=abs):
        at = first + slip - start
        lo, hi = max(0, -at), min(len(old), len(mine) - at)  # (the old lines that meet one of the hunk's)
        if lo >= hi or mine[at + lo:at + hi] != old[lo:hi]:
            continue
        if slip == 0 or hi - lo == len(old):
            return slip
    return None


def _compose(lines: list[Line], start: int, placed: Sequence[tuple[Hunk, int]]) -> tuple[list[Line], int]:
    """The hunk's lines composed with the later hunks `placed` (each with the line its old side
    starts at, in the lines the hunk's new side counts): (lines, the first line they cover there)."""
    text: dict[int, str] = {}
    mine: dict[int, LineKind] = {}  # intermediate position -> ' ' (in the base) or '+' (the hunk's own)
    gone: defaultdict[int, list[str]] = defaultdict(list)  # the hunk's removed lines, before position
    pos = start
    for kind, t in lines:
        if kind == "-":
            gone[pos].append(t)
        else:
            text[pos], mine[pos] = t, kind
            pos += 1
    theirs: dict[int, LineKind] = {}
    put: defaultdict[int, list[str]] = defaultdict(list)  # the later hunks' added lines, before position
    for s, first in placed:
        p = first
        for kind, t in s.lines:
            if kind == "+":
                put[p].append(t)
            else:
                text.setdefault(p, t)
                theirs[p] = kind
                p += 1
    positions = sorted(set(text) | set(gone) | set(put))
    lo, hi = positions[0], positions[-1]
    out: list[Line] = []
    for p in range(lo, hi + 1):
        out.extend(("-", t) for t in gone.get(p, ()))
        out.extend(("+", t) for t in put.get(p, ()))
        if p not in text:
            continue
        own, later = mine.get(p, " "), theirs.get(p, " ")
        if own == " ":
            out.append((" " if later == " " else "-", text[p]))
        elif later == " ":
            out.append(("+", text[p]))
    return out, lo
