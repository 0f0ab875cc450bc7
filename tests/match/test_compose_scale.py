"""The answers of the stack's composition that are shared or indexed for long stacks and series are
the ones a walk over every PR and every pair gives, on random stacks with branches and cycles."""

from __future__ import annotations

import random

from prstack.match.compose import compose_stack
from prstack.match.stack_shape import chains_above, cumulative_pairs, stacked_above
from prstack.models import FileChange, Hunk, HunkLine, PullRequest


def _walked_chains(prs: list[PullRequest]) -> dict[int, tuple[int, ...]]:
    """PR -> its chain, walked PR by PR: each next PR the first in stack order whose change starts
    at the head of the one before and that the chain has not passed yet."""
    on = {below.number: [pr for pr in prs if pr.base_sha == below.head_sha] for below in prs}
    out = {}
    for own in prs:
        chain, at, seen = [], own, {own.number}
        while (up := next((pr for pr in on[at.number] if pr.number not in seen), None)) is not None:
            chain.append(up.number)
            seen.add(up.number)
            at = up
        out[own.number] = tuple(chain)
    return out


def test_chains_above_are_the_walked_chains_with_branches_and_cycles() -> None:
    rng = random.Random(7)
    for _ in range(300):
        count = rng.randint(1, 12)
        # each PR starts at another's head (a stack, a branch, or a cycle back down) or at main
        prs = [PullRequest(number=n, head_sha=f"h{n}",
                           base_sha=f"h{rng.randint(1, count)}" if rng.random() < 0.8 else "main")
               for n in range(1, count + 1)]
        rng.shuffle(prs)
        chains = chains_above(prs)
        assert {n: tuple(pr.number for pr in chain) for n, chain in chains.items()} == _walked_chains(prs)


def test_the_chains_of_a_cycle_each_stop_before_coming_back() -> None:
    one = PullRequest(number=1, head_sha="h1", base_sha="h3")
    two = PullRequest(number=2, head_sha="h2", base_sha="h1")
    three = PullRequest(number=3, head_sha="h3", base_sha="h2")
    chains = chains_above([one, two, three])
    assert [pr.number for pr in chains[1]] == [2, 3]
    assert [pr.number for pr in chains[2]] == [3, 1]
    assert [pr.number for pr in chains[3]] == [1, 2]


def _patch_hunk(pr: int, path: str, added: list[str]) -> Hunk:
    lines = (HunkLine(" ", "context"), *(HunkLine("+", t) for t in added))
    return Hunk(pr, path, path, FileChange.MODIFIED, 1, 1, 1, 1 + len(added), lines)


def _cumulative_by_every_pair(prs: list[PullRequest], hunks: list[Hunk]) -> set[tuple[int, int]]:
    """`cumulative_pairs` by its definition, every pair of patches compared."""
    added: dict[int, dict[str, set[str]]] = {}
    for h in hunks:
        added.setdefault(h.pr, {}).setdefault(h.path, set()).update(t.strip() for t in h.added if t.strip())
    order = [pr.number for pr in prs]
    out = set()
    for low, files in added.items():
        for up, theirs in added.items():
            if order.index(up) <= order.index(low) or 2 * len(files.keys() & theirs.keys()) <= len(files):
                continue
            shared = [(lines, lines & theirs[path]) for path, lines in files.items() if lines and path in theirs]
            carried = sum(2 * len(both) >= len(lines) for lines, both in shared)
            if shared and 2 * carried >= len(shared) and sum(len(both) for _, both in shared) >= 3:
                out.add((low, up))
    return out


def test_cumulative_pairs_are_those_of_every_pair_compared() -> None:
    rng = random.Random(11)
    found = 0
    for _ in range(200):
        count = rng.randint(2, 9)
        prs = [PullRequest(number=n, head_sha="", base_sha="") for n in range(1, count + 1)]
        hunks = [_patch_hunk(pr.number, f"f{rng.randint(1, 4)}.py",
                             [f"line {rng.randint(1, 8)}" for _ in range(rng.randint(0, 6))])
                 for pr in prs for _ in range(rng.randint(1, 3))]
        expected = _cumulative_by_every_pair(prs, hunks)
        assert cumulative_pairs(prs, hunks) == expected
        found += bool(expected)
    assert found > 20  # (the random series hold cumulative pairs, not only none)


def test_a_series_asked_again_with_other_hunks_gets_their_answer() -> None:
    """The pair questions are answered again for the very same objects only: another series with
    equal PRs but other hunks is answered for its own hunks."""
    prs = [PullRequest(number=n, head_sha="", base_sha="") for n in (1, 2)]
    low = _patch_hunk(1, "a.py", ["one", "two", "three"])
    assert cumulative_pairs(prs, [low, _patch_hunk(2, "a.py", ["one", "two", "three", "four"])]) == {(1, 2)}
    assert cumulative_pairs(prs, [low, _patch_hunk(2, "a.py", ["five"])]) == frozenset()
    assert compose_stack(prs, [low]) == {}


def _walked_above(prs: list[PullRequest]) -> dict[int, tuple[int, ...]]:
    """PR -> every PR reached from it by PRs built on its head or naming it (`depends_on`), walked
    PR by PR, latest in stack order first."""
    on = {below.number: [pr for pr in prs if pr.number != below.number and (
        (below.head_sha and pr.base_sha == below.head_sha) or below.number in pr.depends_on)] for below in prs}
    place = {pr.number: i for i, pr in enumerate(prs)}
    out = {}
    for own in prs:
        seen, todo = set(), list(on[own.number])
        while todo:
            up = todo.pop()
            if up.number not in seen and up.number != own.number:
                seen.add(up.number)
                todo += on[up.number]
        out[own.number] = tuple(sorted(seen, key=lambda n: -place[n]))
    return out


def test_the_prs_stacked_above_are_the_walked_ones_with_branches_and_cycles() -> None:
    rng = random.Random(3)
    for _ in range(300):
        count = rng.randint(1, 12)
        series = rng.random() < 0.3  # (patches: no heads, each naming the one before or others)
        prs = [PullRequest(number=n, head_sha="" if series else f"h{n}",
                           base_sha="" if series else f"h{rng.randint(1, count)}" if rng.random() < 0.8 else "main",
                           depends_on=tuple(rng.sample(range(1, count + 1), rng.randint(0, min(2, count)))))
               for n in range(1, count + 1)]
        rng.shuffle(prs)
        above = stacked_above(prs)
        assert {n: tuple(pr.number for pr in ups) for n, ups in above.items()} == _walked_above(prs)
