"""Many diffs from one `git diff-tree --stdin` (a process per diff costs more than the work); a
huge file's diff on the parts that differ (`bigdiff`)."""

from __future__ import annotations

import contextlib
import re
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from prstack.errors import SourceError
from prstack.sources.git.bigdiff import shifted_hunks, trimmed_diff
from prstack.sources.git.runner import READ_BUFFER, Env, environ, run_git, spawn

_HEADER = re.compile(rb"^[0-9a-f]{40,64} [0-9a-f]{40,64}\n?$")
DIFF_OPTIONS = ("-p", "-r", "-M", "--full-index", "--no-color", "--no-ext-diff",
                "--src-prefix=a/", "--dst-prefix=b/")
"""The patch form every PR diff has (rename detection, full blob ids), as `git diff` gives it."""


def diff_many(repo: Path, pairs: Sequence[tuple[str, str]], env: Env = None,
              big_file: int | None = None, read: dict[tuple[str, str], bytes] | None = None
              ) -> list[bytes]:
    """The unified diff of each (base, head) pair of commits or trees, in order (see PendingDiffs)."""
    return PendingDiffs(repo, pairs, env, big_file, read).whole()


class PendingDiffs:
    """The unified diffs of many (base, head) pairs of commits or trees, from a few git processes:
    one naming every side's tree, one listing what changed, one `git diff-tree --stdin` diffing
    the tree pairs. With `--always` every pair yields exactly one header line (its two trees), so
    the output splits by position; git flushes after each pair, so `sections` hands each diff
    over as soon as git has written it, and the caller parses one while git writes the next.

    Files of `big_file` bytes or more (BIG_FILE by default) are diffed on the parts that differ
    (`prstack.sources.git.bigdiff`) instead of by git as a whole; their texts are read by other
    git processes meanwhile: `sections` leaves them out, `huge()` waits for them. The texts are put in
    `read` as (rev, path) -> bytes for the pairs' revs, and as (blob id, "") -> bytes.
    """

    read_size = READ_BUFFER
    """Bytes of git's output read at a time."""

    def __init__(self, repo: Path, pairs: Sequence[tuple[str, str]], env: Env = None,
                 big_file: int | None = None, read: dict[tuple[str, str], bytes] | None = None,
                 unread: Sequence[str] = ()) -> None:
        """`unread`: paths left out of every diff (the clone lacks their blobs)."""
        self._repo, self._pairs, self._env, self._read = repo, list(pairs), env, read
        self._big: list[_BigChange] = []
        self._texts: list[_BlobsRead] = []
        self._headers: list[bytes] = []
        self._proc: subprocess.Popen[bytes] | None = None
        if not pairs:
            return
        revs = list(dict.fromkeys(rev for pair in pairs for rev in pair))
        trees = run_git(repo, ["rev-parse", *(f"{rev}^{{tree}}" for rev in revs)], env).decode().split()
        tree_of = dict(zip(revs, trees, strict=True))
        self._headers = [f"{tree_of[base]} {tree_of[head]}\n".encode() for base, head in pairs]
        stdin = b"".join(self._headers)
        self._big = _big_changes(repo, stdin, len(pairs), env, BIG_FILE if big_file is None else big_file,
                                 excluding(unread))
        excluded = sorted({change.path for change in self._big} | set(unread))
        pathspec = ["--", *(f":(exclude,literal){path}" for path in excluded)] if excluded else []
        # huge blobs inflate on other cores while git diffs the rest
        self._texts = [_BlobsRead(repo, shas, env) for change in self._big for shas in change.reads]
        self._errors = tempfile.TemporaryFile(prefix="prstack-diff-")  # noqa: SIM115 (closed by sections)
        self._proc = spawn(repo, ["-c", "core.quotepath=off", "diff-tree", "--stdin", "--always", *DIFF_OPTIONS,
                                  *pathspec], env, stderr=self._errors, bufsize=0)
        assert self._proc.stdin is not None
        with contextlib.suppress(OSError):  # (a git that died says so when it is waited for)
            self._proc.stdin.write(stdin)  # one line a pair: fits the pipe, git reads it at once
        self._proc.stdin.close()

    def sections(self) -> Iterator[bytes]:
        """Each pair's diff, less the huge files, in order, as git writes them (once only)."""
        proc, self._proc = self._proc, None
        if proc is None:
            if self._pairs:
                raise SourceError("the diffs were already read")
            return
        assert proc.stdout is not None
        headers = self._headers
        slack = max(map(len, headers)) + 1  # a header split by a read starts this near the end
        buffer = b""
        start = 0  # where the section being read starts in `buffer`, after its header
        scan = 0  # where the next header may start (it was looked for before)
        seen = 0  # headers seen: the section being read is pair seen - 1's
        try:
            while chunk := proc.stdout.read(self.read_size):
                cut = max(0, start - 1)  # (the newline ending the last header is kept)
                scan = max(scan, len(buffer) - slack) - cut
                buffer = buffer[cut:] + chunk
                start -= cut
                while seen < len(headers):
                    if not seen:
                        if not buffer.startswith(headers[0]):
                            break
                        found = 0
                    else:
                        found = buffer.find(b"\n" + headers[seen], scan) + 1
                        if not found:
                            break
                        yield buffer[start:found]
                    start = found + len(headers[seen])
                    scan = start - 1
                    seen += 1
            proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            self._errors.seek(0)
            stderr = self._errors.read().decode("utf-8", "replace").strip().replace("\n", " ")
            self._errors.close()
        if proc.returncode != 0 or seen != len(headers):
            raise SourceError(f"git diff-tree in {self._repo} answered {max(0, seen - 1)} of "
                              f"{len(headers)} diffs" + (f": {stderr}" if stderr else ""))
        yield buffer[start:]

    @property
    def has_huge(self) -> bool:
        """Whether some files are left out of `sections`, for `huge()`."""
        return bool(self._big)

    @property
    def huge_read(self) -> bool:
        """Whether the huge files' texts are read (so `huge()` only diffs them)."""
        return all(read.done for read in self._texts)

    def huge(self) -> list[tuple[int, str, bytes]]:
        """(pair index, path, that file's diff) for each huge file, once its texts are read."""
        out = []
        texts = {sha: text for read in self._texts for sha, text in read.texts().items()}
        for change in self._big:
            old, new = texts[change.old_blob], texts[change.new_blob]
            if self._read is not None:  # by (rev, path) and by blob id
                base, head = self._pairs[change.pair]
                self._read[(base, change.path)] = self._read[(change.old_blob, "")] = old
                self._read[(head, change.path)] = self._read[(change.new_blob, "")] = new
            out.append((change.pair, change.path, _big_file_diff(change, old, new, self._env)))
        return out

    def whole(self) -> list[bytes]:
        """Each pair's whole diff, files in git's order."""
        diffs = list(self.sections())
        for pair, path, file_diff in self.huge():
            diffs[pair] = _insert_file(diffs[pair], path, file_diff)
        return diffs


