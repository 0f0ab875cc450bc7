"""Matching jobs, one file of one PR each: run here, or a share of them in a helper process.

Python runs one thread at a time, so an audit on one interpreter uses one core. The helper is a
second process, forked when the audit starts: it indexes the target's package while this process
works with git, then shares the matching and answers this process's questions about moved blocks.
Both are handed the same jobs and claim them one at a time, this process from the front, the
helper from the back, until they meet: neither waits for the other, whatever else either has to
do (this process: the huge files still being diffed). Whatever goes wrong with the helper, the
jobs it did not answer are run here.

No git or GitHub of its own: files at revisions come from a `git cat-file` reader (the source's
or, in the helper, one of its own), target files through the Target interface.
"""

from __future__ import annotations

import contextlib
import fcntl
import multiprocessing
import queue
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from prstack.errors import PrstackError
from prstack.matcher import (
    Explainer,
    Found,
    PackageIndex,
    find_moved,
    match_file,
    relocation_blocks,
    settle,
    settled_at_first,
)
from prstack.matching.package import INDEX_MAX_BYTES
from prstack.matching.text import blob_id
from prstack.models import FileChange, Hunk, HunkLine, HunkResult, HunkStatus, MatchEvidence
from prstack.sources.gitbatch import BlobReader, Env
from prstack.targets.base import Target
from prstack.targets.confined import Unreadable

F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # (Linux's number, named in Python 3.10+)

FileKey = tuple[str, str]
"""(revision, repository path) of a file at a commit, or (blob id, "") of a file by its id."""
FileAt = Callable[[str, str], bytes | None]
"""(commit, repo path) -> the file's bytes at that commit, or None."""

TEXT_SUFFIXES = (".py", ".pyi", ".txt", ".json", ".toml", ".cfg", ".yaml", ".yml", ".ini", ".md")
HELPER_MIN_FILES = 500
"""Text files a target needs for the helper to pay: below this its index takes milliseconds,
and starting an interpreter takes about a tenth of a second."""
SHARE_MIN_LINES = 2_000
"""Hunk lines an audit needs before jobs are shared with the helper (below this, sending them
costs about what it saves)."""


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

    @property
    def ahead(self) -> tuple[FileKey | None, FileKey]:
        """(base, head) to read ahead: a base named by its blob id is usually not read (see `_base`)."""
        return _ahead(self.base, self.head)

    @property
    def weight(self) -> int:
        """Roughly what matching it costs: its hunks' lines, and a little per file."""
        return 20 + sum(len(h.lines) for h in self.hunks)


def package_index(target: Target) -> PackageIndex:
    """The index of every text file of the target, read and built on first use (or `warm`);
    files too large to index (generated tables, vendored data) are not even read."""
    return PackageIndex(
        lambda: {
            path: data
            for path in sorted(target.files())
            if path.endswith(TEXT_SUFFIXES)
            and (target.size(path) or 0) <= INDEX_MAX_BYTES
            and (data := _read_or_none(target, path)) is not None
        }
    )


def _read_or_none(target: Target, path: str) -> bytes | None:
    try:
        return target.read(path)
    except Unreadable:
        return None


def tree_package(rev: str, files: Callable[[str], Sequence[tuple[str, str, int]]], file_at: FileAt,
                 prefetch: Callable[[Sequence[FileKey]], None] | None) -> PackageIndex:
    """The index of the text files of the repository at `rev` (`files`: path, blob id and size
    of each), read on first use, by blob id (git finds a blob by its id at once, a path at a
    revision through trees): the package at a PR's base, to tell a block there all along."""

    def load() -> dict[str, bytes]:
        keys = {path: (blob, "") for path, blob, size in files(rev)
                if path.endswith(TEXT_SUFFIXES) and size <= INDEX_MAX_BYTES}
        if prefetch is not None:
            prefetch(list(keys.values()))
        return {path: data for path, key in keys.items() if (data := file_at(*key)) is not None}

    return PackageIndex(load)


def run_jobs(jobs: Sequence[FileJob], target: Target, file_at: FileAt, package: PackageIndex | None,
             explain: Explainer | None = None) -> Iterator[list[HunkResult]]:
    """Each job's verdicts, in order (blocks that moved looked up in `package` when given, and
    weighed by `explain`; the target files it has read already are not read again)."""
    for job in jobs:
        text = None
        if job.present:
            held = package.held(job.installed_path) if package is not None else None
            try:
                text = held if held is not None else target.read(job.installed_path)
            except Unreadable as exc:  # outside the target, a FIFO, over the size cap, damaged
                yield [HunkResult(h, HunkStatus.UNVERIFIABLE, installed_path=job.installed_path,
                                  evidence=MatchEvidence(note=f"the target's file was not read: {exc.reason}"))
                       for h in job.hunks]
                continue
        head = file_at(*job.head)
        yield match_file(job.hunks, text, installed_path=job.installed_path, base=_base(job, text, head, file_at),
                         head=head, package=package, explain=explain)


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


