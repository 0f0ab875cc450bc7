"""The upkeep: a carried set (PRs of a clone, patch files) judged in each release's tree and in the
candidate, each item's state, first release and verdict. Orchestration only: the sources read,
`TreeJudge` and the audit judge, `prstack.upkeep.judging` decides."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from prstack.audit import audit_opened
from prstack.errors import InputError, Option
from prstack.models import Hunk, HunkResult, Lineage, PRState, PullRequest, TargetKind
from prstack.sources.base import PRMetadata, PRSource
from prstack.sources.git.changes import StackChanges
from prstack.sources.git.held import at_ref
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets.base import Target, TargetSpec
from prstack.targets.confined import Unreadable
from prstack.targets.spec import onto_or_target
from prstack.upkeep.judging import first_release, landing, taken_back_note, verdict
from prstack.upkeep.many_trees import GroupKey, TreeJudge, grouped
from prstack.upkeep.trees import blob_ids, check_pattern, commits_touching, release_tags
from prstack.upkeep.values import Candidate, HunkUpkeep, Item, ItemState, MergedBy, Release, UpkeepReport, Verdict
from prstack.upkeep.wheels import wheel_releases

__all__ = ["Carried", "Upkeep", "UpkeepRequest", "upkeep"]


@dataclass(frozen=True)
class Carried:
    """What is carried: PRs of the clone and patch files (folders, quilt series), with notes."""

    numbers: tuple[int, ...] = ()
    patches: tuple[str, ...] = ()
    notes: Mapping[str, str] = field(default_factory=dict)
    """A note per item: keyed by "#N" for a PR, by the patch's name for a patch."""
    metadata: Mapping[int, PRMetadata] = field(default_factory=dict)
    """What GitHub says of the carried PRs (titles, states), where it was asked (--repo)."""


@dataclass(frozen=True)
class UpkeepRequest:
    """What an upkeep is asked: the carried set, the clone its PRs and releases come from, the
    releases (`releases`: a tag glob; or the wheels `release_wheels`) and the candidate (`onto`, a
    ref of the clone, else `target`, as an audit opens it, else the newest release)."""

    carried: Carried
    git: GitClone | None = None
    releases: str | None = None
    onto: str | None = None
    target: TargetSpec | None = None
    release_wheels: tuple[str, ...] = ()
    stdin: bytes = b""
    """Standard input's bytes, as the caller read them: the patch given as '-'."""


@dataclass(frozen=True)
class Upkeep:
    """The report, and the candidate's files by repository path (for a refreshed series)."""

    report: UpkeepReport
    candidate_file: Callable[[str], bytes | None]
    judgements: int = 0
    """How many (PR, file, blob) judgements the releases took."""


