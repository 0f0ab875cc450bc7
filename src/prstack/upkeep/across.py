"""Carried hunks judged in many trees of one clone (releases, a ref, the default branch): each
file's blob at each tree from one stream, each distinct blob judged once per PR and file."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from prstack.match.file import match_file
from prstack.match.stack import _sides
from prstack.models import Hunk, HunkResult, PullRequest

GroupKey = tuple[int, str]
"""(PR number, repository path): the hunks of one PR in one file, judged together."""
BlobIds = Callable[[Sequence[tuple[str, str]]], list[str | None]]
"""(commit, path) pairs -> the blob id of each there (None: no such file)."""
ReadFile = Callable[[str, str], bytes | None]
Prefetch = Callable[[Iterable[tuple[str, str]]], None]


def grouped(hunks: Iterable[Hunk]) -> dict[GroupKey, list[Hunk]]:
    """Hunks by (PR, path), in the order they first occur."""
    groups: defaultdict[GroupKey, list[Hunk]] = defaultdict(list)
    for hunk in hunks:
        groups[(hunk.pr, hunk.path)].append(hunk)
    return dict(groups)


class TreeJudge:
    """Verdicts of each hunk group in the files of many commits' trees. A file's blob is judged
    once per group however many trees hold it (the same file at thirty tags: one judgement)."""

    def __init__(self, prs: Mapping[int, PullRequest], groups: Mapping[GroupKey, list[Hunk]], *,
                 blob_ids: BlobIds, read: ReadFile, prefetch: Prefetch, with_sides: bool) -> None:
        self._prs, self._groups = prs, groups
        self._blob_ids, self._read, self._prefetch = blob_ids, read, prefetch
        self._with_sides = with_sides
        self._judged: dict[tuple[GroupKey, str | None], list[HunkResult]] = {}
        self.judgements = 0
        """How many (group, blob) judgements were made (the rest were shared)."""

    def blobs(self, commits: Sequence[str]) -> dict[str, dict[GroupKey, str | None]]:
        """Per commit, each group's file blob there."""
        paths = sorted({path for _, path in self._groups})
        ids = self._blob_ids([(c, p) for c in commits for p in paths])
        at = {(c, p): ids[i * len(paths) + j] for i, c in enumerate(commits) for j, p in enumerate(paths)}
        return {c: {key: at[(c, key[1])] for key in self._groups} for c in commits}

    def judge(self, commits: Sequence[str]) -> dict[str, dict[GroupKey, list[HunkResult]]]:
        """Per commit, each group's verdicts in that commit's tree."""
        blobs = self.blobs(commits)
        todo = sorted({(key, blob) for per in blobs.values() for key, blob in per.items()
                       if (key, blob) not in self._judged}, key=lambda kb: (kb[0], kb[1] or ""))
        sides = {key: self._sides(key) for key in {key for key, _ in todo}}
        wanted = [(blob, "") for _, blob in todo if blob is not None]
        wanted += [side for key in sides for side in sides[key] if side is not None]
        self._prefetch(wanted)
        texts = {key: tuple(self._read(*side) if side is not None else None for side in pair)
                 for key, pair in sides.items()}
        for key, blob in todo:
            base, head = texts[key]
            target = self._read(blob, "") if blob is not None else None
            self._judged[(key, blob)] = match_file(self._groups[key], target, installed_path=key[1], base=base,
                                                   head=head)
            self.judgements += 1
        return {c: {key: self._judged[(key, blob)] for key, blob in per.items()} for c, per in blobs.items()}

    def _sides(self, key: GroupKey) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
        if not self._with_sides:
            return None, None
        return _sides(self._prs[key[0]], self._groups[key][0])
