"""The PR heads' commits outside the default branch, read in one git log per batch and walked in memory."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Protocol

from prstack.models import Commit


class Clone(Protocol):
    """What the history asks git for when memory cannot answer (`GitClone` is one)."""

    def pipe(self, args: Sequence[str], data: str | bytes) -> bytes: ...
    def resolve(self, rev: str) -> str: ...
    def merge_base(self, a: str, b: str) -> str | None: ...
    def merge_bases(self, a: str, b: str) -> list[str]: ...
    def merge_base_octopus(self, commits: Sequence[str]) -> str | None: ...
    def commits_outside(self, head: str, default: str) -> tuple[Commit, ...]: ...
    def commits(self, base: str, head: str) -> tuple[Commit, ...]: ...
    def commits_touching(self, base: str, head: str, paths: Sequence[str]) -> list[str]: ...
    @property
    def refs(self) -> Refs: ...


class Refs(Protocol):
    """What the history asks of a clone's PR refs (`PRRefs` is one)."""

    def pr_ref_rows(self, *filters: str) -> list[tuple[str, str]]: ...
    def pr_ref_rows_holding(self, shas: Sequence[str], oldest: int) -> list[tuple[str, str]]: ...
    def pick_pr_refs(self, rows: Iterable[tuple[str, str]]) -> dict[int, str]: ...
    def prs_containing(self, sha: str, *, not_containing: str | None = None) -> dict[int, str]: ...

SEP = "\x1e"
LOG_FORMAT = f"%H%x00%P%x00%T%x00%an%x00%ct%x00%at%x00%s%x00%B{SEP}"
"""One commit of `git log`: what a `Commit` holds, records ended by SEP."""
_PATHSPEC_ENV = ("GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS")


def parse_log(out: str) -> list[Commit]:
    """The commits of `git log --format=LOG_FORMAT` output, in its order."""
    commits = []
    for record in out.split(SEP):
        record = record.strip("\n")
        if not record:
            continue
        sha, parents, tree, author, committed, authored, subject, body = record.split("\x00", 7)
        commits.append(Commit(sha, tuple(parents.split()), subject, author, body.strip(), int(committed or 0),
                              int(authored or 0), tree))
    return commits


