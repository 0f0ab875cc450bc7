"""Lineage after merge, for an audit from a clone: the target placed in upstream's history, each
merged PR's landing, and the hunks of a PR the place holds judged as upstream's later commits left
them (SPEC "Lineage after merge"). A hunk is judged so only where the target's file is the place's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, replace

from prstack.errors import InputError, SourceError
from prstack.match.after_merge import Since, held_upstream, taken_back
from prstack.match.file import match_file
from prstack.match.text import blob_id
from prstack.models import FileChange, Hunk, HunkResult, Landed, Lineage, Placed, PullRequest, Rewrite
from prstack.placement.paths import PathMap, Placement
from prstack.sources.git.changes import StackChanges
from prstack.sources.git.landing import AfterMerge, Fate, Holding
from prstack.sources.git.releases import blobs_at, version_tags
from prstack.sources.git.repo import GitClone
from prstack.targets.base import Target
from prstack.targets.confined import Unreadable


class TargetBlobs:
    """The target's file of each repository path, as git blob ids (None: the target ships the path's
    place but lacks the file); paths the target does not ship are left out."""

    def __init__(self, target: Target, pathmap: PathMap, id_length: int) -> None:
        self.target, self.pathmap, self.id_length = target, pathmap, id_length
        self._known: dict[str, tuple[bool, str | None]] = {}

    def installed(self, path: str) -> str | None:
        location = self.pathmap.locate(path)
        return location.installed_path if location.placement is Placement.SHIPPED else None

    def of(self, path: str) -> tuple[bool, str | None]:
        """(compared, blob id): compared is False where the target does not ship the path's place.
        A file the path map finds for it in another folder (a folder moved since) is not the path's:
        the target lacks the path itself."""
        if path not in self._known:
            location = self.pathmap.locate(path)
            if location.placement is Placement.FILE_MISSING:
                self._known[path] = (True, None)
            elif location.placement is Placement.SHIPPED and location.installed_path and \
                    not _same_place(path, location.installed_path):
                self._known[path] = (True, None)  # (the file of another folder, where this one is gone)
            elif location.placement is Placement.SHIPPED and location.installed_path:
                try:
                    data = self.target.read(location.installed_path)
                except Unreadable:
                    data = None
                self._known[path] = (data is not None, None if data is None else blob_id(data, self.id_length))
            else:
                self._known[path] = (False, None)
        return self._known[path]


def _same_place(path: str, installed: str) -> bool:
    """Whether `installed` is the repository path `path` itself, less or plus a prefix (src/,
    python/), not a file of another folder."""
    return path == installed or path.endswith("/" + installed) or installed.endswith("/" + path)


def place(git: GitClone, target: Target, blobs: TargetBlobs, paths: Sequence[str],
          releases: Sequence[tuple[str, str]]) -> tuple[Placed, list[str]]:
    """The commit the target's files are from, and other commits that match as well: its build
    commit; else the release tag of its version when the tag's blobs equal the target's files for
    `paths`; else the releases (or the default branch's head) whose blobs match best."""
    compared = [p for p in paths if blobs.of(p)[0]]
    if not compared:
        return Placed(None, reason="it ships none of the merged PRs' files"), []

    def matched(commit: str) -> tuple[int, int]:
        """(files equal, files compared) at `commit`: a path the commit lacks and the target has is
        not compared (a file upstream moved since, which a build kept as a leftover beside its new
        place); the hunks' own files are checked again one by one before any is judged by lineage."""
        at = blobs_at(git, [(commit, p) for p in compared])
        pairs = [(a, blobs.of(p)[1]) for a, p in zip(at, compared, strict=True)]
        pairs = [(a, mine) for a, mine in pairs if a is not None or mine is None]
        return sum(a == b for a, b in pairs), len(pairs)

    build = target.evidence.build_commit
    if build:
        try:
            commit = git.resolve(build)
        except InputError:
            commit = None
        if commit is not None:
            return Placed(commit, "build-commit", commit[:12], *matched(commit)), []
    version = target.info.version
    named = [(n, c) for n, c in releases if version and _same_version(n, version)]
    for name, commit in named:
        equal, of = matched(commit)
        if equal == of:
            return Placed(commit, "version-tag", name, equal, of), []
    if named:
        name, commit = named[0]
        equal, of = matched(commit)
        return Placed(None, reason=f"its version {version} names the tag {name}, but {of - equal} of {of} "
                                   "of the PRs' file(s) differ from the tag's (a build of other sources)"), []
    return _by_content(git, blobs, compared, releases)


def _by_content(git: GitClone, blobs: TargetBlobs, compared: Sequence[str],
                releases: Sequence[tuple[str, str]]) -> tuple[Placed, list[str]]:
    """The releases (and the default branch's head, last) whose blobs equal most of the target's
    files (one cat-file for all of them): named by the newest tied release, the others as ties. Only
    a file the target holds counts: a path that both lack is no evidence of the place (every
    release after a deletion lacks it)."""
    at = blobs_at(git, [(c, p) for _, c in releases for p in compared])
    width = len(compared)
    mine = [blobs.of(p)[1] for p in compared]
    scores = [sum(a is not None and a == b for a, b in zip(at[i * width:(i + 1) * width], mine, strict=True))
              for i in range(len(releases))]
    best = max(scores)
    if best == 0:
        return Placed(None, reason=f"no release tag holds any of its {width} file(s) of the PRs as they are"), []
    tied = [releases[i] for i, s in enumerate(scores) if s == best]
    pick = len(tied) - 2 if len(tied) > 1 and tied[-1] == releases[-1] else len(tied) - 1
    name, commit = tied[pick]
    return Placed(commit, "content", name, best, width), [c for i, (_, c) in enumerate(tied) if i != pick]


def _same_version(tag: str, version: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(tag) == Version(version.split("+", 1)[0])
    except InvalidVersion:
        return False


def after_merge(git: GitClone, changes: StackChanges, target: Target, pathmap: PathMap,
                results: Sequence[HunkResult]) -> tuple[tuple[HunkResult, ...], Lineage | None]:
    """`results` with each hunk of a merged PR that the target's place holds judged by lineage,
    and what lineage found; unchanged (None) when no PR of the stack merged. History git cannot
    read (a shallow or damaged clone) leaves the text verdicts, and the report says why."""
    try:
        return _after_merge(git, changes, target, pathmap, results)
    except SourceError as e:
        return tuple(results), Lineage(Placed(None, reason=f"its history could not be read ({e})"), {})


def _after_merge(git: GitClone, changes: StackChanges, target: Target, pathmap: PathMap,
                 results: Sequence[HunkResult]) -> tuple[tuple[HunkResult, ...], Lineage | None]:
    landings = Landings.of(git, changes)
    if landings is None:
        return tuple(results), None
    blobs = TargetBlobs(target, pathmap, landings.id_length)
    paths = sorted({r.hunk.path for r in results if r.hunk.pr in landings.landed})
    default = (changes.default_ref.removeprefix("refs/remotes/").removeprefix("refs/heads/"),
               git.resolve(changes.default_ref))
    placed, ties = place(git, target, blobs, paths, [*landings.releases, default])
    out = list(results)
    if placed.ref is not None:
        holdings = {n: [landings.holding(n, ref) for ref in (placed.ref, *ties)] for n in landings.landed}
        if any(len({h.holds for h in hs}) > 1 for hs in holdings.values()):
            placed = Placed(None, reason=f"{len(ties) + 1} releases hold its files alike, and not all of them "
                                         "hold the merged PRs")
        else:
            for n, hs in holdings.items():
                _judge_pr(landings.after, out, n, hs[0], placed, blobs)
    return tuple(out), Lineage(placed, landings.landed)


def at_ref(git: GitClone, changes: StackChanges, results: Sequence[HunkResult], ref: str, name: str
           ) -> tuple[tuple[HunkResult, ...], Lineage | None, dict[int, bool]]:
    """`results` judged in the tree of `ref` itself, each merged PR's hunks by lineage where `ref`
    holds it; what lineage found; and whether `ref` holds each merged PR (landed, not taken back)."""
    landings = Landings.of(git, changes)
    if landings is None:
        return tuple(results), None, {}
    placed = Placed(ref, "ref", name)
    out = list(results)
    holds: dict[int, bool] = {}
    for n in landings.landed:
        holding = landings.holding(n, ref)
        holds[n] = holding.holds
        _judge_pr(landings.after, out, n, holding, placed, None)
    return tuple(out), Lineage(placed, landings.landed), holds


@dataclass
class Landings:
    """The merged PRs of a stack, where each landed, and the clone's releases."""

    after: AfterMerge
    landed: dict[int, Landed]
    prs: dict[int, PullRequest]
    releases: list[tuple[str, str]]

    @classmethod
    def of(cls, git: GitClone, changes: StackChanges) -> Landings | None:
        """None when no PR of the stack merged (or none with a landing the clone shows)."""
        facts = changes.stack.facts
        after = AfterMerge(git, changes.default_ref)
        prs = {pr.number: pr for pr in changes.prs}
        named = after.naming(list(prs))
        landed = {n: got for n in prs if n in facts and (got := after.landed(facts[n])) is not None}
        for _ in range(2):  # (a PR collected into the one above it: that one's landing first)
            landed |= _landed_by_content(git, changes, [n for n in prs if n not in landed], landed, named,
                                         after.line_position)
        if not landed:
            return None
        merged = {n: prs[n] for n in landed}
        releases = version_tags(git)
        landed = {n: _with_releases(got, after.in_releases(got, n, _shas(merged[n]), releases), releases)
                  for n, got in landed.items()}
        return cls(after, landed, merged, releases)

    @property
    def id_length(self) -> int:
        """40 for SHA-1 object ids, 64 for SHA-256."""
        return len(next(iter(self.landed.values())).commit)

    def holding(self, number: int, ref: str) -> Holding:
        return self.after.holding(self.landed[number], number, _shas(self.prs[number]), ref)


def _with_releases(landed: Landed, held: Sequence[bool | None], releases: Sequence[tuple[str, str]]) -> Landed:
    """`landed` with its first release and the later releases that took it back (a revert; a
    release of another line that never had it is not one)."""
    first = next((i for i, h in enumerate(held) if h), None)
    if first is None:
        return landed
    gaps = tuple(releases[i][0] for i in range(first + 1, len(held)) if held[i] is False)
    return replace(landed, first_release=releases[first][0], taken_back_in=gaps)


def _landed_by_content(git: GitClone, changes: StackChanges, numbers: Sequence[int], landed: Mapping[int, Landed],
                       named: Mapping[int, list[str]], position: Mapping[str, int]) -> dict[int, Landed]:
    """PRs the clone does not show merged whose change landed in a default-branch commit naming it,
    or naming a PR above it in the stack, or where a PR above it landed (a PR collected into
    another's squash or merge): the oldest such commit whose files hold each hunk of the PR's own
    change, or, for a hunk they lack, change its file in the PR above (which rewrote it)."""
    if not numbers or not (landed or any(named.values())):
        return {}  # no commit names a PR of the stack, none landed: nothing to look in
    stack = changes.stack
    below = {m: stack.below(m) for m in stack.order}
    above = {n: [n, *(m for m in stack.order if n in below[m])] for n in numbers}
    paths: dict[int, set[str]] = {}
    for h in changes.hunks:
        paths.setdefault(h.pr, set()).add(h.path)
    out: dict[int, Landed] = {}
    for n in numbers:
        hunks = [h for h in changes.hunks if h.pr == n]
        rewritten = set().union(*(paths.get(m, set()) for m in above[n][1:]))
        candidates = sorted({c for m in above[n] for c in named.get(m, [])}, key=lambda c: position.get(c, 0))
        candidates += [got.commit for m in above[n][1:] if (got := landed.get(m)) is not None]
        for commit in dict.fromkeys(candidates):
            if any(h.lines for h in hunks) and _holds_hunks(git, commit, hunks, rewritten):
                out[n] = Landed(commit, "content")
                break
    return out


def _holds_hunks(git: GitClone, commit: str, hunks: Sequence[Hunk], rewritten: Set[str]) -> bool:
    """Whether the tree of `commit` holds every one of `hunks` (judged as the audit judges a file;
    a change with no text, a file moved or deleted, by the file being there or not) but those in
    the files of `rewritten` (changed again by the PRs above them)."""
    by_path: dict[str, list[Hunk]] = {}
    for h in hunks:
        by_path.setdefault(h.path, []).append(h)
    for path, mine in by_path.items():
        if path in rewritten:
            continue
        text = git.objects.file_at(commit, path)
        if any(not h.lines and (text is None) != (h.change is FileChange.DELETED) for h in mine):
            return False
        verdicts = match_file([h for h in mine if h.lines], text, installed_path=path)
        if not all(v.status.present for v in verdicts):
            return False
    return True


def _judge_pr(after: AfterMerge, out: list[HunkResult], number: int, holding: Holding, placed: Placed,
              blobs: TargetBlobs | None) -> None:
    """The hunks of PR `number` in `out`, judged as the place holds them (in place). With `blobs`,
    only where the target's file is the place's; without, `out` was judged in the place's tree."""
    mine = [i for i, r in enumerate(out) if r.hunk.pr == number]
    if not holding.holds:
        if holding.reverted_by is not None:
            for i in mine:
                out[i] = taken_back(out[i], holding.reverted_by)
        return
    assert holding.via is not None and placed.ref is not None
    need = [i for i in mine if out[i].status.shipped and not out[i].status.present]
    parts = holding.parts_reverted
    for i in [i for i in need if set(out[i].hunk.commits) & set(parts)]:
        out[i] = taken_back(out[i], next(parts[c] for c in out[i].hunk.commits if c in parts))
    need = [i for i in need if not set(out[i].hunk.commits) & set(parts)]
    if not need:
        return
    fates = after.fates(holding.via, placed.ref, [out[i].hunk for i in need])
    at_ref = dict(zip((f.path for f in fates), blobs_at(after.git, [(placed.ref, f.path) for f in fates]),
                      strict=False)) if blobs is not None else {}
    for i, fate in zip(need, fates, strict=True):
        if blobs is not None:
            compared, blob = blobs.of(fate.path)
            if not compared or blob != at_ref.get(fate.path):
                continue  # the target's file is not the place's: its text verdict stands
        out[i] = held_upstream(out[i], _since(fate, out[i], placed, holding.via, blobs))


def _since(fate: Fate, result: HunkResult, placed: Placed, via: str, blobs: TargetBlobs | None) -> Since:
    name = placed.name or (placed.ref or "")[:12]
    rewrite = Rewrite(fate.pr, fate.commit, upstream=True) if fate.commit is not None else None
    if fate.path != result.hunk.path:
        what = f"moved to {fate.path} by {_by(fate.moved_by, fate)}"
        moved = blobs.installed(fate.path) if blobs is not None else fate.path
    elif fate.deleted_by is not None:
        what, moved = f"its file deleted since by {_by(fate.deleted_by, fate)}", None
    elif fate.rewritten_by is not None:
        what, moved = f"since rewritten by {_by(fate.rewritten_by, fate)}", None
    else:
        what, moved = "as the landing left it", None
    return Since(f"merged: {name} holds its landing {via[:10]}; {what}", rewrite, moved, fate.rewrite)


def _by(commit: str | None, fate: Fate) -> str:
    """"1a2b3c4d5e (#12)": the commit, with the PR `fate` names where it is the commit named."""
    if commit is None:
        return ""
    return commit[:10] + (f" (#{fate.pr})" if fate.pr is not None and commit == fate.commit else "")


def _shas(pr: PullRequest) -> list[str]:
    return [c.sha for c in pr.commits]


def placed_sentence(placed: Placed) -> str:
    """How the target was tied to history, for the `Build:` line."""
    if placed.ref is None:
        return f"not placed in the clone's history ({placed.reason}): merged PRs judged by text"
    how = {"build-commit": "its build commit", "version-tag": "the tag of its version",
           "content": "content, the best match of the releases and the default branch"}.get(
        placed.how or "", placed.how or "")
    return (f"placed at {placed.name} by {how} ({placed.files_matched} of {placed.files_compared} of the "
            "merged PRs' file(s) equal)")
