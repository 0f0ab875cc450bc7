"""One stack detection run's view of a clone: each PR's facts, merged state and candidate parents,
read from git for many PRs at once (detect.py walks the PRs; prstack.stack.graph decides)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from prstack.diff.hunks import parse_diff
from prstack.errors import InputError, SourceError
from prstack.match.file import match_file
from prstack.models import Commit, Hunk
from prstack.sources.base import PRMetadata
from prstack.sources.git.fork_points import fork_point, own_base
from prstack.sources.git.history import History
from prstack.sources.git.repo import GitClone
from prstack.stack.copies import copy_candidates, may_hold_copies
from prstack.stack.facts import PRFacts
from prstack.stack.markers import Marker, commit_id, named_prs

_REVERT_RE = re.compile(r"^This reverts commit ([0-9a-f]{40})\b", re.MULTILINE)
"""The line `git revert` writes into the message of a revert, naming the reverted commit."""


MAX_PATCH_IDS = 500
"""Patch-ids are computed for a PR's last commits only (a long-lived branch is no stack)."""


SUBJECT_NOISE = 5
"""A head subject shared by more PRs than this ("Update README") is no hint of a stack."""


@dataclass
class Reader:
    """One stack detection run: caches what git said about each PR. The visits ask one PR at a
    time; `prefetch` first asks git for everything the queued PRs' visits will need, in a few
    processes for all of them, so the visits find it in the caches."""

    src: GitClone
    metadata: Mapping[int, PRMetadata]
    default: str = ""
    heads: dict[int, str] = field(default_factory=dict)
    ancestors: dict[int, dict[int, str]] = field(default_factory=dict)
    facts: dict[int, PRFacts] = field(default_factory=dict)
    unloadable: set[int] = field(default_factory=set)
    base: str | None = None
    """Fork point for PRs whose own cannot be found (fast-forward merged): the --base override."""
    _hints: tuple[dict[str, list[int]], dict[str, list[int]]] | None = None
    _deep: tuple[int, dict[str, list[int]]] | None = None
    """(the author time the index covers back to, 0: all; PR commits' subject -> PRs)."""
    _placed: dict[int, tuple[str, str, tuple[Commit, ...]] | None] = field(default_factory=dict)
    _candidates: dict[int, Candidates] = field(default_factory=dict)
    _merged_at: dict[int, set[int]] = field(default_factory=dict)
    _warmed: set[int] = field(default_factory=set)

    @cached_property
    def history(self) -> History:
        return self.src.ancestry.history(self.default)

    def head(self, number: int) -> str | None:
        if number not in self.heads:
            try:
                self.heads[number] = self.src.refs.pr_head(number)[1]
            except InputError:
                return None
        return self.heads[number]

    def place(self, number: int) -> tuple[str, str, tuple[Commit, ...]] | None:
        """(head, fork point, commits) of the PR, None when its history cannot be placed against
        the default branch; notes the PRs whose heads are below its head."""
        if number in self._placed:
            return self._placed[number]
        head = self.head(number)
        if head is None:
            self._placed[number] = None
            return None
        below = {
            n: sha for n, sha in self.history.heads_in_range(head, self.src.refs.pr_refs).items()
            if n != number and sha != head
        }
        self.ancestors[number] = below
        for n, sha in below.items():
            self.heads.setdefault(n, sha)
        try:
            fork = fork_point(self.src, head, self.default)
        except InputError:
            if self.base is None:
                self._placed[number] = None
                return None
            fork = self.base
        history = self.history
        commits = history.commits(fork, head) if history.in_default(head) else history.scope(fork, head)
        self._placed[number] = (head, fork, commits)
        return self._placed[number]

    def load(self, number: int) -> PRFacts | None:
        """The PR's facts (None when its history cannot be placed against the default branch)."""
        if number in self.facts or number in self.unloadable:
            return self.facts.get(number)
        placed = self.place(number)
        if placed is None:
            self.unloadable.add(number)
            return None
        head, fork, commits = placed
        below = self.ancestors[number]
        shas = [c.sha for c in commits]
        cut = max((shas.index(sha) + 1 for sha in below.values() if sha in shas), default=0)
        meta = self.metadata.get(number)
        recent = _recent(commits)
        facts = PRFacts(
            number=number,
            head=head,
            fork_point=fork,
            commits=commits,
            own=commits[cut:],
            patch_ids=self.src.patches.lazy_ids(recent),
            paths=self.src.patches.paths(recent),
            reverts=_reverts(self.src, commits),
            merge_bases=tuple(bases) if len(bases := self._merge_bases(head, fork)) > 1 else (),
            ref=f"refs/pull/{number}/head",
            title=meta.title if meta else None,
            body=meta.body if meta else None,
            head_branch=meta.head_ref if meta else None,
            base_branch=meta.base_ref if meta else None,
        )
        self.facts[number] = facts
        return facts

    def _merge_bases(self, head: str, fork: str) -> list[str]:
        """The head's merge bases with the default branch when `fork` is one of them."""
        if self.history.in_default(head):
            return []
        bases = self.history.merge_bases(head)
        return bases if fork in bases else []

    def mark_merged(self, number: int) -> PRFacts | None:
        """Fill in how the PR is in the default branch: ancestry, rebase or squash (by patch-id)."""
        f = self.load(number)
        if f is None or f.merged is not None:
            return f
        how: str | None = None
        landed: str | None = f.head
        if self.history.in_default(f.head):
            how = "ancestry"
        elif f.own:
            paths = self.src.patches.pair_paths(f.fork_point, f.head)
            touching = self.history.touching(f.fork_point, paths)
            if touching:
                rebase, squash_too, compared = self._merged_needs(f, touching)
                by_pid = {pid: sha for sha, pid in self.src.patches.ids(compared).items()}
                own_pids = [f.patch_ids.get(c.sha) if rebase else None for c in f.own]
                squash = self.src.patches.pair_id(own_base(self.src, f), f.head) if squash_too else None
                if own_pids and all(p is not None and p in by_pid for p in own_pids):
                    how, landed = "rebase", by_pid[own_pids[-1] or ""]
                elif squash in by_pid:
                    how, landed = "squash", by_pid[squash or ""]
                elif squash_too and self._held_by_default(f, paths):
                    how, landed = "content", touching[-1]
        meta = self.metadata.get(number)
        if how is None and meta is not None and meta.state == "merged":
            how, landed = "github", None  # GitHub says merged; the clone does not show how
        if how is not None:
            f = replace(f, merged=how, landed=landed)
            self.facts[number] = f
        return f

    def _held_by_default(self, f: PRFacts, paths: Sequence[str]) -> bool:
        """Whether the default branch holds the PR's own change by content: every hunk of it
        applied in the default branch's files, as the audit's matcher judges them (a squash whose
        patch differs: a context line changed upstream meanwhile, or the files made equal). Asked
        only when a default-branch commit changes the very files the PR's own change does, as a
        squash of it would."""
        src, base = self.src, own_base(self.src, f)
        try:
            hunks = parse_diff(src.objects.diff(base, f.head), f.number)
        except SourceError:  # a blob of it the clone lacks (a partial clone offline): not known to be held
            return False
        if not hunks:
            return False
        by_path: dict[str, list[Hunk]] = {}
        for h in hunks:
            by_path.setdefault(h.path, []).append(h)
        for path, mine in by_path.items():
            old = mine[0].old_path
            files = src.objects
            verdicts = match_file(mine, files.file_at(self.default, path), installed_path=path,
                                  base=files.file_at(base, old) if old else None, head=files.file_at(f.head, path))
            if not all(v.status.present for v in verdicts):
                return False
        return True

    def _merged_needs(self, f: PRFacts, touching: Sequence[str]) -> tuple[bool, bool, list[str]]:
        """Which patch-ids the merged check compares, from paths alone (equal patch-ids change
        the same paths): whether every own commit may have a copy among `touching` (rebase),
        whether the squashed change may, and the commits of `touching` that may be a copy."""
        names = self.src.patches.paths(touching)
        touched = set(names.values())
        rebase = all(f.paths.get(c.sha) in touched for c in f.own)
        squashed = frozenset(self.src.patches.pair_paths(own_base(self.src, f), f.head))
        squash_too = squashed in touched
        wanted = ({f.paths[c.sha] for c in f.own} if rebase else set()) | ({squashed} if squash_too else set())
        return rebase, squash_too, [sha for sha in touching if names.get(sha) in wanted]

    # -- warming: what the visits will ask git, asked for many PRs at once ------------------------

    def prefetch(self, numbers: Iterable[int], requested: Sequence[int]) -> None:
        """Before visiting these PRs: load, in a few git processes for all of them, their facts
        and their ancestors' (each is visited in turn), what their merged checks need, and the
        facts of every PR their visits will relate them to. Fills caches only: the visits decide."""
        todo = [n for n in dict.fromkeys(numbers) if n not in self._warmed]
        if not todo:
            return
        self._warmed.update(todo)
        self.warm_facts(todo, with_ancestors=True)
        visiting = [*todo, *(n for t in todo for n in self.ancestors.get(t, {}))]
        self._warm_merged(visiting)
        self._warm_containing(visiting)
        children = [f for n in todo if (f := self.facts.get(n)) is not None]
        tried = {child.number: self.candidates(child, requested) for child in children}
        related = sorted({n for c in tried.values() for n in c.ancestry | c.candidates})
        self.warm_facts(related, with_ancestors=False)
        self._warm_containing(related)  # those that turn out parents are visited next
        copies: set[str] = set()
        for child in children:
            c = tried[child.number]
            copies |= self.copy_ids(child, c.candidates - c.ancestry)  # ancestry needs no copies
        self.src.patches.warm(ids=sorted(copies))

    def _warm_containing(self, numbers: Iterable[int]) -> None:
        """Which PR refs hold each PR's first commit (a visit looks for more parents there)."""
        firsts = (f.commits[0].sha for n in numbers if (f := self.facts.get(n)) is not None and f.commits)
        self.history.warm_containing(firsts)

    def warm_facts(self, numbers: Iterable[int], *, with_ancestors: bool) -> None:
        """Place these PRs (and, if asked, their ancestor PRs) with one git log, then read the
        paths of all their commits in one git process (patch-ids are computed as needed). With
        their ancestors (the PRs visited next), the paths of each one's whole change outside the
        default branch too, which their merged checks read (`_warm_merged`)."""
        numbers = [n for n in dict.fromkeys(numbers) if n not in self.facts and n not in self.unloadable]
        self.history.ensure(h for n in numbers if (h := self.head(n)) is not None)
        for n in numbers:
            self.place(n)
        pairs: list[tuple[str, str]] = []
        if with_ancestors:
            numbers = list(dict.fromkeys([*numbers, *(a for n in numbers for a in self.ancestors.get(n, {}))]))
            pairs = [(p[1], p[0]) for n in numbers if (p := self.place(n)) and not self.history.in_default(p[0])]
        self.src.patches.warm(paths=[s for n in numbers if (p := self.place(n)) for s in _recent(p[2])],
                              pair_paths=pairs)
        for n in numbers:
            self.load(n)

    def _warm_merged(self, numbers: Iterable[int]) -> None:
        """What `mark_merged` asks git for these PRs: the paths each changes, the default-branch
        commits since its fork point touching them, and the patch-ids of those and of its change."""
        facts = [
            f for n in dict.fromkeys(numbers)
            if (f := self.facts.get(n)) is not None and f.merged is None and f.own
            and not self.history.in_default(f.head)
        ]
        self.src.patches.warm(pair_paths=[(f.fork_point, f.head) for f in facts])
        asks = [(f, self.src.patches.pair_paths(f.fork_point, f.head)) for f in facts]
        self.history.warm_touching((f.fork_point, paths) for f, paths in asks)
        touched = [(f, t) for f, paths in asks if (t := self.history.touching(f.fork_point, paths))]
        self.src.patches.warm(
            paths=[sha for _, t in touched for sha in t],
            pair_paths=[(own_base(self.src, f), f.head) for f, _ in touched],
        )
        ids: list[str] = []
        pair_ids: list[tuple[str, str]] = []
        for f, t in touched:
            rebase, squash_too, compared = self._merged_needs(f, t)
            ids += compared + ([c.sha for c in f.own if c.sha in f.patch_ids] if rebase else [])
            pair_ids += [(own_base(self.src, f), f.head)] if squash_too else []
        self.src.patches.warm(ids=ids, pair_ids=pair_ids)

    def copy_ids(self, child: PRFacts, parents: Iterable[int]) -> set[str]:
        """The commits whose patch-ids relating these PRs to the child reads (`copy_candidates`)."""
        ids: set[str] = set()
        for n in parents:
            if (parent := self.facts.get(n)) is not None and may_hold_copies(parent, child):
                carriers = {*parent.patch_ids, *child.patch_ids}
                paths = {**parent.paths, **child.paths}
                ids |= copy_candidates(parent.own or parent.commits, child.commits, carriers, paths)
        return ids

    def candidates(self, child: PRFacts, requested: Sequence[int]) -> Candidates:
        """The PRs the child's visit relates it to, and the markers that name them."""
        number = child.number
        if number in self._candidates:
            return self._candidates[number]
        markers = named_prs([child.body, *(c.message for c in child.commits)], number)
        claimed = set(named_prs([child.body, *(c.message for c in child.own)], number))
        default_branch = self.default.rsplit("/", 1)[-1]
        stacked_branch = child.base_branch not in (None, "", default_branch)
        by_branch = {
            n for n, meta in self.metadata.items()
            if n != number and stacked_branch and meta.head_ref == child.base_branch
        }
        claimed |= by_branch
        ancestry = set(self.ancestors[number]) | self.merged_parents_at(child)
        candidates = set(markers) | by_branch | set(requested) | self.head_hints(child)
        if child.commits:
            first = child.commits[0].sha
            candidates |= set(self.history.containing(first, not_containing=child.head))
        found = Candidates(markers, claimed, by_branch, ancestry, candidates - {number})
        self._candidates[number] = found
        return found

    def head_hints(self, child: PRFacts) -> set[int]:
        """PRs whose head commit has the subject or the commit-id of one of the child's commits."""
        if self._hints is None:
            self._hints = self.src.refs.pr_head_hints()
        subjects, ids = self._hints
        hints: set[int] = set()
        for c in child.commits:
            keys = [(subjects, c.subject)]
            if (cid := commit_id(c.message)) is not None:
                keys.append((ids, cid))
            for index, key in keys:
                prs = index.get(key, [])
                if len(prs) <= SUBJECT_NOISE:
                    hints.update(prs)
        return hints

    def deep_hints(self, child: PRFacts) -> set[int]:
        """PRs with a commit (anywhere in their range) of the subject of one of the child's, among
        the PRs whose heads can hold a copy of the child's commits (see `pr_commit_subjects`)."""
        dates = [c.authored for c in child.commits]
        authored = min(dates) if all(dates) else 0  # (a parent's commit the child copies: authored then)
        if self._deep is None or 0 < authored < self._deep[0] or (self._deep[0] and not authored):
            self._deep = authored, self.src.refs.pr_commit_subjects(self.default, authored)
        subjects = self._deep[1]
        hints: set[int] = set()
        for c in child.commits:
            prs = subjects.get(c.subject, [])
            if len(prs) <= SUBJECT_NOISE:
                hints.update(prs)
        return hints

    def merged_parents_at(self, child: PRFacts) -> set[int]:
        """PRs merged with a merge commit whose head is exactly where the child forks."""
        if child.number in self._merged_at:
            return self._merged_at[child.number]
        found = set()
        for n, sha in self.src.refs.prs_pointing_at(child.fork_point).items():
            merge = self.src.ancestry.merge_commit_bringing(sha, self.history.default_id)
            if n != child.number and merge and not self.src.ancestry.is_ancestor(sha, f"{merge}^1"):
                self.heads.setdefault(n, sha)
                found.add(n)
        self._merged_at[child.number] = found
        return found


