"""The commits of the PRs built on each PR of a stack that changed each of its files (`Hunk.touched_above`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from prstack.models import Commit, Hunk
from prstack.sources.git.repo import GitClone
from prstack.stack.graph import Stack


class TouchedAbove:
    """Per PR of the stack (by its position in `ranges`: each PR's number and its commits, in stack
    order) and path: the commits of the PRs built on it that changed the path, in stack order (the
    paths of the commits stack detection read are known already; the others read in one git
    process)."""

    def __init__(self, src: GitClone, stack: Stack, ranges: Sequence[tuple[int, Sequence[Commit]]]) -> None:
        known = {sha: paths for number, _ in ranges for sha, paths in stack.facts[number].paths.items()}
        shas = [c.sha for _, commits in ranges[1:] for c in commits]
        paths = {**known, **src.patches.paths([sha for sha in shas if sha not in known])} if shas else {}
        self._by_path: dict[str, list[tuple[int, str]]] = {}
        """Path -> (position in `ranges`, commit) of every commit above the first PR that changed it."""
        for at, (_, commits) in enumerate(ranges[1:], start=1):
            for c in commits:
                for path in paths.get(c.sha, ()):
                    self._by_path.setdefault(path, []).append((at, c.sha))
        below = [stack.below(number) for number, _ in ranges]
        self._above = [frozenset(up for up in range(at + 1, len(ranges)) if number in below[up])
                       for at, (number, _) in enumerate(ranges)]
        """Position in `ranges` -> the positions of the PRs built on it."""

    def of(self, at: int, path: str) -> tuple[str, ...]:
        """The commits of the PRs built on the PR at position `at` that changed `path`."""
        above = self._above[at]
        return tuple(sha for up, sha in self._by_path.get(path, ()) if up in above)

    def added(self, at: int, hunks: Sequence[Hunk]) -> list[Hunk]:
        """The hunks of the PR at position `at` with their `touched_above`."""
        return [replace(h, touched_above=touched) if (touched := self.of(at, h.path)) else h for h in hunks]
