"""Matching jobs, one file of one PR each, run in order in this process.

No git or GitHub of its own: files at revisions come from the caller's `file_at` (a `git cat-file`
reader), target files through the Target interface. One process: on two cores a second one sharing
the jobs saves nothing on the main-path bench (bench/README.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import NamedTuple

from prstack.match.file import (
    Elsewhere,
    OwnVerdict,
    PackageIndex,
    StackTop,
    at_stack_top,
    file_verdicts,
    looked_up,
)
from prstack.match.package import INDEX_MAX_BYTES
from prstack.match.text import blob_id, names_blob, same_file, same_text
from prstack.models import Hunk, HunkResult, HunkStatus, MatchEvidence
from prstack.targets.base import Target
from prstack.targets.confined import Unreadable

FileKey = tuple[str, str]
"""(revision, repository path) of a file at a commit, or (blob id, "") of a file by its id."""
FileAt = Callable[[str, str], bytes | None]
"""(commit, repo path) -> the file's bytes at that commit, or None."""
Prefetch = Callable[[Iterable[FileKey]], None]
"""Files `FileAt` will be asked for, read in one go."""

TEXT_SUFFIXES = (".py", ".pyi", ".txt", ".json", ".toml", ".cfg", ".yaml", ".yml", ".ini", ".md")


@dataclass(frozen=True)
class FileJob:
    """The hunks of one PR in one file, and where to judge them."""

    hunks: tuple[Hunk, ...]
    installed_path: str
    present: bool
    """Whether the target ships the file (else every hunk is judged as absent)."""
    base: FileKey | None
    """The file before the PR (None for a new file)."""
    head: FileKey
    tops: tuple[tuple[int, FileKey], ...] = ()
    """The file at the heads of the PRs built on this one, the stack's top first (see `StackTop`):
    read only when a hunk is not found as it is."""
    top_blobs: tuple[tuple[int, str | None], ...] = ()
    """The file's blob id at the heads of the PRs built on this one that name no head (patches),
    as their diffs name it (None: deleted there); see `StackTop.blobs`."""

    @property
    def ahead(self) -> tuple[FileKey | None, FileKey]:
        """(base, head) to read in one batch first (a base named by its blob id is usually not
        read: see `_base`)."""
        return (self.base if self.base is not None and self.base[1] else None), self.head


KeptKey = tuple[tuple[int, ...], str, bool, FileKey | None, FileKey, tuple[tuple[int, FileKey], ...],
               tuple[tuple[int, str | None], ...], tuple[int, ...], bytes]


class _Kept(NamedTuple):
    """A job's verdicts from its file alone (the kept job and hunks hold the objects the key names
    by identity: no other object takes their ids), the head it was judged with, and its final
    verdicts when no block of it was looked for in the target's other files."""

    job: FileJob
    others: tuple[Hunk, ...]
    own: tuple[OwnVerdict, ...]
    head: bytes | None
    final: tuple[HunkResult, ...] | None


class KeptVerdicts:
    """The verdicts of file jobs kept across the targets of one run, whatever their kind: a job
    asked again of a file holding the same bytes (with the same audited hunks at its path) gets
    again what its file alone gave (see `file_verdicts`), so only its blocks looked for in the
    other files are looked for again (those files may differ); a job that looked for none gets
    its final verdicts again.

    `prefetch`: the run's batch read of files at revisions (the PR source's `prefetch_files`), for
    `run_jobs` to read the files a batch of jobs compares with in one go (its `file_at` keeps what
    it read: the first head above is read to tell whether the others are needed, then again)."""

    def __init__(self, prefetch: Prefetch | None = None) -> None:
        self._kept: dict[KeptKey, _Kept] = {}
        self.prefetch = prefetch

    def get(self, key: KeptKey) -> _Kept | None:
        return self._kept.get(key)

    def keep(self, key: KeptKey, kept: _Kept) -> None:
        self._kept[key] = kept


def _kept_key(job: FileJob, others: tuple[Hunk, ...], text: bytes) -> KeptKey:
    """The job (its hunks, and those of the file's other PRs, by identity: the same stack's objects
    in every target) and the file's bytes."""
    return (tuple(map(id, job.hunks)), job.installed_path, job.present, job.base, job.head, job.tops,
            job.top_blobs, tuple(map(id, others)), hashlib.sha256(text).digest())


def package_index(target: Target) -> PackageIndex:
    """The index of every text file of the target, read and built on first use;
    files too large to index (generated tables, vendored data) are not even read (each file is
    opened once: its size is checked on the open file, not asked first)."""
    return PackageIndex(
        lambda: {
            path: data
            for path in sorted(target.files())
            if path.endswith(TEXT_SUFFIXES) and (data := _read_or_none(target, path)) is not None
        }
    )


