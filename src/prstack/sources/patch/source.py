"""The audit of patch files: each patch one PR of a stack, its hunks judged against a target with no clone."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace

from prstack.audit import audit
from prstack.build import join_build
from prstack.errors import InputError
from prstack.hunks import parse_diff
from prstack.match.text import LEVELS, LOOSEST, decode, trivial
from prstack.models import Commit, Hunk, HunkResult, HunkStatus, PullRequest
from prstack.report import AuditReport
from prstack.sources.patch.compose import compose_steps
from prstack.sources.patch.files import Patch
from prstack.targets.base import Target, TargetSpec, open_target
from prstack.targets.confined import Unreadable

__all__ = ["TARGET_ALONE", "audit_patches", "like_repo", "patch_stack"]

TARGET_ALONE = ("judged from the target alone: a patch gives no file before it, so whether the block was "
                "already in the package is not known")
"""The note of a relocated hunk of a patch (a clone tells a block there all along; a patch cannot)."""


def patch_stack(patches: Sequence[Patch]) -> tuple[list[PullRequest], list[Hunk]]:
    """The patches as a stack, bottom first: each a PR (the number it names, else its 1-based
    position), stacked on the one before it, its hunks the net hunks of its own mails by path."""
    prs: list[PullRequest] = []
    hunks: list[Hunk] = []
    seen: dict[int, str] = {}
    for at, patch in enumerate(patches, 1):
        number = patch.number if patch.number is not None else at
        if number in seen:
            raise InputError(f"--patch {patch.name} and --patch {seen[number]} are both PR #{number}; "
                             "give each patch once (rename one to tell them apart).")
        seen[number] = patch.name
        commits = tuple(Commit(m.sha or "", (), m.subject or "", m.author, m.message) for m in patch.mails
                        if m.sha or m.subject)
        steps: defaultdict[str, list[list[Hunk]]] = defaultdict(list)
        for mail in patch.mails:
            try:
                parsed = parse_diff(mail.diff, number)
            except InputError as exc:
                raise InputError(f"--patch {patch.name}: {exc}") from None
            by_path: defaultdict[str, list[Hunk]] = defaultdict(list)
            for h in parsed:
                by_path[h.path].append(replace(h, commits=(mail.sha,)) if mail.sha else h)
            for path, file_hunks in by_path.items():
                steps[path].append(file_hunks)
        # in git's path order, as a diff of the whole patch lists them; a file several mails change
        # gets its net hunks where they compose, else each mail's in turn
        for path in sorted(steps, key=lambda p: p.encode("utf-8", "surrogateescape")):
            each = steps[path]
            net = compose_steps(each) if len(each) > 1 else None
            hunks += net if net is not None else [h for step in each for h in step]
        head = next((m.sha for m in reversed(patch.mails) if m.sha), "")
        prs.append(PullRequest(
            number=number, head_sha=head, base_sha=prs[-1].head_sha if prs else "",
            depends_on=(prs[-1].number,) if prs else (), commits=commits, patch=patch.name,
        ))
    if not hunks:
        names = ", ".join(p.name for p in patches)
        raise InputError(f"--patch {names}: no file change in it; give a patch that changes files.")
    return prs, hunks


def audit_patches(patches: Sequence[Patch], spec: TargetSpec) -> AuditReport:
    """Open the target and judge every hunk of the patches: the same matcher as for PRs, with
    no file before or after each patch (no clone): a hunk's place is found from the target alone."""
    prs, hunks = patch_stack(patches)
    paths = sorted({p for h in hunks for p in (h.path, h.old_path) if p})
    target = open_target(spec, sorted({h.path for h in hunks}), paths)
    repo_files = like_repo(paths, target.files())
    report = audit(prs, hunks, target, repo_files, lambda rev, path: None)
    results = _noted(report.results, target)
    report = replace(report, results=results)
    build = join_build(target.evidence, report.target.distribution or report.target.kind, report.prs, results)
    return replace(report, build=build)


def like_repo(paths: Sequence[str], installed: Iterable[str]) -> list[str]:
    """The repository's files as far as a patch and the target tell them: the patch's paths, and
    beside each, the files the target holds in the folder of that name (`src/kvs/new.py` and a
    target's `kvs/model.py` give `src/kvs/model.py`). With a clone, the repository's own files
    tell how its paths map to the target's (prstack.placement.paths); these stand in for them."""
    by_dir: defaultdict[tuple[str, ...], list[str]] = defaultdict(list)
    for path in installed:
        parts = path.split("/")
        if len(parts) > 1:
            by_dir[tuple(parts[:-1])].append(parts[-1])
    out = set(paths)
    for path in paths:
        folder = tuple(path.split("/")[:-1])
        for cut in range(len(folder)):
            for name in by_dir.get(folder[cut:], ()):
                out.add("/".join((*folder, name)))
    return sorted(out)


def _noted(results: Sequence[HunkResult], target: Target) -> tuple[HunkResult, ...]:
    """`results` with a note where a clone would have told more: a relocated block may have been
    in the package all along; an applied pure addition of a line the target's file holds more
    often than the patches add it may have found lines that were there before (a clone counts
    them in the file at the PR's base; a patch has no such file)."""
    adds: Counter[tuple[str, str]] = Counter()
    for r in results:
        for t in r.hunk.added:
            adds[(r.hunk.path, _loose(t))] += 1
    counts: dict[str, Counter[str]] = {}

    def in_target(path: str) -> Counter[str]:
        if path not in counts:
            try:
                data = target.read(path)
            except Unreadable:
                data = None
            counts[path] = Counter(map(_loose, decode(data))) if data is not None else Counter()
        return counts[path]

    out = []
    for r in results:
        note = None
        if r.status is HunkStatus.RELOCATED:
            note = TARGET_ALONE
        elif r.status is HunkStatus.APPLIED and r.hunk.added and not r.hunk.removed and r.installed_path:
            for t in r.hunk.added:
                if trivial(t):
                    continue
                now, added = in_target(r.installed_path)[_loose(t)], adds[(r.hunk.path, _loose(t))]
                if now > added:
                    note = (f"judged from the target alone: the added line {t.strip()!r} is in the file {now} "
                            f"times, the patches add it {added}; whether it was there before is not known")
                    break
        if note is not None:
            note = f"{r.evidence.note}; {note}" if r.evidence.note else note
            r = replace(r, evidence=replace(r.evidence, note=note))
        out.append(r)
    return tuple(out)


_loose = LEVELS[LOOSEST][1]
