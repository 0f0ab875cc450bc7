"""Pure planning: replay each PR's picks in memory through a PlanBackend and decide from the outcomes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from prstack.models import Changes, Hunk, MergeOutcome, PullRequest
from prstack.plan.values import Conflict, Known, Lack, Onto, Pick, Plan, PlanBackend, PlanStatus, PRPlan


def plan_order(requested: Sequence[int], parents: Mapping[int, Sequence[int]]) -> tuple[int, ...]:
    """Stack order (every PR after the PRs it builds on), independent PRs in the order given."""
    order: list[int] = []
    visiting: set[int] = set()

    def visit(number: int) -> None:
        if number in order or number in visiting:
            return
        visiting.add(number)
        for parent in parents.get(number, ()):
            visit(parent)
        visiting.discard(number)
        order.append(number)

    for number in requested:
        visit(number)
    return tuple(order)


def conflict_regions(data: bytes | None) -> tuple[tuple[int, int], ...]:
    """Line ranges (1-based, inclusive) between '<<<<<<<' and '>>>>>>>' conflict markers."""
    if not data:
        return ()
    regions, start = [], None
    for number, line in enumerate(data.splitlines(), 1):
        if line.startswith(b"<<<<<<<") and start is None:
            start = number
        elif line.startswith(b">>>>>>>") and start is not None:
            regions.append((start, number))
            start = None
    return tuple(regions)


def fits(hunk: Hunk, data: bytes | None) -> bool:
    """True when the hunk's pre-image (context and removed lines) is in `data`, as one block."""
    image = hunk.old_image
    if hunk.old_path is None:
        return data is None
    if data is None:
        return False
    if not image:
        return True
    lines = [line.rstrip("\r") for line in data.decode("utf-8", "surrogateescape").split("\n")]
    first, size = image[0], len(image)
    return any(
        lines[i : i + size] == list(image) for i, line in enumerate(lines) if line == first
    )


def _touches(hunks: Sequence[Hunk], path: str) -> bool:
    return any(h.path == path or h.old_path == path for h in hunks)


# -- the planner ----------------------------------------------------------------------------


STUCK = (PlanStatus.CONFLICT, PlanStatus.BLOCKED)
"""Statuses that stop a PR from going on (and block the PRs stacked on it)."""


@dataclass(frozen=True)
class _Replay:
    """Picks replayed onto a tree."""

    tree: str
    """The tree after the picks that went in."""
    kept: tuple[Pick, ...]
    """Picks that changed something."""
    redundant: tuple[str, ...]
    """Commits whose pick changed nothing."""
    conflict: MergeOutcome | None = None
    failed: Pick | None = None


@dataclass
class _State:
    tree: str
    """The onto-point's tree with the clean PRs so far picked."""
    applied: list[int] = field(default_factory=list)
    """Those PRs, in plan order."""


def _picks_of(pr: PullRequest, own: tuple[str, str]) -> list[Pick]:
    """The PR's own commits as picks; one squashed pick of its own change (`own`: commits of its
    change base and head, see `Planner._own`) when it holds merge commits."""
    commits = pr.commits
    if any(len(c.parents) != 1 for c in commits) or not commits:
        return [Pick(*own, f"PR #{pr.number}", squash=True)]
    return [Pick(c.parents[0], c.sha, c.subject) for c in commits]


