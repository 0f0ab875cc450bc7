"""What an audit of several targets does once: the PR source's answers (files at revisions, ancestry)
kept across the targets, and the verdicts of a target reused by a target whose files hold the same bytes
(keyed by content hash) instead of being judged again."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prstack.match.report import AuditReport
from prstack.models import Changes, HunkResult, Lineage, TargetInfo
from prstack.sources.base import Loading, PRSource, RepoHint
from prstack.targets.base import Target
from prstack.targets.built_from import Contains
from prstack.targets.confined import READ_CAP, Unreadable
from prstack.targets.evidence import BuildEvidence
from prstack.targets.installed import InstalledDistribution

if TYPE_CHECKING:
    from prstack.placement.paths import PathMap

ReadKey = tuple[str, str, int]
"""('read', path, cap) or ('size', path, 0): one question the judge asked of a target."""
UNREADABLE = "unreadable"


def content_key(data: bytes | None) -> str:
    """A file's bytes as a key (its sha256), '-' for no file."""
    return "-" if data is None else hashlib.sha256(data).hexdigest()


class RecordingTarget:
    """A target whose every answer to the judge (a file's bytes, its size) is kept as a content key."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.answers: dict[ReadKey, str] = {}

    @property
    def info(self) -> TargetInfo:
        return self.target.info

    @property
    def evidence(self) -> BuildEvidence:
        return self.target.evidence

    def files(self) -> frozenset[str]:
        return self.target.files()

    def read(self, path: str, cap: int = READ_CAP) -> bytes | None:
        try:
            data = self.target.read(path, cap)
        except Unreadable:
            self.answers.setdefault(("read", path, cap), UNREADABLE)
            raise
        self.answers.setdefault(("read", path, cap), content_key(data))
        return data

    def size(self, path: str) -> int | None:
        size = self.target.size(path)
        self.answers.setdefault(("size", path, 0), str(size))
        return size


@dataclass(frozen=True)
class Judged:
    """A target's verdicts and everything they were drawn from: its file set, the content key of every
    file the judge read, and the files its RECORD says changed after install (notes on the verdicts)."""

    files: frozenset[str]
    answers: Mapping[ReadKey, str]
    file_issues: Mapping[str, str]
    report: AuditReport
    lineage: Lineage | None = None

    @property
    def results(self) -> tuple[HunkResult, ...]:
        return self.report.results


def judged(recording: RecordingTarget, report: AuditReport, lineage: Lineage | None = None) -> Judged:
    return Judged(recording.files(), dict(recording.answers), recording.evidence.file_issues(), report, lineage)


def same_content(before: Judged, target: Target) -> bool:
    """Whether `target` would be judged as `before` was: the same files, each file the judge read
    holding the same bytes (read now, once, as the report needs them read), the same RECORD issues."""
    if target.files() != before.files:
        return False
    for (question, path, cap), key in before.answers.items():
        if question == "size":
            if str(target.size(path)) != key:
                return False
            continue
        try:
            got = _key_now(target, path, cap)
        except Unreadable:
            got = UNREADABLE
        if got != key:
            return False
    return dict(target.evidence.file_issues()) == dict(before.file_issues)


def _key_now(target: Target, path: str, cap: int) -> str:
    """content_key of the target's file now (an installed file hashed before in the run and still
    what it was is not read again: see InstalledDistribution.sha256)."""
    if isinstance(target, InstalledDistribution):
        digest = target.sha256(path, cap)
        return "-" if digest is None else digest.hex()
    return content_key(target.read(path, cap))


class RememberingSource:
    """A PR source whose files at revisions and ancestry answers are kept for the next targets
    (the source's own caches let each file go once read: a target after the first would ask git again)."""

    def __init__(self, source: PRSource) -> None:
        self.source = source
        self._files: dict[tuple[str, str], bytes | None] = {}
        self._contains: dict[tuple[str, str], bool | None] = {}
        self._patch_contains: dict[tuple[str, str], bool | None] = {}
        self._trees: dict[str, list[tuple[str, str, int]]] = {}

    @property
    def with_files(self) -> bool:
        return self.source.with_files

    @property
    def hint(self) -> RepoHint:
        return self.source.hint

    def load(self) -> Loading:
        return self.source.load()

    def repo_files(self, changes: Changes, target_files: Iterable[str]) -> Sequence[str]:
        return self.source.repo_files(changes, target_files)

    def file_at(self, rev: str, path: str) -> bytes | None:
        key = (rev, path)
        if key not in self._files:
            self._files[key] = self.source.file_at(rev, path)
        return self._files[key]

    def prefetch_files(self, keys: Iterable[tuple[str, str]]) -> None:
        self.source.prefetch_files([key for key in keys if key not in self._files])

    def tree_blobs(self, rev: str) -> list[tuple[str, str, int]]:
        if rev not in self._trees:
            self._trees[rev] = self.source.tree_blobs(rev)
        return self._trees[rev]

    def judged_by_history(self, changes: Changes, target: Target, pathmap: PathMap,
                          results: Sequence[HunkResult]) -> tuple[tuple[HunkResult, ...], Lineage | None] | None:
        return self.source.judged_by_history(changes, target, pathmap, results)

    @property
    def contains(self) -> Contains | None:
        return _remembered(self.source.contains, self._contains)

    @property
    def patch_contains(self) -> Contains | None:
        return _remembered(self.source.patch_contains, self._patch_contains)


def _remembered(ask: Contains | None, answers: dict[tuple[str, str], bool | None]) -> Contains | None:
    if ask is None:
        return None

    def remembered(commit: str, other: str) -> bool | None:
        if (commit, other) not in answers:
            answers[(commit, other)] = ask(commit, other)
        return answers[(commit, other)]

    return remembered
