"""Which commits of a child PR are copies of its parent's (sha, patch-id, commit-id, subject and author). Pure."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Mapping, Sequence

from prstack.models import Commit
from prstack.stack.facts import CommitMatch, MatchKind, PRFacts
from prstack.stack.markers import commit_id


def match_copies(
    parent: Sequence[Commit],
    child: Sequence[Commit],
    patch_ids: Mapping[str, str],
    paths: Mapping[str, frozenset[str]] | None = None,
) -> list[CommitMatch]:
    """Pair each parent commit with its copy among the child's commits: same sha, else same
    patch-id, else same commit-id trailer, else same subject and author (an edited copy).

    Patch-ids are read only for the commits `copy_candidates` names (a patch-id can be costly)."""
    need = copy_candidates(parent, child, patch_ids, paths)
    by_sha = {c.sha for c in child}
    by_patch: dict[str, list[str]] = {}
    by_cid: dict[str, list[str]] = {}
    by_subject: dict[tuple[str, str], list[str]] = {}
    for c in child:
        if c.sha in need and (pid := patch_ids.get(c.sha)) is not None:
            by_patch.setdefault(pid, []).append(c.sha)
        if (cid := commit_id(c.message)) is not None:
            by_cid.setdefault(cid, []).append(c.sha)
        by_subject.setdefault((c.subject, c.author), []).append(c.sha)
    used: set[str] = set()
    matches: list[CommitMatch] = []

    def take(candidates: Iterable[str]) -> str | None:
        return next((s for s in candidates if s not in used), None)

    for p in parent:
        found: tuple[str | None, MatchKind]
        if p.sha in by_sha and p.sha not in used:
            found = (p.sha, MatchKind.SHA)
        elif p.sha in need and (pid := patch_ids.get(p.sha)) and (s := take(by_patch.get(pid, ()))):
            found = (s, MatchKind.PATCH_ID)
        elif (cid := commit_id(p.message)) and (s := take(by_cid.get(cid, ()))):
            found = (s, MatchKind.COMMIT_ID)
        else:
            same = by_subject.get((p.subject, p.author), ())
            found = (take(s for s in same if _overlap(p.sha, s, paths or {})), MatchKind.SUBJECT)
        if found[0] is not None:
            used.add(found[0])
            matches.append(CommitMatch(p.sha, found[0], found[1]))
    return matches


def may_hold_copies(parent: PRFacts, child: PRFacts) -> bool:
    """Whether `match_copies` could pair a commit of the parent's with one of the child's at all:
    only when both sides have a commit in common, or a commit-id, a subject and author, or the
    paths a commit changes (a patch-id hashes them; a commit whose paths are unknown could share
    one with any). Most pairs of unrelated PRs share none of these: this answers them cheaply."""
    ours, theirs = parent.copy_keys_own, child.copy_keys
    return ours is None or theirs is None or not ours.isdisjoint(theirs)


def copy_candidates(
    parent: Sequence[Commit],
    child: Sequence[Commit],
    patch_ids: Container[str],
    paths: Mapping[str, frozenset[str]] | None = None,
) -> set[str]:
    """The commits of either side whose patch-ids (`patch_ids`: the commits that have one) can
    equal one on the other side: the only ones `match_copies` reads. A patch-id hashes the names
    of the files it changes, so two commits share one only when they change the same paths: a
    commit is left out when its paths are known and no commit with a patch-id on the other side
    changes exactly those (or has unknown paths)."""
    paths = paths or {}
    ours = [c.sha for c in parent if c.sha in patch_ids]
    theirs = [c.sha for c in child if c.sha in patch_ids]
    if not ours or not theirs:
        return set()
    return _could_match(ours, theirs, paths) | _could_match(theirs, ours, paths)


def _could_match(side: list[str], other: list[str], paths: Mapping[str, frozenset[str]]) -> set[str]:
    """The commits of `side` (all with patch-ids) whose patch-id may equal one of `other`'s."""
    names = set()
    for sha in other:
        if sha not in paths:
            return set(side)  # unknown paths: any patch-id may be its
        names.add(paths[sha])
    return {sha for sha in side if sha not in paths or paths[sha] in names}


class _Layered(Mapping[str, str]):
    """`{**below, **top}` without reading every value (a source may compute patch-ids on demand)."""

    def __init__(self, top: Mapping[str, str], below: Mapping[str, str]) -> None:
        self.top, self.below = top, below

    def __getitem__(self, key: str) -> str:
        return self.top[key] if key in self.top else self.below[key]

    def __contains__(self, key: object) -> bool:
        return key in self.top or key in self.below

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self.below, *self.top]))

    def __len__(self) -> int:
        return len(set(self.top) | set(self.below))


def _overlap(a: str, b: str, paths: Mapping[str, frozenset[str]]) -> bool:
    """True when the two commits change a common path (or when either's paths are unknown)."""
    if a not in paths or b not in paths:
        return True
    return bool(paths[a] & paths[b])