FindMoved = Callable[[list[tuple[list[tuple[str, ...]], str | list[str] | None]]], list[list[list[Found]]]]
"""For each (blocks, file or files to leave out): where in the package each block is, its
first place only (`find_moved` with limit 1)."""


def relocate(results: list[HunkResult], find: FindMoved, explain: Explainer | None = None,
             known: Sequence[list[list[Found]] | None] | None = None) -> list[HunkResult]:
    """`results` (matched without a package index) with blocks found elsewhere made relocated
    where `explain` does not explain them otherwise; `find` answers, for each (blocks, files to
    leave out), where each block is first. A block's first place mostly settles it (see
    `settled_at_first`); else it is looked for once more, leaving out the files where another
    audited hunk put it: any place found then is explained by nothing else. `known`: per
    result, the first answer where it is known already (the helper finds it as it matches)."""
    asks = [(i, blocks) for i, r in enumerate(results) if (blocks := relocation_blocks(r))]
    if not asks:
        return results
    out = list(results)
    have = known or [None] * len(results)
    todo = [(i, blocks) for i, blocks in asks if have[i] is None]
    found = dict(zip([i for i, _ in todo],
                     find([(blocks, results[i].installed_path) for i, blocks in todo]) if todo else [],
                     strict=True))
    answers: list[list[list[Found]]] = [found.get(i) or have[i] or [] for i, _ in asks]
    again: list[tuple[int, list[tuple[str, ...]], list[str]]] = []
    for (i, blocks), got in zip(asks, answers, strict=True):
        settled = settle(out[i], blocks, got, explain)
        own = out[i].installed_path
        if settled.status is not HunkStatus.RELOCATED and not settled_at_first(out[i], blocks, got, explain):
            assert explain is not None and own is not None
            again.append((i, blocks, [own, *explain.paths_holding(out[i].hunk, blocks)]))
        out[i] = settled
    if again:
        for (i, blocks, _), got in zip(again, find([(blocks, skip) for _, blocks, skip in again]), strict=True):
            if any(got):
                out[i] = settle(results[i], blocks, got, explain)
    return out


def shareable(jobs: Sequence[FileJob], held: Callable[[FileKey], bool]) -> tuple[list[int], list[int]]:
    """Which jobs must stay here and which may be shared with the helper (indexes into `jobs`):
    a job whose files this process already holds in memory (a huge file's versions, read for
    its diff) stays, and so does everything when there is too little to be worth sending."""
    if sum(job.weight for job in jobs) < SHARE_MIN_LINES:
        return list(range(len(jobs))), []
    here: list[int] = []
    shared: list[int] = []
    for i, job in enumerate(jobs):
        stays = held(job.head) or (job.base is not None and held(job.base))
        (here if stays else shared).append(i)
    return here, shared