class Planner:
    """Decides each PR's fate in order, replaying picks through a backend."""

    def __init__(self, backend: PlanBackend, onto: Onto, prs: Sequence[PullRequest],
                 hunks: Sequence[Hunk], present: Mapping[int, str] | None = None,
                 lacking: Mapping[int, Lack] | None = None) -> None:
        self.backend = backend
        self.onto = onto
        self.prs = {pr.number: pr for pr in prs}
        self.hunks = tuple(hunks)
        self.present = dict(present or {})
        self.lacking = dict(lacking or {})
        self._ids: dict[tuple[str, tuple[str, ...]], dict[str, str]] = {}
        self._chain_base: dict[int, str] = {}
        self._owns: dict[int, tuple[str, str]] = {}
        self.held: dict[int, str] = {}
        """Merged PRs the onto-point's history holds (see `Known.held`)."""

    def _own_change(self, pr: PullRequest) -> tuple[str, str]:
        """Commits (parent, commit) whose diff is the PR's own change: its base and head, or (when
        it merged the default branch) throw-away commits of its `own_base` tree on its base and of
        its head's tree on that, so that a pick's merge base is where its own change starts."""
        if pr.own_base is None:
            return pr.base_sha, pr.head_sha
        if pr.number not in self._owns:
            start = self.backend.commit_tree(f"{pr.own_base}^{{tree}}", [pr.base_sha],
                                             f"prstack plan: where #{pr.number}'s own change starts")
            head = self.backend.commit_tree(f"{pr.head_sha}^{{tree}}", [start], f"prstack plan: #{pr.number}")
            self._owns[pr.number] = (start, head)
        return self._owns[pr.number]

    def _onto_ids(self, pr: PullRequest) -> dict[str, str]:
        """Patch ids of the onto-point's commits since it forked from the PR, among those that
        touch the PR's files (a commit equal to the PR or to one of its commits must)."""
        base = self.backend.merge_base(pr.head_sha, self.onto.sha) or self.onto.sha
        paths = tuple(sorted({p for h in self._own(pr.number) for p in (h.path, h.old_path) if p}))
        key = (base, paths)
        if key not in self._ids:
            self._ids[key] = self.backend.patch_ids(base, self.onto.sha, paths)
        return self._ids[key]

    def already_in(self, pr: PullRequest) -> str | None:
        """Why the PR is already in the onto-point, or None."""
        b, onto = self.backend, self.onto
        if pr.number in self.present:
            return self.present[pr.number]
        if b.is_ancestor(pr.head_sha, onto.sha):
            return f"its head {pr.head_sha[:10]} is in the history of {onto.label}"
        ids = self._onto_ids(pr)
        own = b.patch_id(pr.change_base, pr.head_sha)
        if own is None:
            return "it changes nothing"
        if own in ids:
            return f"squash-merged: commit {ids[own][:10]} has the same patch id"
        chain = self._chain_base.get(pr.number, pr.base_sha)
        if chain != pr.base_sha and (whole := b.patch_id(chain, pr.head_sha)) in ids:
            return (f"squash-merged with the PRs under it: commit {ids[whole][:10]} "
                    "has the same patch id")
        singles = [c for c in pr.commits if len(c.parents) == 1]
        if singles and len(singles) == len(pr.commits):
            commit_ids = [b.patch_id(c.parents[0], c.sha) for c in singles]
            if all(i is None or i in ids for i in commit_ids):
                return (f"rebased in: all {len(singles)} commit(s) have a patch-id-equal commit "
                        f"in {onto.label}")
        if b.reverse_applies(onto.tree, pr.change_base, pr.head_sha):
            return f"its whole change reverse-applies cleanly on {onto.label}"
        return self.held.get(pr.number)

    def _replay(self, tree: str, picks: Sequence[Pick]) -> _Replay:
        """Pick in order onto `tree`: (new tree, picks that changed something, redundant commits,
        the conflicting outcome and its pick, if any)."""
        kept: list[Pick] = []
        redundant: list[str] = []
        for pick in picks:
            commit = pick.commit
            if pick.paths:
                commit = self.backend.restrict(pick.parent, pick.commit, pick.paths)
            out = self.backend.pick(tree, pick.parent, commit)
            if out.conflicted:
                return _Replay(tree, tuple(kept), tuple(redundant), out, pick)
            if out.tree == tree:
                redundant.append(pick.commit)
            else:
                kept.append(pick)
                tree = out.tree
        return _Replay(tree, tuple(kept), tuple(redundant))

    def _ancestors(self, number: int) -> list[int]:
        seen: list[int] = []
        todo = list(self.prs[number].depends_on)
        while todo:
            n = todo.pop()
            if n not in seen and n in self.prs:
                seen.append(n)
                todo += self.prs[n].depends_on
        return seen

    def _conflicting_paths(self, applied: Sequence[int], with_prs: Sequence[int],
                           picks: Sequence[Pick], plan: Mapping[int, PRPlan]) -> set[str]:
        """Paths where `picks` conflict on the onto-point plus only `with_prs` (in plan order)."""
        tree = self.onto.tree
        for n in applied:
            if n in with_prs:
                tree = self._replay(tree, plan[n].picks).tree
        out = self._replay(tree, picks).conflict
        return set(out.conflicted) if out else set()

    def _conflicts(
        self, pr: PullRequest, state: _State, picks: Sequence[Pick], out: MergeOutcome,
        failed: Pick, plan: Mapping[int, PRPlan],
    ) -> tuple[Conflict, ...]:
        """Explain a conflict: where, which hunks, and with what. The onto-point is to blame for a
        path when the PR conflicts there on the onto-point plus only its own parents; an earlier
        PR when adding just that PR (and its parents) makes it conflict; when no single one does,
        every earlier PR that changed the path."""
        ancestors = self._ancestors(pr.number)
        applied = state.applied
        alone_paths = self._conflicting_paths(applied, ancestors, picks, plan)
        suspects = {
            n: self._conflicting_paths(applied, [*ancestors, n, *self._ancestors(n)], picks, plan)
            for n in applied
            if n not in ancestors and any(_touches(self._own(n), p) for p in out.conflicted)
        }
        found = []
        for path in out.conflicted:
            before = self.backend.file_at(state.tree, path)
            mine = [h for h in self._own(pr.number) if h.path == path or h.old_path == path]
            unfit = tuple(h for h in mine if not fits(h, before)) or tuple(mine)
            touching = [n for n in suspects if _touches(self._own(n), path)]
            culprits = {n for n in touching if path in suspects[n] and path not in alone_paths}
            # a PR conflicts through its parents when they conflict alone: blame the parent
            blamed = [n for n in touching
                      if n in culprits and not culprits.intersection(self._ancestors(n))]
            with_onto = path in alone_paths or not touching
            others = tuple(blamed or ([] if with_onto else touching))
            message = next((m for m in out.messages if path in m), None)
            found.append(Conflict(
                path, failed.commit, conflict_regions(self.backend.file_at(out.tree, path)), unfit,
                with_onto=with_onto, with_prs=others, message=message,
            ))
        return tuple(found)

    def _own(self, number: int) -> list[Hunk]:
        return [h for h in self.hunks if h.pr == number]

    def _conflicts_the_other_way(self, pr: PullRequest, picks: Sequence[Pick], applied: Sequence[int],
                                 plan: Mapping[int, PRPlan]) -> tuple[Conflict, ...]:
        """Conflicts of a PR whose picks went on cleanly with an earlier, unrelated PR that would
        not go on after it (the onto-point, the PR and its parents, then that PR and its parents):
        a pair that conflicts one way conflicts whatever the order given, which only decides
        which of the two goes first."""
        mine = self._ancestors(pr.number)
        paths = {p for h in self._own(pr.number) for p in (h.path, h.old_path) if p}
        found: list[Conflict] = []
        for n in applied:
            if n in mine or pr.number in self._ancestors(n):
                continue
            if not any(_touches(self._own(n), path) for path in paths):
                continue
            tree = self.onto.tree
            for m in applied:
                if m in mine:
                    tree = self._replay(tree, plan[m].picks).tree
            first = self._replay(tree, picks)
            if first.conflict is not None:
                continue
            tree, theirs = first.tree, [n, *self._ancestors(n)]
            for m in applied:
                if m not in theirs or m in mine:
                    continue
                then = self._replay(tree, plan[m].picks)
                if then.conflict is not None and then.failed is not None:
                    out = then.conflict
                    found += [Conflict(
                        path, then.failed.commit, conflict_regions(self.backend.file_at(out.tree, path)),
                        tuple(h for h in self._own(pr.number) if h.path == path or h.old_path == path),
                        with_onto=False, with_prs=(n,),
                        message=f"#{n} does not go on after #{pr.number}: the two conflict in {path}, "
                                "whichever goes first",
                    ) for path in out.conflicted]
                    break
                tree = then.tree
        return tuple(found)

    def run(self, order: Sequence[int]) -> Plan:
        state = _State(self.onto.tree)
        plan: dict[int, PRPlan] = {}
        for number in order:
            pr = self.prs[number]
            parents = [n for n in pr.depends_on if n in self.prs]
            if pr.depends_on:
                parent = self.prs.get(pr.depends_on[-1])
                if parent is not None:
                    self._chain_base[number] = self._chain_base.get(parent.number, parent.base_sha)
            stuck = tuple(n for n in parents if plan[n].status in STUCK)
            if stuck:
                names = ", ".join(f"#{n}" for n in stuck)
                plan[number] = PRPlan(pr, PlanStatus.BLOCKED,
                                      f"it builds on {names}, which cannot go on", blocked_by=stuck)
                continue
            # a target found to lack some of the PR's hunks overrules what its history says
            why = None if number in self.lacking else self.already_in(pr)
            if why is not None:
                plan[number] = PRPlan(pr, PlanStatus.PRESENT, why)
                continue
            picks = _picks_of(pr, self._own_change(pr))
            done = self._replay(state.tree, picks)
            lack = self.lacking.get(number)
            if done.conflict is not None and lack is not None:
                # its whole commits do not go on: re-apply just the files the target lacks
                picks = [Pick(*self._own_change(pr), f"PR #{number}: what the target lacks",
                              squash=True, paths=lack.paths)]
                done = self._replay(state.tree, picks)
            kept, redundant = done.kept, done.redundant
            conflicts: tuple[Conflict, ...] = ()
            if done.conflict is not None and done.failed is not None:
                conflicts = self._conflicts(pr, state, picks, done.conflict, done.failed, plan)
            elif kept:
                conflicts = self._conflicts_the_other_way(pr, picks, state.applied, plan)
            if conflicts:
                plan[number] = PRPlan(pr, PlanStatus.CONFLICT,
                                      _conflict_reason(conflicts, self.onto),
                                      redundant=tuple(redundant), conflicts=conflicts)
                continue
            if not kept:
                plan[number] = PRPlan(pr, PlanStatus.PRESENT, "picking its commits changes nothing",
                                      redundant=tuple(redundant))
                continue
            state.tree = done.tree
            state.applied.append(number)
            reason = f"{len(kept)} commit(s) pick cleanly"
            if lack is not None:
                reason = f"{lack}; " + (
                    "re-applying those files picks cleanly" if kept[0].paths else reason)
            if redundant:
                reason += f"; {len(redundant)} already there are left out"
            plan[number] = PRPlan(pr, PlanStatus.CLEAN, reason, tuple(kept), tuple(redundant))
        return Plan(self.onto, tuple(plan[n] for n in order), state.tree)


def _conflict_reason(conflicts: Sequence[Conflict], onto: Onto) -> str:
    parts = []
    for c in conflicts:
        with_what = [f"#{n}" for n in c.with_prs]
        if c.with_onto:
            with_what.insert(0, onto.label)
        parts.append(f"{c.path} (with {' and '.join(with_what)})")
    return "conflicts in " + ", ".join(parts)


def make_plan(backend: PlanBackend, onto: Onto, changes: Changes, order: Sequence[int],
              known: Known | None = None) -> Plan:
    """Plan the PRs of `changes` (in `order`) onto `onto`, with what is `known` of them there."""
    known = known or Known()
    planner = Planner(backend, onto, changes.prs, changes.hunks, known.present, known.lacking)
    planner.held = dict(known.held)
    return planner.run(order)
