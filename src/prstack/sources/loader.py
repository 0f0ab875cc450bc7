"""Load a stack of PRs from a git-backed source: heads, parents, fork points, net hunks, provenance."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from prstack.errors import InputError
from prstack.hunks import added_line_numbers, parse_diff, with_provenance
from prstack.models import Hunk, PullRequest
from prstack.sources.git import GitSource
from prstack.stack import Stack, build_stack


@dataclass(frozen=True)
class StackChanges:
    """Everything the audit needs from the source: PRs bottom-first and their own hunks."""

    prs: tuple[PullRequest, ...]
    hunks: tuple[Hunk, ...]
    stack: Stack
    default_ref: str
    top_sha: str
    """Head of the last PR in stack order (whose tree lists the repository's files)."""

    def hunks_of(self, number: int) -> list[Hunk]:
        return [h for h in self.hunks if h.pr == number]


def fork_point(src: GitSource, head: str, default: str) -> str:
    """Where a PR with no parent PR starts: its merge base with the default branch, or — when the
    head is already in the default branch through a merge commit — that merge's first parent's
    merge base with the head."""
    if src.is_ancestor(head, default):
        merge = src.merge_commit_bringing(head, default)
        base = src.merge_base(f"{merge}^1", head) if merge else None
        if base is None or base == head:
            raise InputError(
                f"the head {head[:12]} is already in {default} without a merge commit, so its fork "
                "point is unknown; give it with --base REF."
            )
        return base
    base = src.merge_base(head, default)
    if base is None:
        raise InputError(
            f"the head {head[:12]} shares no history with {default}; give the fork point with --base REF."
        )
    return base


def load_stack(src: GitSource, numbers: Sequence[int], base: str | None = None) -> StackChanges:
    """The PRs asked for and every unmerged PR they stack on, with each PR's own net hunks."""
    default = src.default_ref
    heads = {n: src.pr_head(n)[1] for n in numbers}
    ancestors: dict[int, set[int]] = {}
    todo = list(dict.fromkeys(numbers))
    while todo:
        number = todo.pop()
        below = src.pr_refs_between(heads[number], default)
        ancestors[number] = {n for n, sha in below.items() if n != number and sha != heads[number]}
        for n in ancestors[number]:
            if n not in heads:
                heads[n] = below[n]
                todo.append(n)
    stack = build_stack(list(numbers), ancestors)
    base_sha = src.resolve(base) if base else None
    prs: list[PullRequest] = []
    hunks: list[Hunk] = []
    for number in stack.order:
        head = heads[number]
        parents = stack.parents[number]
        merged = src.is_ancestor(head, default)
        if parents:
            start = heads[parents[-1]]
        else:
            start = base_sha or fork_point(src, head, default)
        commits = src.commits(start, head)
        own = parse_diff(src.diff(start, head), number)
        blame = _blame(src, start, head, own)
        own = with_provenance(own, blame, [c.sha for c in commits], partial(src.log_touching, start, head))
        hunks += own
        prs.append(
            PullRequest(
                number=number,
                head_sha=head,
                base_sha=start,
                state="merged" if merged else "open",
                head_ref=f"refs/pull/{number}/head",
                depends_on=parents,
                merged=merged,
                commits=commits,
            )
        )
    return StackChanges(tuple(prs), tuple(hunks), stack, default, heads[stack.order[-1]])


def _blame(src: GitSource, base: str, head: str, hunks: Sequence[Hunk]) -> dict[str, dict[int, str]]:
    ranges: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)
    for hunk in hunks:
        numbers = added_line_numbers(hunk)
        if numbers:
            ranges[hunk.path].append((numbers[0], numbers[-1] - numbers[0] + 1))
    return {path: src.blame_added(base, head, path, spans) for path, spans in ranges.items()}