class ReadAhead:
    """Files at revisions of jobs claimed one by one, read ahead of their matching a window at a
    time: read all up front, the files of the jobs the other process claims would be read twice.
    `sides` are each job's (base, head) keys, in the order the jobs are claimed."""

    def __init__(self, prefetch: Callable[[list[FileKey]], None] | None,
                 sides: Sequence[tuple[FileKey | None, FileKey]]) -> None:
        self._prefetch, self._sides = prefetch, sides
        self._window = max(READ_AHEAD_JOBS, len(sides) // 6)
        self._end = 0
        """Jobs whose files were asked for."""

    def reached(self, claimed: int, unclaimed: int) -> None:
        """`claimed` jobs (in order) are taken, `unclaimed` are left to both ends: keep the next
        ones being read, no farther than the half of those left this end is likely to take."""
        window = min(self._window, max(READ_AHEAD_MIN, unclaimed // 2))
        if self._prefetch is None or self._end >= len(self._sides) or claimed + window // 2 < self._end:
            return
        start, self._end = self._end, min(len(self._sides), claimed + window)
        self._prefetch([key for sides in self._sides[start : self._end] for key in sides if key is not None])


READ_AHEAD_JOBS = 32
"""The fewest jobs read ahead at a time while many are left."""
READ_AHEAD_MIN = 4
"""...and near where the two ends meet."""


# -- the helper process ---------------------------------------------------------------------------

class HelperGone(Exception):
    """The helper stopped or failed: its work is done here instead."""


class MatchHelper:
    """The other end of a helper process (see the module's docstring)."""

    def __init__(self, proc: BaseProcess, to_helper: Connection, from_helper: Connection,
                 claims: Claims) -> None:
        self._proc = proc
        self._claims = claims
        self._from = from_helper
        self._jobs: list[FileJob] = []
        self.first_found: dict[int, list[list[list[Found]] | None]] = {}
        """Per shared job the helper matched: per hunk, where its blocks are first, if it has any."""
        self.answered = 0
        """Jobs whose verdicts the helper gave (0 when it failed and they were judged here)."""
        self._outbox: queue.Queue[Any] = queue.Queue()
        # sends go through a thread: a big message must not wait here while the helper is busy
        self._writer = threading.Thread(target=self._write, args=(to_helper,), daemon=True,
                                        name="prstack-helper-writer")
        self._writer.start()

    @classmethod
    def start(cls, target: Target, repo: Path, env: Env) -> MatchHelper | None:
        """A helper that indexes `target` now, reading files at revisions from `repo`; None where
        one cannot be started. Only on Linux: the helper is this interpreter forked (a new one
        would spend a tenth of a second importing), and forking is safe there."""
        if not sys.platform.startswith("linux"):
            return None
        context = multiprocessing.get_context("fork")
        down_r, down_w = context.Pipe(duplex=False)
        up_r, up_w = context.Pipe(duplex=False)
        claims = context.RawArray("q", 2)
        for conn in (down_w, up_w):
            with contextlib.suppress(OSError):  # a pipe that holds a whole message: fewer writes
                fcntl.fcntl(conn.fileno(), F_SETPIPE_SZ, 1 << 20)
        proc = context.Process(target=serve, args=(target, str(repo), dict(env or {}), down_r, up_w,
                                                   (down_w, up_r), claims),
                               name="prstack-helper", daemon=True)
        try:
            proc.start()
        except OSError:
            return None
        finally:
            down_r.close()
            up_w.close()
        return cls(proc, down_w, up_r, claims)

    @property
    def pid(self) -> int | None:
        return self._proc.pid

    def _write(self, conn: Connection) -> None:
        with contextlib.suppress(OSError, ValueError):  # the helper is gone: its reader says so
            while (message := self._outbox.get()) is not None:
                conn.send(message)
        conn.close()

    def _receive(self, kind: str) -> Any:
        try:
            got = self._from.recv()
        except (EOFError, OSError) as exc:
            raise HelperGone(str(exc) or "the helper stopped") from None
        if not isinstance(got, tuple) or got[0] != kind:
            raise HelperGone(f"the helper answered {got[0] if isinstance(got, tuple) else got!r}")
        return got[1]

    def share(self, jobs: Sequence[FileJob]) -> None:
        """Hand `jobs` to the helper, to be claimed from both ends: `claim` takes the next one for
        this process; `matched` gives the verdicts of those the helper took."""
        self._jobs = list(jobs)
        self._claims[1] = len(self._jobs)
        self._claims[0] = 0
        self._outbox.put(("match", [_pack_job(job) for job in jobs]))

    def claim(self) -> int | None:
        """The next shared job for this process (its index), or None once the claims met."""
        return claim_front(self._claims)

    @property
    def unclaimed(self) -> int:
        """Shared jobs neither end has claimed yet."""
        return unclaimed(self._claims)

    def matched(self) -> dict[int, list[HunkResult]]:
        """The verdicts of the shared jobs the helper claimed, by index (moved blocks not yet looked up)."""
        packed = self._receive("matched")
        self.answered += len(packed)
        self.first_found.update((i, found) for i, _, found in packed)
        return {i: [_unpack_result(h, r) for h, r in zip(self._jobs[i].hunks, rows, strict=True)]
                for i, rows, _ in packed}

    def find_moved(self, asks: list[tuple[list[tuple[str, ...]], str | list[str] | None]]
                   ) -> list[list[list[Found]]]:
        """For each (blocks, file or files to leave out): where in the package each block is
        first (see `FindMoved`)."""
        self.ask_moved(asks)
        return self.moved()

    def ask_moved(self, asks: list[tuple[list[tuple[str, ...]], str | list[str] | None]]) -> None:
        """`find_moved` in two steps: the question now, the answer from `moved` (the helper
        answers once it has done what it was asked before)."""
        self._outbox.put(("find", asks))

    def moved(self) -> list[list[list[Found]]]:
        answers: list[list[list[Found]]] = self._receive("found")
        return answers

    def close(self) -> None:
        """Stop the helper, without waiting for it: its input ends, so it exits, and a thread
        reaps it (stopping one still busy a second later: this audit failed half-way)."""
        self._outbox.put(None)
        self._from.close()
        threading.Thread(target=self._reap, daemon=True, name="prstack-helper-reaper").start()

    def _reap(self) -> None:
        self._writer.join(timeout=1)
        self._proc.join(timeout=1)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()


Claims = Any
"""Two shared integers (a `multiprocessing.RawArray`): the next job from the front, and one past
the next from the back. Each is written by one process only, so a claim takes no lock (a process
killed mid-claim leaves none held): at worst, where the two meet, one job is matched twice."""


def claim_front(claims: Claims) -> int | None:
    i = claims[0]
    if i >= claims[1]:
        return None
    claims[0] = i + 1
    return int(i)


def unclaimed(claims: Claims) -> int:
    return max(0, int(claims[1] - claims[0]))


def claim_back(claims: Claims) -> int | None:
    i = claims[1] - 1
    if i < claims[0]:
        return None
    claims[1] = i
    return int(i)


def serve(target: Target, repo: str, env: dict[str, str], inbox: Connection, outbox: Connection,
          parents_ends: Sequence[Connection], claims: Claims) -> None:
    """The helper's main loop: index `target`, then answer `match` and `find` until input ends.
    (The fork copied the audit's ends of the pipes: closed, so the input can end.)"""
    for conn in parents_ends:
        conn.close()
    try:
        package = package_index(target)
        package.warm()
        blobs = BlobReader(Path(repo), env)
        while True:
            try:
                message = inbox.recv()
            except EOFError:
                break
            if message[0] == "match":
                packed_jobs = message[1]  # (unpacked when claimed: the other end takes some)
                ahead = ReadAhead(blobs.prefetch, [_unpacked_ahead(packed) for packed in reversed(packed_jobs)])
                done = []
                while (i := claim_back(claims)) is not None:
                    ahead.reached(len(packed_jobs) - i, unclaimed(claims))
                    # (moved blocks are weighed by the audit, which knows the stack and its base)
                    (results,) = run_jobs([_unpack_job(packed_jobs[i])], target, blobs.read, None)
                    first = [find_moved(package, blocks, r.installed_path, 1)
                             if (blocks := relocation_blocks(r)) else None for r in results]
                    done.append((i, [_pack_result(r) for r in results], first))
                outbox.send(("matched", done))
            elif message[0] == "find":
                outbox.send(("found", [find_moved(package, blocks, exclude, 1) for blocks, exclude in message[1]]))
        blobs.close()
    except (PrstackError, OSError) as exc:  # the audit does this work itself, and says why
        with contextlib.suppress(OSError):
            outbox.send(("error", str(exc)))
    finally:
        outbox.close()


# -- what crosses the pipe: plain tuples (pickling dataclasses and named tuples costs more) -------

def _pack_job(job: FileJob) -> tuple[Any, ...]:
    hunks = [(h.pr, h.path, h.old_path, h.change.value, h.old_start, h.old_lines, h.new_start,
              h.new_lines, [tuple(line) for line in h.lines], h.old_blob, h.new_blob) for h in job.hunks]
    return hunks, job.installed_path, job.present, job.base, job.head


def _unpacked_ahead(packed: tuple[Any, ...]) -> tuple[FileKey | None, FileKey]:
    """`FileJob.ahead` of a packed job."""
    *_, base, head = packed
    return _ahead(base, head)


def _ahead(base: FileKey | None, head: FileKey) -> tuple[FileKey | None, FileKey]:
    return (base if base is not None and base[1] else None), head


def _unpack_job(packed: tuple[Any, ...]) -> FileJob:
    hunks, installed_path, present, base, head = packed
    return FileJob(
        tuple(Hunk(pr, path, old_path, FileChange(change), old_start, old_lines, new_start, new_lines,
                   tuple(HunkLine(kind, text) for kind, text in lines), (), old_blob, new_blob)
              for pr, path, old_path, change, old_start, old_lines, new_start, new_lines, lines,
              old_blob, new_blob in hunks),
        installed_path, present, base, head)


def _pack_result(r: HunkResult) -> tuple[Any, ...]:
    e = r.evidence
    return (r.status.value, r.installed_path, r.found_path, r.found_line, r.offset, r.fuzz,
            e.normalisation, e.applied_lines, e.missing_lines, e.found_text, e.note)


def _unpack_result(hunk: Hunk, packed: tuple[Any, ...]) -> HunkResult:
    status, installed_path, found_path, found_line, offset, fuzz, *evidence = packed
    return HunkResult(hunk, HunkStatus(status), installed_path, found_path, found_line, offset, fuzz,
                      MatchEvidence(*evidence))