BIG_FILE = 4_000_000
"""Files at least this large on both sides of a change are diffed by `bigdiff`."""
BINARY_PEEK = 8000
"""git takes a file with a NUL byte in its first this many bytes for binary."""


@dataclass(frozen=True)
class _BigChange:
    pair: int
    path: str
    mode: str
    old_blob: str
    new_blob: str
    delta: str | None
    """The blob of the two stored as a delta of the other, if one is."""

    @property
    def reads(self) -> list[tuple[str, ...]]:
        """How to read the blobs: the delta and then its base in one git, whose delta-base cache
        then hands the base over without inflating it again; two unrelated blobs at once."""
        if self.delta is None:
            return [(self.old_blob,), (self.new_blob,)]
        return [(self.delta, self.new_blob if self.delta == self.old_blob else self.old_blob)]


def excluding(paths: Iterable[str]) -> list[str]:
    """The pathspec that leaves `paths` out of a git diff ([] for none)."""
    paths = sorted(set(paths))
    return ["--", *(f":(exclude,literal){path}" for path in paths)] if paths else []


def _big_changes(repo: Path, stdin: bytes, count: int, env: Env, big_file: int,
                 pathspec: Sequence[str] = ()) -> list[_BigChange]:
    """Modifications of huge files, where every change the pairs make to that path is one
    (renamed, added, deleted, re-moded or oddly named huge files are left to git)."""
    raw = run_git(repo, ["diff-tree", "--stdin", "--always", "-r", "-M", "--raw", "-z", "--abbrev=64", *pathspec],
               env, stdin)
    found: list[tuple[int, str, str, str, str]] = []  # pair, path, mode, old blob, new blob
    others: set[str] = set()
    pair = -1
    tokens = raw.split(b"\0")
    i = 0
    while i < len(tokens):
        token = tokens[i]
        *headers, meta = token.split(b"\n")
        pair += len([h for h in headers if _HEADER.match(h)])
        i += 1
        if not meta.startswith(b":"):
            continue
        fields = meta[1:].split()
        status = fields[4][:1] if len(fields) == 5 else b"?"
        npaths = 2 if status in (b"R", b"C") else 1
        paths = [t.decode("utf-8", "surrogateescape") for t in tokens[i : i + npaths]]
        i += npaths
        if status == b"M" and fields[0] == fields[1] and _plain(paths[0]):
            found.append((pair, paths[0], fields[1].decode(), fields[2].decode(), fields[3].decode()))
        else:
            others.update(paths)
    if not found or pair + 1 != count:
        return []
    objects = _objects(repo, {sha for *_, old, new in found for sha in (old, new)}, env)

    def huge(sha: str) -> bool:
        return objects.get(sha, (0, ""))[0] >= big_file

    def delta(old: str, new: str) -> str | None:
        return new if objects[new][1] == old else old if objects[old][1] == new else None

    big = [_BigChange(pair, path, mode, old, new, delta(old, new))
           for pair, path, mode, old, new in found if huge(old) and huge(new)]
    small = {path for _, path, _, old, new in found if not (huge(old) and huge(new))}
    return [c for c in big if c.path not in others and c.path not in small]


