"""A stack's shape as composing it asks: which PRs build on which (the chains above each PR, the PRs
stacked above it), which carry another's hunks, which patches are cumulative over which. Pure; each
answer kept for the stack it was last asked of."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

from prstack.models import Hunk, PullRequest

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
        on_path: set[int] = set()
        at: PullRequest | None = top
        while at is not None and at.number not in out and at.number not in on_path:
            path.append(at)
            on_path.add(at.number)
            at = first_up[at.number]
        for own in reversed(path):
            up = first_up[own.number]
            if up is not None and up.number in numbers and own.number not in numbers[up.number]:
                out[own.number] = (up, *out[up.number])
                numbers[own.number] = (up.number, *numbers[up.number])
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
    out: dict[int, tuple[PullRequest, ...]] = {}
    reached: dict[int, set[int]] = {}
    """PR -> the PRs reached from it (not itself), told so far."""
    for pr in reversed(prs):
        ups = on.get(pr.number, [])
        if all(up.number in reached for up in ups):
            # (those it builds on are told, as in a series, told from the top down): theirs, and them
            seen = {up.number for up in ups}.union(*(reached[up.number] for up in ups))
            seen.discard(pr.number)
        else:
            seen = set()
            todo = list(ups)
            while todo:
                up = todo.pop()
                if up.number not in seen and up.number != pr.number:
                    seen.add(up.number)
                    todo.extend(on.get(up.number, ()))
        reached[pr.number] = seen
        beyond = out.get(ups[0].number) if len(ups) == 1 else None
        if beyond is not None and len(seen) == len(beyond) + 1 and (
                not beyond or order[ups[0].number] < order[beyond[-1].number]):
            # (one PR built on it, every PR above that one after it in stack order, as in a series)
            out[pr.number] = (*beyond, ups[0])
        else:
            out[pr.number] = tuple(map(prs.__getitem__, sorted(map(order.__getitem__, seen), reverse=True)))
    return {pr.number: out[pr.number] for pr in prs}


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


def carried_pairs(prs: Sequence[PullRequest], hunks: Sequence[Hunk]) -> frozenset[tuple[int, int]]:
    """(PR, PR given after it) of PRs that name no heads (patches) where the later diff carries
    the earlier one: in some file, it adds at least half the lines the earlier one adds there (a
    stack's cumulative patch, which may rewrite some of them). Patches of siblings from one base
    carry nothing of each other: the file one of them leaves says nothing of the other's change."""
    return _asked_again("carried_pairs", (*prs, *hunks), lambda: _carried_pairs(prs, hunks))


def _carried_pairs(prs: Sequence[PullRequest], hunks: Sequence[Hunk]) -> frozenset[tuple[int, int]]:
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
            lines = {t.strip() for k, t in h.lines if k == "+"}
            lines.discard("")
            added[h.pr][h.path].update(lines)
    return rank, {number: dict(files) for number, files in added.items()}


MIN_CARRIED = 3
"""Lines a later diff must carry of an earlier one to count as cumulative over it (a line or two
in common is what two unrelated patches can share)."""