def upkeep(request: UpkeepRequest) -> Upkeep:
    """Each carried item across the releases and against the candidate (see UpkeepRequest)."""
    carried, git, releases, onto = request.carried, request.git, request.releases, request.onto
    target, release_wheels = request.target, request.release_wheels
    if not carried.numbers and not carried.patches:
        raise InputError("nothing carried: give PR numbers, ", Option("patch"),
                         " FILE, or a manifest ([tool.prstack] in "
                         "pyproject.toml, or prstack.toml) listing them.")
    if carried.numbers and git is None:
        raise InputError("upkeep of PRs reads them and the releases from a clone: give ", Option("git"), " PATH.")
    onto_or_target(onto, target is not None, "the candidate")
    if release_wheels and releases is not None:
        raise InputError(Option("releases"), " picks tags of the clone and ", Option("release_wheel"),
                         " gives wheels; name the releases "
                         "one way.")
    tags = wheel_releases(release_wheels) if release_wheels else release_tags(git, releases) if git is not None else []
    if git is not None and not release_wheels:
        check_pattern(tags, releases, git)
    if onto is None and target is None and release_wheels:
        target = TargetSpec(TargetKind.WHEEL, tags[-1].wheel)
    if onto is None and target is None:
        if not tags:
            raise InputError("no candidate: give ", Option("onto"), " REF with ", Option("git"), ", or a target (",
                             Option("wheel"), ", ", Option("site_packages"), ", ",
                             Option("tree"), ", ", Option("installed"), ", ", Option("python"),
                             ") of the release you move to.")
        onto = tags[-1].name
    candidate_sha = git.resolve(onto) if git is not None and onto is not None else None
    if onto is not None and candidate_sha is None:
        raise InputError(Option("onto"), " names a ref of a clone: give ", Option("git"),
                         " PATH too, or a target instead.")
    sources: list[tuple[PRSource, Sequence[PullRequest], Sequence[Hunk], dict[int, str | None]]] = []
    default_sha: str | None = None
    how: dict[int, tuple[str | None, str | None]] = {}
    stack: StackChanges | None = None
    if carried.numbers:
        assert git is not None
        clone = ClonePRs(git, carried.numbers, metadata=carried.metadata)
        changes = clone.load().finish()
        default_sha = git.resolve(changes.default_ref)
        how = {n: (f.merged, f.landed) for n, f in changes.stack.facts.items()}
        stack = changes
        sources.append((clone, changes.prs, changes.hunks, {}))
    if carried.patches:
        from prstack.sources.patch.files import read_patch_files, split_patch
        from prstack.sources.patch.source import PatchPRs

        patches = [split_patch(f) for f in read_patch_files(carried.patches, io.BytesIO(request.stdin))]
        files = PatchPRs(patches)
        named = {pr.number: (p.number is not None) for pr, p in zip(files.changes.prs, patches, strict=True)}
        sources.append((files, files.changes.prs, files.changes.hunks,
                        {n: None for n, ok in named.items() if not ok}))
        if git is not None and default_sha is None:
            default_sha = git.resolve(git.default_ref)
    items: list[Item] = []
    judgements = 0
    read_candidate: Callable[[str], bytes | None] = lambda path: None  # noqa: E731
    candidate = Candidate(onto or "", "ref", candidate_sha)
    for source, prs, hunks, unnamed in sources:
        groups = grouped(hunks)
        in_trees: dict[str, dict[GroupKey, list[HunkResult]]] = {}
        held: dict[str, dict[GroupKey, tuple[bool, ...]]] = {}
        judge: TreeJudge | None = None
        if git is not None:
            judge = TreeJudge({pr.number: pr for pr in prs}, groups, blob_ids=lambda names: blob_ids(git, names),
                              read=git.objects.file_at, prefetch=git.objects.prefetch_files,
                              with_sides=source.with_files)
            in_trees = judge.judge([c for c in (candidate_sha,) if c is not None])
            held = judge.presence(list(dict.fromkeys([r.commit for r in tags if r.commit is not None]
                                                     + ([default_sha] if default_sha else []))))
            judgements += judge.judgements
        lineage: Lineage | None = None
        holds: dict[int, bool] = {}
        if candidate_sha is not None:
            at_candidate = _by_hunk(groups, in_trees[candidate_sha])
            assert git is not None
            read_candidate = _ref_reader(git, candidate_sha)
            if stack is not None and source.with_files and isinstance(source, ClonePRs):
                judged, lineage, holds = at_ref(git, stack, list(at_candidate.values()), candidate_sha, onto or "")
                at_candidate = {id(r.hunk): r for r in judged}
        else:
            assert target is not None
            report, opened = audit_opened(source, target)
            lineage = report.lineage
            holds = {n: all(r.status.present for r in report.results if r.hunk.pr == n and r.status.shipped)
                     for n in (lineage.landed if lineage is not None and lineage.placed.ref else {})}
            by_value = {r.hunk: r for r in report.results}
            at_candidate = {id(h): by_value[h] for h in hunks if h in by_value}
            candidate = Candidate(opened.info.path, opened.info.kind.value, opened.info.vcs_commit,
                                  opened.info.version)
            read_candidate = _target_reader(opened, source, prs, hunks)
        default = _held_by_hunk(groups, held[default_sha]) if default_sha is not None else {}
        per_release = [_held_by_hunk(groups, held[r.commit]) if r.commit is not None else _in_wheel(source, hunks, r)
                       for r in tags]
        names = [r.name for r in tags]
        of_pr: dict[int, list[Hunk]] = {}
        for h in hunks:
            of_pr.setdefault(h.pr, []).append(h)
        per_pr = {pr.number: [HunkUpkeep(at_candidate.get(id(h)) or _unjudged(h),
                                         landing([rel[id(h)] for rel in per_release], names))
                              for h in of_pr.get(pr.number, [])] for pr in prs}
        if git is not None and judge is not None:
            brought = _bringing(git, judge, [u for ups in per_pr.values() for u in ups], tags,
                                candidate_sha or default_sha)
            per_pr = {n: [replace(u, commit=brought.get(id(u.result.hunk))) for u in ups] for n, ups in per_pr.items()}
        for pr in prs:
            ups = tuple(per_pr[pr.number])
            results = [u.result for u in ups]
            counted = [u for u in ups if u.counted]
            first, note = first_release([u.landing for u in counted], names)
            if lineage is not None and (came := lineage.landed.get(pr.number)) is not None:
                first, note = came.first_release, taken_back_note(came, names) if came.first_release else note
            merged, landed = how.get(pr.number, (None, None)) if pr.patch is None else (None, None)
            if lineage is not None and (came := lineage.landed.get(pr.number)) is not None:
                landed = came.commit
            state, merged_by = _state(pr, merged, [default[id(u.result.hunk)] for u in counted] if default else None)
            number = None if pr.number in unnamed else pr.number
            key = pr.patch if pr.patch is not None else f"#{pr.number}"
            settled = Verdict.RETIRE if holds.get(pr.number) else verdict(results)
            items.append(Item(pr, number, pr.patch, state, merged_by, landed, first, note, settled, ups,
                              carried.notes.get(key)))
    return Upkeep(UpkeepReport(tuple(tags), candidate, tuple(items)), read_candidate, judgements)