def _read_or_none(target: Target, path: str) -> bytes | None:
    try:
        return target.read(path, INDEX_MAX_BYTES)
    except Unreadable:  # (over the index's limit among the reasons)
        return None


def run_jobs(jobs: Sequence[FileJob], target: Target, file_at: FileAt, elsewhere: Elsewhere | None,
             kept: KeptVerdicts | None = None) -> Iterator[list[HunkResult]]:
    """Each job's verdicts, in order (blocks that moved looked up `elsewhere` when given; the
    target files its package index has read already are not read again). `kept`: what the run's
    earlier targets' files with the same bytes gave (see KeptVerdicts), taken and added to; with
    its `prefetch`, the jobs are judged in batches: each batch's files at the heads above and at
    the PRs' earlier commits are read in one go, once its files' own verdicts say which are needed."""
    prefetch = kept.prefetch if kept is not None else None
    size = PREFETCH_BATCH if prefetch is not None else 1
    for start in range(0, len(jobs), size):
        batch = [_judged_alone(job, target, file_at, elsewhere, kept) for job in jobs[start:start + size]]
        if prefetch is not None:
            alone = [judged for judged in batch if isinstance(judged, _Alone)]
            prefetch(dict.fromkeys(keys[0] for judged in alone for keys in judged.compared() if keys))
            prefetch(dict.fromkeys(key for judged in alone for key in judged.rest_compared(file_at)))
        for judged in batch:
            yield judged if isinstance(judged, list) else judged.finished(file_at, kept)


PREFETCH_BATCH = 64
"""Jobs judged between two batch reads of the files at the heads above and earlier commits."""


@dataclass
class _Alone:
    """A job's verdicts from its own file and those of the blocks looked up elsewhere, before the
    heads above and the PR's earlier commits are compared with the file."""

    job: FileJob
    text: bytes | None
    head: bytes | None
    own: list[OwnVerdict]
    results: list[HunkResult]
    key: KeptKey | None
    others: tuple[Hunk, ...]
    fresh: bool
    """Judged here, not taken from `kept` (so kept once finished)."""

    def compared(self) -> tuple[list[FileKey], list[FileKey]]:
        """The files `finished` compares the target's file with, in order: the heads above (where a
        hunk is not present), the PR's earlier commits (where the file is not the head's)."""
        job, text, head = self.job, self.text, self.head
        if head is None:
            return [], []
        tops = [] if all(r.status.present for r in self.results) else [key for _, key in job.tops]
        if text is None or same_text(text, head):
            return tops, []
        return tops, [(commit, job.hunks[0].path) for commit in _earlier_commits(job)]

    def rest_compared(self, file_at: FileAt) -> list[FileKey]:
        """The files of `compared` after the first of each kind, where the first does not hold the
        target's file (`finished` then reads on: where the stack leaves a file, it is most often
        at the first head above, and else at none)."""
        tops, commits = self.compared()
        text = self.text
        rest = tops[1:] if tops and not same_file(text, file_at(*tops[0])) else []
        if commits and not same_file(text, file_at(*commits[0])):
            rest += commits[1:]
        return rest

    def finished(self, file_at: FileAt, kept: KeptVerdicts | None) -> list[HunkResult]:
        job, text, head, results = self.job, self.text, self.head, self.results
        # (the heads above are read only where the head is known: a source without files knows neither)
        if job.top_blobs or (job.tops and head is not None):
            top = StackTop(partial(_read_each, file_at, job.tops if head is not None else ()), job.top_blobs)
            results = at_stack_top(results, text, job.installed_path, top)
        if text is not None and head is not None and not same_text(text, head):
            results = _at_earlier_commit(results, text, job, file_at)
        if kept is not None and self.key is not None and self.fresh:
            final = None if any(ask for _, ask in self.own) else tuple(results)
            kept.keep(self.key, _Kept(job, self.others, tuple(self.own), head, final))
        return results


