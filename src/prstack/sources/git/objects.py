"""A clone's objects as prstack reads them: files at revisions, trees, diffs (`GitClone.objects`).

Files and diffs are named by object ids or revisions and read in bulk: one `git cat-file --batch`
for files, one `git diff-tree --stdin` for many diffs (see blobs.py, diffs.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path

from prstack.errors import SourceError
from prstack.sources.git.blobs import BlobReader
from prstack.sources.git.diffs import PendingDiffs, excluding
from prstack.sources.git.runner import Started, run_git


class Objects:
    """Files at revisions, trees and diffs of the clone at `path`, git run in the environment
    `env` gives at each call (auth for lazy blobs, offline guards)."""

    def __init__(self, path: Path, env: Callable[[], Mapping[str, str]]) -> None:
        self.path, self._env = path, env
        self.unread: frozenset[str] = frozenset()
        """Paths left out of every diff (the clone lacks their blobs; see GitClone.lacking_blobs)."""

    def _git(self, *args: str) -> bytes:
        return run_git(self.path, args, self._env())

    def _git_in(self, args: Sequence[str], data: bytes) -> bytes:
        return run_git(self.path, args, self._env(), data)

    def diff(self, base: str, head: str) -> bytes:
        """The unified diff base..head (commits or trees) with rename detection and full blob ids."""
        return self.diffs([(base, head)]).whole()[0]

    def diffs(self, pairs: Sequence[tuple[str, str]]) -> PendingDiffs:
        """`diff` of every (base, head) pair, in order, from one git process (huge files' diffs
        come after the rest: `main` now, `huge()` when their texts are read)."""
        return PendingDiffs(self.path, pairs, self._env(), read=self._read, unread=sorted(self.unread))

    @cached_property
    def _read(self) -> dict[tuple[str, str], bytes]:
        """Files diffs already read (huge ones, diffed in parts): (rev, path) -> bytes."""
        return {}

    @cached_property
    def _blobs(self) -> BlobReader:
        return BlobReader(self.path, self._env())

    def file_at(self, rev: str, path: str) -> bytes | None:
        """A file's bytes at a revision, or None when it is not there."""
        known = self._read.get((rev, path))
        return known if known is not None else self._blobs.read(rev, path)

    def prefetch_files(self, keys: Iterable[tuple[str, str]]) -> None:
        """Start reading these (rev, path) files in the background; `file_at` then waits for them."""
        self._blobs.prefetch(key for key in keys if key not in self._read)

    def tree_paths(self, rev: str) -> list[str]:
        """Every file path of the repository at a revision."""
        out = self._git("ls-tree", "-r", "-z", "--name-only", rev)
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def tree_blobs(self, rev: str) -> list[tuple[str, str, int]]:
        """Every file (blob) of the repository at a revision: path, blob id, size in bytes (in a
        clone lacking blobs, with no promisor remote answering: every file whose blob it holds)."""
        try:
            out = self._git("ls-tree", "-r", "-z", "-l", rev)
        except SourceError:  # (a size is read from the blob: git stops on one the clone lacks)
            return self._held_tree_blobs(rev)
        rows = []
        for entry in out.split(b"\0"):
            meta, tab, path = entry.partition(b"\t")
            fields = meta.split()
            if tab and len(fields) == 4 and fields[1] == b"blob" and fields[3].isdigit():
                rows.append((path.decode("utf-8", "surrogateescape"), fields[2].decode(), int(fields[3])))
        return rows

    def _held_tree_blobs(self, rev: str) -> list[tuple[str, str, int]]:
        """`tree_blobs` of the blobs the clone holds (found by `rev-list --missing=print`, which
        fetches nothing; the sizes of those held then read without a fetch)."""
        listed = self._git("rev-list", "--objects", "--no-walk", "--missing=print", rev)
        missing = {row[1:].decode() for row in listed.split(b"\n") if row.startswith(b"?")}
        entries = []
        for entry in self._git("ls-tree", "-r", "-z", rev).split(b"\0"):
            meta, tab, path = entry.partition(b"\t")
            fields = meta.split()
            if tab and len(fields) == 3 and fields[1] == b"blob" and fields[2].decode() not in missing:
                entries.append((path.decode("utf-8", "surrogateescape"), fields[2].decode()))
        if not entries:
            return []
        sizes = self._git_in(["cat-file", "--batch-check=%(objectsize)"],
                             "".join(f"{blob}\n" for _, blob in entries).encode()).split()
        return [(path, blob, int(size)) for (path, blob), size in zip(entries, sizes, strict=True)]

    def commit_diffs(self, shas: Sequence[str]) -> list[tuple[str, bytes]]:
        """Each non-merge commit's diff against its parent, without context, renames as renames,
        in the order given (one git process for them all)."""
        return self.start_commit_diffs(shas)()

    def start_commit_diffs(self, shas: Sequence[str]) -> Callable[[], list[tuple[str, bytes]]]:
        """`commit_diffs`, its git process started now: the function returned waits for it (so the
        caller goes on meanwhile)."""
        if not shas:
            return list
        started = Started(self.path, ["-c", "core.quotePath=true", "log", "--stdin", "--no-walk=unsorted", "-p",
                                      "-U0", "-M", "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/",
                                      "--dst-prefix=b/", "--format=%x00%H", *excluding(self.unread)],
                          self._env(), ("\n".join(shas) + "\n").encode())

        def diffs() -> list[tuple[str, bytes]]:
            parts = started.output().split(b"\0")[1:]
            return [(part[:40].decode(), part[40:]) for part in parts]

        return diffs