def _bringing(git: GitClone, judge: TreeJudge, ups: Sequence[HunkUpkeep], releases: Sequence[Release],
              tip: str | None) -> dict[int, str]:
    """By the id of each hunk present in the candidate: the upstream commit that brought it, the
    first commit (oldest first) of those changing its file between the release before the one it
    landed in and that release (with no release holding it: after the newest, up to `tip`) whose
    tree holds it. The commits are judged as the releases are: each distinct blob once."""
    if any(r.commit is None for r in releases):  # (wheels: no commits to look between)
        return {}
    names = [r.name for r in releases]
    spans: dict[int, tuple[str | None, str]] = {}
    for u in ups:
        if not (u.counted and u.result.status.present):
            continue
        where = u.landing.landed_in or u.landing.first_seen
        if where is not None:
            at = names.index(where)
            commit = releases[at].commit
            assert commit is not None
            spans[id(u.result.hunk)] = (releases[at - 1].commit if at else None, commit)
        elif tip is not None:
            spans[id(u.result.hunk)] = (releases[-1].commit if releases else None, tip)
    by_span: dict[tuple[str | None, str], set[str]] = {}
    for u in ups:
        if id(u.result.hunk) in spans:
            by_span.setdefault(spans[id(u.result.hunk)], set()).add(u.result.hunk.path)
    touching = {span: commits_touching(git, span[0], span[1], sorted(paths)) for span, paths in by_span.items()}
    asked: dict[tuple[GroupKey, tuple[str | None, str]], list[Hunk]] = {}
    for u in ups:
        h = u.result.hunk
        if id(h) in spans:
            asked.setdefault(((h.pr, h.path), spans[id(h)]), []).append(h)
    searches = [(key, touching[span].get(key[1], []), [judge.index_in_group(h) for h in hs])
                for (key, span), hs in asked.items()]
    out: dict[int, str] = {}
    for hs, firsts in zip(asked.values(), judge.first_holding(searches), strict=True):
        out |= {id(h): commit for h, commit in zip(hs, firsts, strict=True) if commit is not None}
    return out


def _in_wheel(source: PRSource, hunks: Sequence[Hunk], release: Release) -> dict[int, bool]:
    """Presence by the id of the hunk in a release given as a wheel (judged as an audit of it judges)."""
    report, _ = audit_opened(source, TargetSpec(TargetKind.WHEEL, release.wheel))
    present = {r.hunk: r.status.present for r in report.results}
    return {id(h): present.get(h, False) for h in hunks}


def _by_hunk(groups: Mapping[GroupKey, list[Hunk]], results: Mapping[GroupKey, list[HunkResult]]
             ) -> dict[int, HunkResult]:
    """Verdicts by the id of the hunk they judge."""
    return {id(h): r for key, hs in groups.items() for h, r in zip(hs, results[key], strict=True)}


def _held_by_hunk(groups: Mapping[GroupKey, list[Hunk]], held: Mapping[GroupKey, tuple[bool, ...]]
                  ) -> dict[int, bool]:
    """Presence by the id of the hunk."""
    return {id(h): p for key, hs in groups.items() for h, p in zip(hs, held[key], strict=True)}


def _ref_reader(git: GitClone, sha: str) -> Callable[[str], bytes | None]:
    return lambda path: git.objects.file_at(sha, path)


def _unjudged(h: Hunk) -> HunkResult:
    """A hunk the candidate's audit gave no verdict for: not read, so not present."""
    from prstack.models import HunkStatus, MatchEvidence

    return HunkResult(h, HunkStatus.UNVERIFIABLE, unread=True, evidence=MatchEvidence(note="not judged"))


def _state(pr: PullRequest, merged: str | None, at_default: Sequence[bool] | None
           ) -> tuple[ItemState, MergedBy | None]:
    """Merged as the stack's facts say (ancestry, rebase, squash, content, GitHub), else by the
    content of the default branch's tree (every counted hunk there); closed where known."""
    if merged is not None:
        return ItemState.MERGED, MergedBy(merged) if merged in MergedBy.__members__.values() else MergedBy.GITHUB
    if pr.state is PRState.MERGED:
        return ItemState.MERGED, MergedBy.GITHUB
    if at_default and all(at_default):
        return ItemState.MERGED, MergedBy.CONTENT
    if pr.state is PRState.CLOSED:
        return ItemState.CLOSED, None
    return (ItemState.OPEN if pr.patch is None else ItemState.UNKNOWN), None


def _target_reader(opened: Target, source: PRSource, prs: Sequence[PullRequest], hunks: Sequence[Hunk]
                   ) -> Callable[[str], bytes | None]:
    """The target's copy of a repository path, placed as the audit placed it."""
    from prstack.placement.paths import PathMap, Placement

    loaded = source.load().finish()
    pathmap = PathMap(opened.files(), source.repo_files(loaded, opened.files()))

    def read(path: str) -> bytes | None:
        location = pathmap.locate(path)
        if location.placement is not Placement.SHIPPED or not location.installed_path:
            return None
        try:
            return opened.read(location.installed_path)
        except Unreadable:
            return None

    return read