def _plain(path: str) -> bool:
    """A path git prints unquoted (so a header written here reads as git's would)."""
    return path.isprintable() and '"' not in path and "\\" not in path and " b/" not in path


def _objects(repo: Path, blobs: Iterable[str], env: Env) -> dict[str, tuple[int, str]]:
    """Each object's size, and the object its stored form is a delta of (or git's null id)."""
    out = run_git(repo, ["cat-file", "--batch-check=%(objectname) %(objectsize) %(deltabase)"], env,
               "".join(f"{b}\n" for b in blobs).encode())
    found = {}
    for line in out.decode().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].isdigit():
            found[parts[0]] = (int(parts[1]), parts[2])
    return found


class _BlobsRead:
    """Huge blobs' bytes, being read by one `git cat-file --batch`, asked for in this order (a blob
    stored as a delta of the next one first: git keeps the base it inflated for the delta and
    hands it over without inflating it again, from its delta-base cache). git writes to a
    temporary file, read back when the texts are asked for: nothing here waits for git meanwhile."""

    def __init__(self, repo: Path, shas: Sequence[str], env: Env) -> None:
        self._repo = repo
        self._wanted = list(dict.fromkeys(shas))
        self._out = tempfile.TemporaryFile(prefix="prstack-blob-")  # noqa: SIM115 (closed by texts)
        self._errors = tempfile.TemporaryFile(prefix="prstack-blob-errors-")  # noqa: SIM115
        self._proc = spawn(repo, ["cat-file", "--batch"], env, stdout=self._out, stderr=self._errors, bufsize=-1)
        assert self._proc.stdin is not None
        with contextlib.suppress(OSError):  # (a git that died says so when it is waited for)
            self._proc.stdin.write("".join(f"{sha}\n" for sha in self._wanted).encode())
        self._proc.stdin.close()

    @property
    def done(self) -> bool:
        return self._proc.poll() is not None

    def texts(self) -> dict[str, bytes]:
        """sha -> bytes (waits for git)."""
        try:
            if self._proc.wait() != 0:
                self._errors.seek(0)
                stderr = self._errors.read().decode("utf-8", "replace").strip().replace("\n", " ")
                raise SourceError(f"git cat-file --batch failed in {self._repo}: {stderr}")
            out = self._out
            out.seek(0)
            texts: dict[str, bytes] = {}
            for sha in self._wanted:  # blob by blob: each text is read once, not sliced from the whole
                parts = out.readline().split()
                if len(parts) != 3 or parts[1] != b"blob":
                    raise SourceError(f"git cat-file in {self._repo} has no blob {sha}")
                size = int(parts[2])
                texts[sha] = out.read(size)
                if len(texts[sha]) != size or out.read(1) != b"\n":
                    raise SourceError(f"git cat-file in {self._repo} answered {sha} short")
            return texts
        finally:
            self._out.close()
            self._errors.close()


def _big_file_diff(change: _BigChange, old: bytes, new: bytes, env: Env) -> bytes:
    """git's diff of one huge file, computed on the parts of it that differ when that is safe."""
    header = (f"diff --git a/{change.path} b/{change.path}\n"
              f"index {change.old_blob}..{change.new_blob} {change.mode}\n").encode("utf-8", "surrogateescape")
    if b"\0" in old[:BINARY_PEEK] or b"\0" in new[:BINARY_PEEK]:  # git's own test for binary
        return header + f"Binary files a/{change.path} and b/{change.path} differ\n".encode(
            "utf-8", "surrogateescape")
    hunks = trimmed_diff(old, new, partial(diff_texts, env))
    if hunks is None:
        hunks = shifted_hunks(diff_texts(env, old, new), 0, 0)
    names = f"--- a/{change.path}\n+++ b/{change.path}\n".encode("utf-8", "surrogateescape")
    return header + names + b"".join(hunks)


def diff_texts(env: Env, old: bytes, new: bytes) -> bytes:
    """git's unified diff of two texts (the options of DIFF_OPTIONS that shape hunks, pinned)."""
    with tempfile.TemporaryDirectory(prefix="prstack-diff-") as tmp:
        a, b = Path(tmp, "a"), Path(tmp, "b")
        a.write_bytes(old)
        b.write_bytes(new)
        done = subprocess.run(
            ["git", "diff", "--no-index", "--no-color", "--no-ext-diff", "--no-textconv", "-U3",
             "--diff-algorithm=myers", "--indent-heuristic", "--", str(a), str(b)],
            capture_output=True, env=environ(env), cwd=tmp)
    if done.returncode not in (0, 1):
        stderr = done.stderr.decode("utf-8", "replace").strip().replace("\n", " ")
        raise SourceError(f"git diff --no-index failed: {stderr}")
    return done.stdout


def _insert_file(diff: bytes, path: str, file_diff: bytes) -> bytes:
    """`diff` with one more file's diff, placed in git's path order."""
    key = f"diff --git a/{path} ".encode("utf-8", "surrogateescape")
    for m in re.finditer(rb"^diff --git a/[^\n]*", diff, re.MULTILINE):
        if m.group() + b" " > key:
            return diff[: m.start()] + file_diff + diff[m.start() :]
    return diff + file_diff


