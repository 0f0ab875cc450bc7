"""Patch files as a PR source: each patch one PR of a stack, its hunks from its mails, no clone."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from prstack.diff.hunks import parse_diff
from prstack.errors import InputError, Option
from prstack.models import Changes, Commit, FileChange, Hunk, HunkResult, Lineage, PullRequest
from prstack.sources.base import Loaded, RepoHint
from prstack.sources.patch.compose import compose_steps
from prstack.sources.patch.files import Patch

if TYPE_CHECKING:
    from prstack.placement.paths import PathMap
    from prstack.targets.base import Target

__all__ = ["PatchPRs", "like_repo", "patch_stack"]


def patch_stack(patches: Sequence[Patch]) -> tuple[list[PullRequest], list[Hunk]]:
    """The patches as a stack, bottom first: each a PR (the number it names, else its 1-based
    position), stacked on the one before it, its hunks the net hunks of its own mails by path."""
    prs: list[PullRequest] = []
    hunks: list[Hunk] = []
    seen: dict[int, str] = {}
    for at, patch in enumerate(patches, 1):
        number = patch.number if patch.number is not None else at
        if number in seen:
            raise InputError(Option("patch"), f" {patch.name} and ", Option("patch"),
                             f" {seen[number]} are both PR #{number}; "
                             "give each patch once (rename one to tell them apart).")
        seen[number] = patch.name
        commits = tuple(Commit(m.sha or "", (), m.subject or "", m.author, m.message) for m in patch.mails
                        if m.sha or m.subject)
        steps: defaultdict[str, list[list[Hunk]]] = defaultdict(list)
        for mail in patch.mails:
            try:
                parsed = parse_diff(mail.diff, number)
            except InputError as exc:
                raise InputError(Option("patch"), f" {patch.name}: ", *exc.parts) from None
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
        raise InputError(Option("patch"), f" {names}: no file change in it; give a patch that changes files.")
    return prs, hunks


class PatchPRs:
    """Patch files as a PR source: each patch one PR, stacked on the one before it (see
    `patch_stack`); no file before or after a patch, so each hunk's place is found from the
    target alone, and no build commit to hold them."""

    with_files = False
    hint = RepoHint()
    contains = None
    patch_contains = None

    def __init__(self, patches: Sequence[Patch]) -> None:
        prs, hunks = patch_stack(patches)
        self.changes = PatchChanges(tuple(prs), tuple(hunks))

    def load(self) -> Loaded:
        return Loaded(self.changes)

    def repo_files(self, changes: Changes, target_files: Iterable[str]) -> list[str]:
        paths = sorted({p for h in changes.hunks for p in (h.path, h.old_path) if p})
        return like_repo(paths, target_files, gone_after(changes.hunks))

    def file_at(self, rev: str, path: str) -> bytes | None:
        return None

    def prefetch_files(self, keys: Iterable[tuple[str, str]]) -> None:
        pass

    def tree_blobs(self, rev: str) -> list[tuple[str, str, int]]:
        return []

    def judged_by_history(self, changes: Changes, target: Target, pathmap: PathMap,
                          results: Sequence[HunkResult]) -> tuple[tuple[HunkResult, ...], Lineage | None] | None:
        return None


@dataclass(frozen=True)
class PatchChanges:
    """The patches' PRs and hunks."""

    prs: tuple[PullRequest, ...]
    hunks: tuple[Hunk, ...]


def gone_after(hunks: Iterable[Hunk]) -> frozenset[str]:
    """The paths the patches, bottom first, leave without a file: deleted, or renamed away."""
    there: dict[str, bool] = {}
    for h in hunks:
        if h.change is FileChange.RENAMED and h.old_path and h.old_path != h.path:
            there[h.old_path] = False
        there[h.path] = h.change is not FileChange.DELETED
    return frozenset(path for path, kept in there.items() if not kept)


def like_repo(paths: Sequence[str], installed: Iterable[str], gone: frozenset[str] = frozenset()) -> list[str]:
    """The repository's files as far as a patch and the target tell them: the patch's paths, and
    beside each, the files the target holds in the folder of that name (`src/kvs/new.py` and a
    target's `kvs/model.py` give `src/kvs/model.py`), or in a folder of the same name deeper in
    the target that holds the patched file itself (a vendored copy: `third_party/sub/mod.py` and a
    target's `pkg/_vendor/sub/{mod,other}.py` give `third_party/sub/other.py`). With a clone, the
    repository's own files tell how its paths map to the target's (prstack.placement.paths);
    these stand in for them, so that a patch places each file as the clone would.

    The paths the patches leave without a file (`gone`) are no files of the repository they make:
    they only lead to their folder's files, found at the folder's path or by two names of it. A
    moved file's old name would otherwise pair with its new one and pass for a renamed folder
    (placing every file left in the old folder in the new one), and deleted files would pair with
    namesakes anywhere (README.md, __init__.py)."""
    by_dir: defaultdict[tuple[str, ...], list[str]] = defaultdict(list)
    for path in installed:
        parts = path.split("/")
        if len(parts) > 1:
            by_dir[tuple(parts[:-1])].append(parts[-1])
    by_name: defaultdict[tuple[str, str], list[tuple[str, ...]]] = defaultdict(list)
    for folder, names in by_dir.items():
        for name in names:
            by_name[(folder[-1], name)].append(folder)
    out = set(paths)
    for path in paths:
        parts = path.split("/")
        folder = tuple(parts[:-1])
        # the longest tail of the folder the target holds (trl/scripts/ over a scripts/ of its own);
        # for a path the patches leave without a file, not its last folder's name alone: a folder
        # deleted whole is not the target's own test/ or docs/
        cut = next((cut for cut in range(len(folder)) if folder[cut:] in by_dir
                    and (path not in gone or cut == 0 or len(folder) - cut > 1)), None)
        if cut is not None:
            out.update("/".join((*folder, name)) for name in by_dir[folder[cut:]])
        elif folder and path not in gone:  # nowhere at its own path's tail: a copy deeper down holding it
            for deeper in by_name.get((folder[-1], parts[-1]), ()):
                out.update("/".join((*folder, name)) for name in by_dir[deeper])
    return sorted(out - gone)