class History:
    """The commits reachable from the heads asked about and not from the default branch (the
    "outside" commits), with their parents.

    Every parent of an outside commit is either outside or in the default branch, so this answers
    exactly, without git: whether a head is in the default branch, the PR heads below a head, which
    PR heads hold an outside commit, a head's fork point when its history enters the default
    branch at one commit, and its commits since then when they form one line. Whatever it cannot
    answer exactly (merge commits, ancestry among default-branch commits) goes to git."""

    def __init__(self, src: Clone, default: str) -> None:
        self.src = src
        self.default = default
        self._outside: dict[str, Commit] = {}
        self._children: dict[str, list[str]] = {}
        self._asked: set[str] = set()
        self._tips: list[str] = []
        """Heads whose outside history is loaded (excluded from later loads)."""
        self._ancestors: dict[str, frozenset[str]] = {}
        self._boundaries: dict[str, frozenset[str]] = {}
        self._contained: set[str] = set()
        """Outside commits whose every containing PR ref has its history loaded."""
        self._touching: dict[tuple[str, tuple[str, ...]], list[str]] = {}

    # -- loading ----------------------------------------------------------------

    def ensure(self, heads: Iterable[str]) -> None:
        """Load the outside history of every head not known yet: one git log for all of them."""
        new = [h for h in dict.fromkeys(heads) if h not in self._asked and h not in self._outside]
        if not new:
            return
        revs = [*new, f"^{self.default}", *(f"^{t}" for t in self._tips)]
        out = self.src.pipe(["log", "--stdin", f"--format={LOG_FORMAT}"], "\n".join(revs) + "\n")
        for c in parse_log(out.decode("utf-8", "surrogateescape")):
            self._outside[c.sha] = c
            for p in c.parents:
                self._children.setdefault(p, []).append(c.sha)
        self._asked.update(new)
        self._tips += [h for h in new if h in self._outside]

    def warm_containing(self, shas: Iterable[str]) -> None:
        """Load every PR ref holding one of these outside commits (one for-each-ref, one git log);
        commits not loaded as outside ones are left to git (`containing`)."""
        new = [s for s in dict.fromkeys(shas) if s in self._outside and s not in self._contained]
        if not new:
            return
        rows = self.src.refs.pr_ref_rows_holding(new, min(self._outside[s].committed for s in new))
        self.ensure(sha for _, sha in rows)
        self._contained.update(new)

    # -- questions ----------------------------------------------------------------

    def in_default(self, sha: str) -> bool:
        """Whether the commit is in the default branch's history."""
        self.ensure([sha])
        return sha not in self._outside

    def ancestors(self, head: str) -> frozenset[str]:
        """The outside commits `head` reaches, itself included (git rev-list head ^default)."""
        self.ensure([head])
        if head not in self._ancestors:
            seen: set[str] = set()
            todo = [head] if head in self._outside else []
            while todo:
                sha = todo.pop()
                if sha not in seen:
                    seen.add(sha)
                    todo += [p for p in self._outside[sha].parents if p in self._outside]
            self._ancestors[head] = frozenset(seen)
        return self._ancestors[head]

    @cached_property
    def default_id(self) -> str:
        """The commit the default branch is at, read once: git's answers about it are kept."""
        return self.src.resolve(self.default)

    def boundary(self, head: str) -> frozenset[str]:
        """The default-branch commits where `head`'s outside history enters the default branch
        (kept with its ancestors: loading more history adds none)."""
        if head not in self._boundaries:
            self._boundaries[head] = frozenset(
                p for sha in self.ancestors(head) for p in self._outside[sha].parents if p not in self._outside
            )
        return self._boundaries[head]

    def merge_base(self, head: str) -> str | None:
        """`git merge-base head default` for a head outside the default branch: the one commit
        where its history enters the default branch (git decides when there are several)."""
        if self.in_default(head):
            return self.src.merge_base(head, self.default_id)
        entries = self.boundary(head)
        if len(entries) <= 1:
            return next(iter(entries), None)  # none: no history in common
        return self.src.merge_base(head, self.default_id)

    def merge_bases(self, head: str) -> list[str]:
        """Every merge base of a head outside the default branch with it, git's order of
        `GitClone.merge_bases` (several when the branch merged commits the default branch took
        in other ways, e.g. a release branch merged into both); one git process only then."""
        entries = self.boundary(head)
        if len(entries) <= 1:
            return list(entries)
        return self.src.merge_bases(head, self.default_id)

    def scope(self, base: str, head: str) -> tuple[Commit, ...]:
        """A head's own commits: those it reaches and the default branch does not, oldest first
        (base..head when `base` is its one merge base: the same commits)."""
        if len(self.merge_bases(head)) <= 1:
            return self.commits(base, head)
        return self.src.commits_outside(head, self.default)

    def commits(self, base: str, head: str) -> tuple[Commit, ...]:
        """`GitClone.commits(base, head)`, with `head`'s history loaded first (so it can come from
        memory, see `known_range`)."""
        self.ensure([head])
        return self.src.commits(base, head)

    def known_range(self, base: str, head: str) -> tuple[Commit, ...] | None:
        """base..head, oldest first, from what is loaded (loading nothing), when that is exact: every
        commit of it is outside and has one parent (so the order is git's), and nothing of the
        default branch is in it (`base` is where `head` enters the default branch, or an outside
        commit that enters it wherever `head` does). None otherwise."""
        if head not in self._outside:
            return None
        entries = self.boundary(head)
        if base in self._outside:
            if not entries <= self.boundary(base):
                return None
            below = self.ancestors(base)
        elif entries != {base}:
            return None
        else:
            below = frozenset()
        line: list[Commit] = []
        sha = head
        while sha in self._outside and sha not in below:
            commit = self._outside[sha]
            if len(commit.parents) != 1:
                return None
            line.append(commit)
            sha = commit.parents[0]
        if len(line) != len(self.ancestors(head) - below):
            return None  # a commit of the range off the line: a merge below `base` joins it
        return tuple(reversed(line))

    def known_ancestry(self, ancestor: str, descendant: str) -> bool | None:
        """`git merge-base --is-ancestor` from what is loaded (loading nothing), when that is exact;
        None when git must say."""
        a, d = self._side(ancestor), self._side(descendant)
        if d is True:
            if a is True:
                return ancestor in self.ancestors(descendant)
            if a is False and ancestor in self.boundary(descendant):
                return True
        elif d is False and a is True:
            return False  # nothing of the default branch holds an outside commit
        return None

    def _side(self, sha: str) -> bool | None:
        """True: a loaded outside commit; False: known to be in the default branch; None: unknown."""
        if sha in self._outside:
            return True
        if sha in self._asked or sha in self._children:
            return False  # a head asked about and not found outside, or the parent of an outside commit
        return None

    def heads_in_range(self, head: str, refs: dict[int, str]) -> dict[int, str]:
        """The PRs of `refs` whose head is one of `head`'s commits outside the default branch."""
        ancestors = self.ancestors(head)
        return {n: sha for n, sha in refs.items() if sha in ancestors}

    def containing(self, sha: str, *, not_containing: str | None = None) -> dict[int, str]:
        """`PRRefs.prs_containing`: from memory when `sha` is an outside commit whose
        containing refs were loaded (`warm_containing`) and `not_containing` is outside too."""
        exact = sha in self._contained and (not_containing is None or not self.in_default(not_containing))
        if not exact:
            return self.src.refs.prs_containing(sha, not_containing=not_containing)
        holding = self._descendants(sha)
        if not_containing is not None:
            holding -= self._descendants(not_containing)
        return self.src.refs.pick_pr_refs([(ref, head) for ref, head in self.src.refs.pr_ref_rows() if head in holding])

    def _descendants(self, sha: str) -> set[str]:
        """The loaded outside commits that hold `sha` (itself included)."""
        seen: set[str] = set()
        todo = [sha]
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo += self._children.get(current, ())
        return seen

    # -- default-branch commits touching paths (merged checks) ------------------------------------

    def touching(self, fork: str, paths: Sequence[str]) -> list[str]:
        """`GitClone.commits_touching(fork, default, paths)`, from `warm_touching` when it could."""
        key = (fork, tuple(paths))
        if key not in self._touching:
            self._touching[key] = self.src.commits_touching(fork, self.default, paths)
        return self._touching[key]

    def warm_touching(self, asks: Iterable[tuple[str, Sequence[str]]]) -> None:
        """Answer `touching` for many (fork, paths) at once: one git log over the default branch
        since the oldest fork, limited to the union of the paths. Done only where that is exact —
        the branch is one line of commits there and no path is a glob — else left to `touching`."""
        keys = list(dict.fromkeys((fork, tuple(paths)) for fork, paths in asks))
        keys = [k for k in keys if k not in self._touching]
        for key in keys:
            if not key[1]:
                self._touching[key] = []
        keys = [k for k in keys if k[1]]
        union = sorted({p for _, paths in keys for p in paths})
        if not keys or any(os.environ.get(v) for v in _PATHSPEC_ENV) or any(map(_magic, union)):
            return
        forks = list(dict.fromkeys(fork for fork, _ in keys))
        bottom = forks[0] if len(forks) == 1 else self.src.merge_base_octopus(forks)
        if bottom is None:
            return
        listing = self.src.pipe(["rev-list", "--parents", "--stdin"], f"{self.default}\n^{bottom}\n")
        rows = [line.split() for line in listing.decode().splitlines()]
        if any(len(row) != 2 for row in rows):
            return  # merge commits: which side git follows depends on the paths; ask git per fork
        position = {row[0]: i for i, row in enumerate(rows)}
        position[bottom] = len(rows)
        found: list[tuple[str, list[str]]] = []
        if rows:
            out = self.src.pipe(
                ["log", "--stdin", "--no-merges", "--no-renames", "--format=%x01%H", "--name-only", "-z"],
                "\n".join([self.default, f"^{bottom}", "--", *union]) + "\n",
            )
            for item in out.decode("utf-8", "surrogateescape").split("\0"):
                item = item.lstrip("\n")
                if item.startswith("\x01"):
                    found.append((item[1:], []))
                elif item and found:
                    found[-1][1].append(item)
        found.reverse()  # oldest first, as git log --reverse
        for fork, paths in keys:
            if fork in position:
                wanted = set(paths)
                self._touching[(fork, paths)] = [
                    sha for sha, names in found
                    if position[sha] < position[fork] and any(map(wanted.intersection, map(_dirs, names)))
                ]


def _magic(path: str) -> bool:
    """Whether git would read the path as more than a literal pathspec (a glob, magic, a line break)."""
    return path.startswith(":") or any(ch in path for ch in "*?[]\\\n")


def _dirs(path: str) -> list[str]:
    """The path and each folder above it: what a literal pathspec matching it may be."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]
