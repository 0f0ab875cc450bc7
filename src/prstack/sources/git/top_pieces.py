"""A stack as its top's history holds it: the piece of that history each PR below the top is judged
by, where the top holds some only as copies; and each change of the stack counted under one PR."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from prstack.models import Commit, Hunk, PRState
from prstack.sources.git.repo import GitClone
from prstack.stack.graph import Stack


def held_by_top(src: GitClone, stack: Stack) -> tuple[Stack, dict[int, tuple[str | None, str]]]:
    """PR -> (start, head) of its change as the top of the stack holds it, when the top's history
    holds some PR below it only as a copy (a parent force-pushed, rebased or merged since the top
    was built on it): the top's commits are cut where each PR's copy ends (its head, the tip of its
    copy there, or its last commit's patch-id-equal copy), and each PR is judged by its piece
    (see `_pieces`; start None: where it starts anyway). The stack is then the top's history, every commit of it
    under one PR, and an open PR none of whose commits the top's history holds is left out: only
    content similarity tied it to the stack. Nothing changes when every PR below the top is in its
    history as it is (the ranges then are these pieces already)."""
    top = stack.order[-1]
    facts = stack.facts.get(top)
    below = set(stack.order[:-1])
    if facts is None or not below or not below <= stack.below(top):
        return stack, {}
    position = {c.sha: i for i, c in enumerate(facts.commits)}
    tips: dict[int, int] = {}
    for number in below:
        f = stack.facts.get(number)
        if f is None:
            continue
        if f.head in position:
            tips[number] = position[f.head]
        elif found := [position[e.tip] for e in stack.edges if e.parent == number and e.tip in position]:
            tips[number] = max(found)
    if all(facts.commits[at].sha == stack.facts[n].head for n, at in tips.items()) and len(tips) == len(below):
        return stack, {}
    own_start = position.get(stack.base_of(top) or "", len(facts.commits) - 1)
    for number in sorted(below - set(tips), key=stack.order.index):
        f = stack.facts.get(number)
        if f is None:
            continue
        ids = {pid for c in (f.own or f.commits) if (pid := f.patch_ids.get(c.sha)) is not None}
        lowest = max((tips[n] for n in stack.below(number) if n in tips), default=-1)
        # a copy below the top's own commits and above those of the PRs under it, or none
        found = [i for i, c in enumerate(facts.commits)
                 if lowest < i <= own_start and facts.patch_ids.get(c.sha) in ids]
        if found:
            tips[number] = max(found)
    away = {n for n in below - set(tips) if stack.states.get(n) is not PRState.MERGED}
    if away:
        stack = replace(stack, order=tuple(n for n in stack.order if n not in away))
    return stack, _pieces(src, stack, tips)


def _pieces(src: GitClone, stack: Stack, tips: dict[int, int]) -> dict[int, tuple[str | None, str]]:
    """PR -> (start, head) of its piece of the top's history, `tips` the positions there where each
    PR's part ends. A piece starts where the latest other pieces its history holds end (merged
    together where several do not hold one another), or a parent's part of it; with none there, at
    its own fork point (None), however many other PRs' pieces come before it in the top's history
    (a second stack merged in). A piece is empty where an earlier PR's piece ends at the same commit
    or a PR it builds on holds it (a stale PR whose copy the top holds only inside its parent's)."""
    top = stack.order[-1]
    commits = stack.facts[top].commits
    position = {c.sha: i for i, c in enumerate(commits)}
    heads = {number: commits[at].sha for number, at in tips.items()}
    empty: set[int] = set()
    first_at: set[int] = set()
    for number in sorted(tips, key=stack.order.index):
        if tips[number] in first_at or any(
                n in heads and n != number and src.ancestry.is_ancestor(heads[number], heads[n])
                for n in stack.below(number)):
            empty.add(number)
        first_at.add(tips[number])
    held: dict[int, tuple[str | None, str]] = {}
    for number in tips:
        head = heads[number]
        if number in empty:
            held[number] = (head, head)
            continue
        ends = {heads[n] for n in tips if n not in empty and heads[n] != head}
        ends |= {t for t in stack.tips_of(number) if t in position and t != head}
        inside = _last_pieces(src, [e for e in ends if src.ancestry.is_ancestor(e, head)])
        held[number] = (_merged(src, inside, position, commits) if inside else None, head)
    last = _last_pieces(src, [held[n][1] for n in tips])
    if last:
        held[top] = (_merged(src, last, position, commits), stack.facts[top].head)
    return held


def _merged(src: GitClone, ends: Sequence[str], position: dict[str, int], commits: Sequence[Commit]) -> str:
    """One end, or several (none holding another) merged together as the top's own merges resolved
    them; where git cannot merge them, the latest."""
    if len(ends) == 1:
        return ends[0]
    merges = [c.sha for c in commits if len(c.parents) > 1]
    return src.ancestry.merged_tips(sorted(ends), merges) or max(ends, key=position.__getitem__)


def _last_pieces(src: GitClone, ends: Sequence[str]) -> list[str]:
    """Of the pieces' last commits, those no other one's history holds."""
    ends = list(dict.fromkeys(ends))
    return [e for e in ends if not any(o != e and src.ancestry.is_ancestor(e, o) for o in ends)]


def counted_once(own: Sequence[Sequence[Hunk]], stack: Stack) -> list[Hunk]:
    """The PRs' own hunks (PR by PR, in stack order), each change once: where PRs of the stack have
    the same change (PRs sharing one head, or whose ranges hold the same commits), it is counted
    under the PR whose own commits hold its commit, else under the lowest of them."""
    by_place: defaultdict[tuple[object, ...], list[Hunk]] = defaultdict(list)
    for hunks in own:
        for h in hunks:
            by_place[(h.path, h.old_start, h.new_start)].append(h)
    carriers: defaultdict[tuple[object, ...], list[Hunk]] = defaultdict(list)
    kept: set[int] = set()
    for at_place in by_place.values():
        if len(at_place) == 1:  # (no other hunk where it is: its change is its own)
            kept.add(id(at_place[0]))
            continue
        for h in at_place:
            carriers[_change_of(h)].append(h)
    for same in carriers.values():
        prs = {h.pr for h in same}
        owner = next((n for h in same for c in h.commits if (n := stack.owner(c)) in prs), None)
        kept.add(id(next((h for h in same if h.pr == owner), same[0])))
    return [h for hunks in own for h in hunks if id(h) in kept]


def _change_of(h: Hunk) -> tuple[object, ...]:
    """What a hunk changes, whichever PR has it: its lines where they are and the commits that wrote
    them (two hunks of one file's lines can differ in its final newline alone); a change with no
    text, from which blob to which."""
    made = (h.commits,) if h.lines else (h.old_blob, h.new_blob, h.unread)
    return (h.path, h.old_path, h.change, h.old_start, h.old_lines, h.new_start, h.new_lines, h.lines, *made)