@dataclass(frozen=True)
class Candidates:
    """Whom one PR's visit tries as its parents."""

    markers: Mapping[int, list[Marker]]
    claimed: set[int]
    """PRs named by the child's own markers or metadata (a missing or unbacked one is reported)."""
    by_branch: set[int]
    ancestry: set[int]
    candidates: set[int]


def _recent(commits: Sequence[Commit]) -> list[str]:
    """The commits whose patch-ids and paths a PR's facts hold: its last ones, merges left out."""
    return [c.sha for c in commits[-MAX_PATCH_IDS:] if len(c.parents) == 1]


def _reverts(src: GitClone, commits: Sequence[Commit]) -> dict[str, str]:
    """Commit sha -> the earlier commit of `commits` it undoes exactly: its message names that
    commit as `git revert` writes it, and its diff reversed has that commit's patch-id. Only
    commits whose message names an earlier one are diffed (few: most ranges have none)."""
    seen: set[str] = set()
    named: dict[str, tuple[str, str]] = {}
    for c in commits:
        found = _REVERT_RE.search(c.message)
        if found and found.group(1) in seen and len(c.parents) == 1:
            named[c.sha] = (found.group(1), c.parents[0])
        seen.add(c.sha)
    if not named:
        return {}
    pairs = [(sha, parent) for sha, (_, parent) in named.items()]  # (the revert's diff, reversed)
    src.patches.warm(ids=[target for target, _ in named.values()], pair_ids=pairs)
    ids = src.patches.ids([target for target, _ in named.values()])
    return {sha: target for sha, (target, parent) in named.items()
            if target in ids and src.patches.pair_id(sha, parent) == ids[target]}