def _judged_alone(job: FileJob, target: Target, file_at: FileAt, elsewhere: Elsewhere | None,
                  kept: KeptVerdicts | None) -> list[HunkResult] | _Alone:
    """A job's final verdicts where they need no more reading (its file unread, or kept final
    from a file with the same bytes), else its verdicts so far (see `_Alone`)."""
    explain = elsewhere.explain if elsewhere is not None else None
    text = None
    if job.present:
        held = elsewhere.package.held(job.installed_path) if elsewhere is not None else None
        try:
            text = held if held is not None else target.read(job.installed_path)
        except Unreadable as exc:  # outside the target, a FIFO, over the size cap, damaged
            return [HunkResult(h, HunkStatus.UNVERIFIABLE, installed_path=job.installed_path, unread=True,
                               evidence=MatchEvidence(note=f"the target's file was not read: {exc.reason}"))
                    for h in job.hunks]
    others = explain.hunks_of(job.installed_path) if explain is not None and kept is not None else ()
    key = _kept_key(job, others, text) if kept is not None and text is not None else None
    earlier = kept.get(key) if kept is not None and key is not None else None
    if earlier is not None and earlier.final is not None:
        return list(earlier.final)
    if earlier is not None:
        own, head = list(earlier.own), earlier.head
    else:
        head = file_at(*job.head)
        new_blob = job.hunks[0].new_blob
        if head is None and text is not None and new_blob is not None and names_blob(new_blob, text):
            head = text  # a target whose blob id is the one the diff names for the head is the head
        own = file_verdicts(job.hunks, text, job.installed_path, (_base(job, text, head, file_at), head), explain)
    results = looked_up(own, job.installed_path, elsewhere)
    return _Alone(job, text, head, own, results, key, others, earlier is None)


EARLIER_COMMITS = 8
"""A file's most recent commits of the PR compared with a target that is not at the head."""


def _at_earlier_commit(results: list[HunkResult], text: bytes, job: FileJob, file_at: FileAt) -> list[HunkResult]:
    """Where the target's file is the file at one of the PR's earlier commits and not at its head
    (a fix-up dropped, a stale install from before a force-push), the results say which commit:
    those present are partial, since the later commits' change of the file is not there, even
    where the PR's net diff is (a fix-up that restores the base text leaves it as it was)."""
    path = job.hunks[0].path
    commits = _own_commits(job)
    if any(r.superseded_by for r in results):
        return results  # a later PR's rewrite accounts for the file
    for commit in _earlier_commits(job):
        earlier = file_at(commit, path)
        if earlier is not None and same_text(text, earlier):
            if any((top := file_at(*key)) is not None and same_text(text, top) for _, key in job.tops):
                return results  # the file as a PR built on this one leaves it
            note = (f"the file is as at the PR's commit {commit[:12]}, not as at its head: a later commit's "
                    "change of it is not there") if commit in commits else (
                    f"the file is as at commit {commit[:12]} of a PR built on this one, not as at that PR's "
                    "head: a later commit's change of it is not there")
            return [replace(r, status=HunkStatus.PARTIAL if r.status.present else r.status,
                            evidence=replace(r.evidence, note=f"{r.evidence.note}; {note}" if r.evidence.note
                                             else note)) for r in results]
    return results


def _own_commits(job: FileJob) -> list[str]:
    """The PR's most recent commits that touch the job's file."""
    touched = next((h.touched_by for h in job.hunks if h.touched_by), ())
    return list(touched or dict.fromkeys(c for h in job.hunks for c in h.commits))[-EARLIER_COMMITS:]


def _earlier_commits(job: FileJob) -> list[str]:
    """The commits `_at_earlier_commit` compares the file with, in order: those of the PRs built on
    this one that touch it, then the PR's own, the latest first."""
    above = next((h.touched_above for h in job.hunks if h.touched_above), ())[-EARLIER_COMMITS:]
    return [*reversed(above), *reversed(_own_commits(job))]


def _read_each(file_at: FileAt, keys: Sequence[tuple[int, FileKey]]) -> Iterator[tuple[int, bytes | None]]:
    return ((number, file_at(*key)) for number, key in keys)


def _base(job: FileJob, target: bytes | None, head: bytes | None, file_at: FileAt) -> bytes | None:
    """The file before the PR, as far as matching needs it: to anchor the hunks when the head
    lacks the file, else only to tell a target still at the base. Named by its blob id, the
    base need not be read for that: a target whose blob id (CRLF read as LF) is the base's is
    the base. (Read in full when the head has CRs: the repository keeps CRLF files, and a
    target may differ from the base in line endings only; or when the target is big: a blob
    id costs more than reading a file already in memory.)"""
    if job.base is None or target is None:
        return None
    blob, path = job.base
    if path or head is None or b"\r" in head or len(target) > BLOB_COMPARE_MAX:
        return file_at(*job.base)
    same = blob_id(target, len(blob)) == blob or (
        b"\r" in target and blob_id(target.replace(b"\r\n", b"\n"), len(blob)) == blob)
    return target if same else None


BLOB_COMPARE_MAX = 1 << 20
"""Targets up to this size are compared to the base by blob id, not by reading the base."""
