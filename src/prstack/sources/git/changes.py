"""A stack's net hunks with provenance: each PR's own change, from its parent's tip to its head."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

from prstack.diff.hunks import added_line_numbers, in_path_order, parse_diff, with_provenance
from prstack.diff.lineage import Replayed, replay
from prstack.errors import SourceError
from prstack.models import Commit, FileChange, Hunk, PRState, PullRequest
from prstack.sources.base import PRMetadata
from prstack.sources.git.above import TouchedAbove
from prstack.sources.git.detect import fork_point, read_graph
from prstack.sources.git.diffs import PendingDiffs
from prstack.sources.git.missing import MissingBlobs, changed_among
from prstack.sources.git.repo import GitClone
from prstack.sources.git.top_pieces import counted_once, held_by_top
from prstack.stack.graph import Stack

__all__ = ["ChangesLoad", "StackChanges", "fork_point", "load_changes", "read_graph", "start_changes"]


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


def load_changes(
    src: GitClone,
    numbers: Sequence[int],
    base: str | None = None,
    metadata: Mapping[int, PRMetadata] | None = None,
) -> StackChanges:
    """The PRs asked for and every PR they stack on, with each PR's own net hunks.

    A PR's own change starts at its parent's tip inside it (the parent's head, or the end of the
    parent's — possibly stale — copy), else at its fork point (or `base` when given). A PR that
    merged the default branch after its parent is measured against both merged together."""
    return start_changes(src, numbers, base, metadata).finish()


def start_changes(
    src: GitClone,
    numbers: Sequence[int],
    base: str | None = None,
    metadata: Mapping[int, PRMetadata] | None = None,
) -> ChangesLoad:
    """`load_changes` in two steps: every hunk but those of huge files now (`ChangesLoad.ready`),
    the huge files' hunks when their texts are read and diffed (`ChangesLoad.finish`), so the
    caller can start on the rest meanwhile."""
    base_sha = src.resolve(base) if base else None
    heads = [src.refs.pr_head(n)[1] for n in numbers]
    missing = src.lacking_blobs(heads)
    stack = _audited(read_graph(src, numbers, metadata, base_sha), numbers)
    stack, held = held_by_top(src, stack)
    ranges = [_own_range(src, stack, number, base_sha, held.get(number)) for number in stack.order]
    # each PR's own range as measured (a merged one's in the default branch's history, a child's past
    # its parent's head, through the default branch's commits it merged): blobs lacking there too,
    # looked for where the first look did not see them, each range past its own start
    unseen = [r for r in ranges if not _looked_at(src, r, heads)]
    if unseen:
        missing = src.lacking_blobs([r.head for r in unseen], [r.start for r in unseen], missing)
    pending = src.objects.diffs([(r.diff_base, r.head) for r in ranges])  # one git process for the stack
    diffs = _CommitDiffs(src, ranges)  # (their commits' diffs: git writes them while these are parsed)
    parsed = [parse_diff(diff, r.number) for r, diff in zip(ranges, pending.sections(), strict=True)]
    above = TouchedAbove(src, stack, [(r.number, r.commits) for r in ranges])
    own = [_attribute(src, r, hunks, stack, diffs, partial(above.of, at))
           for at, (r, hunks) in enumerate(zip(ranges, parsed, strict=True))]
    diffs.settle()
    if missing is not None:
        own = [[*hunks, *above.added(at, _unread(src, r, missing))]
               for at, (r, hunks) in enumerate(zip(ranges, own, strict=True))]
    return ChangesLoad(diffs, stack, ranges, own, pending, metadata or {})


class ChangesLoad:
    """A stack being loaded (see `start_changes`)."""

    def __init__(self, diffs: _CommitDiffs, stack: Stack, ranges: Sequence[_OwnRange], own: list[list[Hunk]],
                 pending: PendingDiffs, metadata: Mapping[int, PRMetadata]) -> None:
        self._src, self._stack, self._ranges, self._own, self._pending = diffs.src, stack, ranges, own, pending
        self._diffs = diffs
        self._metadata = metadata
        self._done: StackChanges | None = None
        self._prs = tuple(self._pull_request(r) for r in ranges)
        self.ready = self._changes()
        """The stack with every hunk but those of huge files, still being diffed."""

    @property
    def complete(self) -> bool:
        """Whether `ready` already holds every hunk (no huge file is being diffed)."""
        return not self._pending.has_huge

    @property
    def can_finish(self) -> bool:
        """Whether `finish` would not wait for git (the huge files' texts are read)."""
        return self._done is not None or self._pending.huge_read

    def finish(self) -> StackChanges:
        """The whole stack, huge files' hunks in their place (waits for their diffs)."""
        if self._done is None:
            if self.complete:
                self._done = self.ready
            else:
                for at, path, file_diff in self._pending.huge():
                    r = self._ranges[at]
                    file_hunks = _attribute(self._src, r, parse_diff(file_diff, r.number), self._stack,
                                            self._diffs)
                    self._own[at] = in_path_order(self._own[at], file_hunks, path)
                self._done = self._changes()
        return self._done

    def _changes(self) -> StackChanges:
        hunks = tuple(counted_once(self._own, self._stack))
        stack = self._stack
        return StackChanges(self._prs, hunks, stack, self._src.default_ref, stack.facts[stack.order[-1]].head)

    def _pull_request(self, r: _OwnRange) -> PullRequest:
        stack, number = self._stack, r.number
        m = self._metadata.get(number)
        return PullRequest(
            number=number,
            head_sha=r.head,
            base_sha=r.start,
            title=m.title if m else None,
            body=m.body if m else None,
            state=stack.states[number],  # open, merged or stale (built on an old parent)
            head_ref=stack.facts[number].ref,
            base_ref=m.base_ref if m else None,
            depends_on=stack.parents[number],
            merged=stack.states[number] is PRState.MERGED,
            commits=r.commits,
            own_base=r.diff_base if r.diff_base != r.start else None,
            pr_head=stack.facts[number].head if stack.facts[number].head != r.head else None,
        )


@dataclass(frozen=True)
class _OwnRange:
    """Where one PR's own change starts and ends, and its commits."""

    number: int
    start: str
    diff_base: str
    """`start`, or the tree of `start` merged with the fork point (see load_changes)."""
    head: str
    commits: tuple[Commit, ...]
    outside: tuple[str, ...] = ()
    """The default branch, when the PR is not in it: its history is out of the PR's scope."""


def _audited(stack: Stack, numbers: Sequence[int]) -> Stack:
    """The stack with only the PRs asked for and those under them (detection can meet others: a
    PR re-pushed under another number, whose edges to these were dropped as a cycle)."""
    keep = set(numbers).union(*(stack.below(n) for n in numbers))
    if keep >= set(stack.order):
        return stack
    return replace(stack, order=tuple(n for n in stack.order if n in keep))


def _own_range(src: GitClone, stack: Stack, number: int, base_sha: str | None,
               held: tuple[str | None, str] | None = None) -> _OwnRange:
    """A PR's scope is its commits the default branch does not reach: a branch that merged the
    default branch back in keeps only its own change, measured from its merge base (from the
    merged tree of its merge bases when it has several, so none of theirs counts as its own).
    `held`: (start, head) of the PR as the top of the stack holds it (see `held_by_top`)."""
    f = stack.facts[number]
    head = f.head if held is None else held[1]
    if head != f.head:  # a copy in the top's history: its own fork point and commits
        fork = src.ancestry.merge_base(head, src.default_ref) or f.fork_point
        f = replace(f, head=head, commits=src.ancestry.commits(fork, head), fork_point=fork, merge_bases=())
    history = src.ancestry.history(src.default_ref)
    outside = () if history.in_default(head) else (src.default_ref,)
    if base_sha and outside and not src.ancestry.is_ancestor(base_sha, head):
        base_sha = src.ancestry.merge_base(base_sha, head) or base_sha  # --base BRANCH: where the head left it
    if held is not None and held[0] is not None:
        start = held[0]  # where the piece below ends in the top's history
    elif held is None or head == stack.facts[number].head:
        start = _parents_merged(src, stack, number) or stack.base_of(number) or base_sha or f.fork_point
    else:
        start = base_sha or f.fork_point
    fork_tree = _bases_tree(src, f.merge_bases) if f.merge_bases else None
    commits = f.commits if start == f.fork_point else src.ancestry.commits(start, head)
    diff_base = fork_tree if start == f.fork_point and fork_tree else start
    if start != f.fork_point and not src.ancestry.is_ancestor(f.fork_point, start):
        # the PR merged the default branch since it was built on its parent (or since the --base
        # given): its own change is measured against that start + the default branch, so the
        # merged-in commits are not its own (where they conflict, as the branch's merge resolved
        # them: the branch's later edits of the lines the default branch brought are its own)
        own = set(src.ancestry.rev_list(f"{start}..{head}", f"^{f.fork_point}", *(f"^{o}" for o in outside)))
        merges = [c.sha for c in commits if len(c.parents) > 1 and c.sha in own]
        diff_base = src.ancestry.merged_as_resolved(start, fork_tree or f.fork_point, merges) or start
        commits = tuple(c for c in commits if c.sha in own)
    elif outside and start != f.fork_point:
        # start..head ^default: of start..head, those the head reaches outside the default branch
        # (the history detection loaded knows them; no git process per PR)
        mine = history.ancestors(head)
        commits = tuple(c for c in commits if c.sha in mine)
    return _OwnRange(number, start, diff_base, head, tuple(commits), outside)


def _looked_at(src: GitClone, r: _OwnRange, heads: Sequence[str]) -> bool:
    """Whether the first look for lacking blobs (the commits of `heads` past their fork points,
    and those forks' trees) saw every object the range's own look would: a head whose history
    enters the default branch only at its fork point holds the range's head and its start (the
    fork point, or a commit past it whose history enters the default branch there too), so the
    range's commits are some of those seen, and its start's tree was seen."""
    history = src.ancestry.history(src.default_ref)
    for head in heads:
        entries, mine = history.boundary(head), history.ancestors(head)
        if len(entries) != 1 or r.head not in mine:
            continue
        if r.start in entries or (r.start in mine and history.boundary(r.start) == entries):
            return True
    return False


def _parents_merged(src: GitClone, stack: Stack, number: int) -> str | None:
    """For a PR that merged several PRs whose parts of its history do not hold one another (a
    merge queue's or a combined PR): their tips merged together, as the branch's own merges
    resolved them, so that none of their changes counts as its own. None otherwise."""
    tips = [tip for tip in stack.tips_of(number) if src.ancestry.is_ancestor(tip, stack.facts[number].head)]
    tips = [t for t in tips if not any(o != t and src.ancestry.is_ancestor(t, o) for o in tips)]
    if len(tips) < 2:
        return None
    merges = [c.sha for c in stack.facts[number].commits if len(c.parents) > 1]
    return src.ancestry.merged_tips(sorted(tips), merges)


def _bases_tree(src: GitClone, bases: Sequence[str]) -> str | None:
    """A PR's merge bases merged together (None when they conflict: the diff then starts at the
    first, `fork_point`)."""
    return src.ancestry.merged_bases(bases)


class _CommitDiffs:
    """The diffs of the stack's linear multi-commit PRs' commits, read by one git process started
    at once, and each such PR's line owners replayed from them (see prstack.diff.lineage)."""

    def __init__(self, src: GitClone, ranges: Sequence[_OwnRange]) -> None:
        self.src = src
        shas = [c.sha for r in ranges if len(r.commits) > 1 and all(len(c.parents) == 1 for c in r.commits)
                for c in r.commits]
        self._read = src.objects.start_commit_diffs(shas)
        self._diffs: dict[str, bytes] | None = None
        self._failed: SourceError | None = None
        self._replayed: dict[int, Replayed] = {}

    def replayed(self, r: _OwnRange) -> Replayed:
        """Per path at the PR's head: which of its commits wrote each line, and the lines one of
        them wrote and a later one removed."""
        if r.number not in self._replayed:
            diffs = self.read()
            self._replayed[r.number] = replay((c.sha, diffs.get(c.sha, b"")) for c in r.commits)
        return self._replayed[r.number]

    def read(self) -> dict[str, bytes]:
        """The commits' diffs (waits for git the first time; git's failure, each time)."""
        if self._failed is not None:
            raise self._failed
        if self._diffs is None:
            try:
                self._diffs = dict(self._read())
            except SourceError as exc:
                self._failed = exc
                raise
        return self._diffs

    def settle(self) -> None:
        """Wait for git when no PR has needed the diffs yet (a failure is said only if one does)."""
        with contextlib.suppress(SourceError):
            self.read()


def _attribute(src: GitClone, r: _OwnRange, hunks: Sequence[Hunk], stack: Stack,
               diffs: _CommitDiffs, above: Callable[[str], tuple[str, ...]] = lambda path: ()) -> list[Hunk]:
    """Each hunk with the commits that introduced it. A one-commit PR owes all its lines to that
    commit; for longer PRs the commits' diffs are replayed in order (`_CommitDiffs`). With a merge
    commit in the range, every file is blamed and deletions are attributed by `git log`. The paths
    of commits stack detection read are known already. `above`: path -> the commits of the PRs
    built on this one that changed it (`Hunk.touched_above`)."""
    base, head, commits, known_paths = r.start, r.head, r.commits, stack.facts[r.number].paths
    order = [c.sha for c in commits]
    merges = any(len(c.parents) != 1 for c in commits)
    if merges:
        touching: Callable[[str], Sequence[str]] = partial(src.ancestry.log_touching, base, head, outside=r.outside)
        to_blame = {h.path for h in hunks}
    else:
        by_path: defaultdict[str, list[str]] = defaultdict(list)
        unknown = [sha for sha in order if sha not in known_paths]
        paths_of = {**{sha: known_paths[sha] for sha in order if sha in known_paths}, **src.patches.paths(unknown)}
        rank = {sha: i for i, sha in enumerate(order)}
        for sha, paths in sorted(paths_of.items(), key=lambda item: rank[item[0]]):
            for path in paths:
                by_path[path].append(sha)

        def touching(path: str) -> Sequence[str]:
            return by_path.get(path, [])

        # replayed diffs follow renames, which the paths of each commit alone do not show
        to_blame = {h.path for h in hunks} if len(order) > 1 else set()
    ranges: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)
    for hunk in hunks:
        numbers = added_line_numbers(hunk)
        if numbers and hunk.path in to_blame:
            ranges[hunk.path].append((numbers[0], numbers[-1] - numbers[0] + 1))
    blame: dict[str, dict[int, str]]
    taken_back: Mapping[str, frozenset[str]] = {}
    if merges:
        blame = {path: _blamed(src, (base, head, path), spans, r.outside) for path, spans in ranges.items()}
    else:
        owners, taken_back = diffs.replayed(r) if ranges else ({}, {})
        blame = {}
        for path, spans in ranges.items():
            lines = owners.get(path, [])
            blame[path] = {n: owner for start, count in spans for n in range(start, start + count)
                           if n <= len(lines) and (owner := lines[n - 1]) is not None}
    scope = set(order)  # a hunk names only the PR's own commits
    blame = {path: {n: sha for n, sha in lines.items() if sha in scope} for path, lines in blame.items()}
    out = with_provenance(hunks, blame, order, lambda path: [sha for sha in touching(path) if sha in scope])
    out = _with_touched(out, touching if not merges else _touching_by_paths(src, order), above)
    return _with_taken_back(out, taken_back) if taken_back else out


def _touching_by_paths(src: GitClone, order: Sequence[str]) -> Callable[[str], Sequence[str]]:
    """The PR's commits, oldest first, that change a path against their first parent (merges
    change none), from the paths of every commit (one git process for the stack, kept)."""
    paths = src.patches.paths(order)
    return lambda path: [sha for sha in order if path in paths.get(sha, ())]


def _with_touched(hunks: Sequence[Hunk], touching: Callable[[str], Sequence[str]],
                  above: Callable[[str], tuple[str, ...]]) -> list[Hunk]:
    """Each hunk with the PR's commits that changed its file (see `Hunk.touched_by`) and those of
    the PRs built on it (`Hunk.touched_above`)."""
    return [replace(h, touched_by=tuple(touching(h.path)), touched_above=above(h.path)) for h in hunks]


def _unread(src: GitClone, r: _OwnRange, missing: MissingBlobs) -> list[Hunk]:
    """A hunk standing for each file of the PR's own change whose blobs the clone lacks (left out
    of its diff), carrying the command that fetches them: unverifiable, not read."""
    kinds = {"A": FileChange.ADDED, "D": FileChange.DELETED}
    out = []
    for path, old, new, status in changed_among(src.path, src.env, (r.diff_base, r.head), missing.paths):
        commits = [sha for sha in src.ancestry.log_touching(r.start, r.head, path, r.outside)
                   if sha in {c.sha for c in r.commits}]
        change = kinds.get(status, FileChange.MODIFIED)
        out.append(Hunk(r.number, path, None if change is FileChange.ADDED else path, change, 0, 0, 0, 0,
                        commits=tuple(commits), old_blob=old, new_blob=new, unread=missing.command))
    return out


def _blamed(src: GitClone, where: tuple[str, str, str], spans: Sequence[tuple[int, int]],
            outside: Sequence[str]) -> dict[int, str]:
    """`blame_added` of the path in base..head; in a clone that lacks blobs, where git blame stops
    on one (looking for where a new file came from), nothing: the lines are then the commits'
    touching the file, as for a deletion."""
    base, head, path = where
    try:
        return src.ancestry.blame_added(base, head, path, spans, outside)
    except SourceError:
        if not src.objects.unread:
            raise
        return {}


def _with_taken_back(hunks: Sequence[Hunk], taken_back: Mapping[str, frozenset[str]]) -> list[Hunk]:
    """Each hunk with the lines its PR's commits wrote in its file and took back again, less the
    lines the PR's net change of the file adds (a line removed in one place and added in another)."""
    added: defaultdict[str, set[str]] = defaultdict(set)
    for h in hunks:
        added[h.path].update(text.strip() for kind, text in h.lines if kind == "+")
    out = []
    for h in hunks:
        lines = taken_back.get(h.path, frozenset()) - added[h.path]
        out.append(replace(h, taken_back=lines) if lines else h)
    return out
