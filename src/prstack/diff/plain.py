"""The plainest git diffs read in one pass: text files added, deleted or changed in place, each with its
`diff --git` and `index` lines, `---`/`+++` names and hunks, and nothing else (pure). Any other shape
(renames, modes, binary files, quoted names, bare lines, CRs) is left to unidiff's parser (None),
which reads these alike: a diff of many files pays for that parser's generality on every line."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from functools import partial
from operator import itemgetter
from typing import NamedTuple

from prstack.models import FileChange, Hunk, HunkLine

_FILE = re.compile(r"diff --git a/([^\s\"\\]+) b/([^\s\"\\]+)")
_INDEX = re.compile(r"index ([0-9a-f]+)\.\.([0-9a-f]+)(?: \d+)?")
_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SIDES = {"new file mode 100644": "new", "new file mode 100755": "new",
          "deleted file mode 100644": "deleted", "deleted file mode 100755": "deleted"}
_NO_NEWLINE = "\\ No newline at end of file"
_NULL_BLOB = re.compile(r"0+")


def plain_hunks(text: str, pr: int) -> list[Hunk] | None:
    """The hunks of `text` as `prstack.diff.hunks.parse_diff` makes them (paths not yet checked),
    when the diff is of the plainest shape (see the module); else None."""
    files = _read.taken(text)
    if files is None:
        return None
    return [h for file in files for h in _file_hunks(pr, *file)]


class PlainFile(NamedTuple):
    """One file of a plain diff as read: its path, `new`/`deleted`/None, its (old, new) blob ids, and
    its hunks' (old start, old count, new start, new count, lines)."""

    path: str
    side: str | None
    blobs: tuple[str | None, str | None]
    heads: tuple[tuple[int, int, int, int, tuple[HunkLine, ...]], ...]


def plain_files(text: str) -> tuple[PlainFile, ...] | None:
    """The files of `text` when the diff is of the plainest shape (its hunks' line counts then hold,
    and no body line follows a hunk's last one); else None. What is read is kept for `plain_hunks`
    of the same text, which takes it (see _Read: a patch's diffs are checked, then parsed)."""
    return _read.files(text)


def _plain_files(text: str) -> tuple[PlainFile, ...] | None:
    if "\r" in text or not text.endswith("\n"):
        return None
    lines = text.split("\n")
    n = len(lines) - 1  # (the last is the empty rest after the final newline)
    out: list[PlainFile] = []
    i = 0
    while i < n:
        m = _FILE.fullmatch(lines[i])
        if m is None or m[1] != m[2]:
            return None
        path = m[1]
        side = _SIDES.get(lines[i + 1])
        i += 2 if side is not None else 1
        if i + 3 > n:  # (its index, ---, +++ and a hunk's lines)
            return None
        index = _INDEX.fullmatch(lines[i])
        if (index is None or lines[i + 1] != ("--- /dev/null" if side == "new" else f"--- a/{path}")
                or lines[i + 2] != ("+++ /dev/null" if side == "deleted" else f"+++ b/{path}")):
            return None
        i += 3
        heads: list[tuple[int, int, int, int, tuple[HunkLine, ...]]] = []
        while i < n and lines[i].startswith("@@ -"):
            h = _HUNK.match(lines[i])
            if h is None:
                return None
            old, new = int(h[2] or 1), int(h[4] or 1)
            counted = body_end(lines, i + 1, old, new) if old or new else None
            if counted is None:
                return None
            end, markers = counted
            heads.append((int(h[1]), old, int(h[3]), new, _body(lines[i + 1 : end], markers)))
            i = end
            while i < n and lines[i] == _NO_NEWLINE:
                i += 1
        if not heads:
            return None
        out.append(PlainFile(path, side, (_blob(index[1]), _blob(index[2])), tuple(heads)))
    return tuple(out) or None


READ_KEPT_CHARS = 16_000_000
"""How many characters of diffs the files read and not yet parsed are kept for (the least recently
read go)."""


class _Read(threading.local):
    """The files of the diffs read in this thread and not yet parsed, by text, up to READ_KEPT_CHARS.
    Asked for the very text object read before, the lookup costs no pass over it (a str keeps its
    hash, and a dict compares a key with itself by identity)."""

    def __init__(self) -> None:
        self.by_text: dict[str, tuple[PlainFile, ...] | None] = {}
        self.size = 0

    def files(self, text: str) -> tuple[PlainFile, ...] | None:
        if text in self.by_text:
            got = self.by_text.pop(text)
        else:
            got = _plain_files(text)
            self.size += len(text)
            while self.size > READ_KEPT_CHARS and self.by_text:
                oldest = next(iter(self.by_text))
                self.size -= len(oldest)
                del self.by_text[oldest]
        self.by_text[text] = got  # (last: the most recently read)
        return got

    def taken(self, text: str) -> tuple[PlainFile, ...] | None:
        """The files of `text`, read before or now, no longer kept."""
        if text in self.by_text:
            self.size -= len(text)
            return self.by_text.pop(text)
        return _plain_files(text)


_read = _Read()


def _file_hunks(pr: int, path: str, side: str | None, blobs: tuple[str | None, str | None],
                heads: Sequence[tuple[int, int, int, int, tuple[HunkLine, ...]]]) -> list[Hunk]:
    """One file's hunks, its change told as unidiff tells it (one hunk from line 0 of an empty side
    adds or deletes the file)."""
    only = heads[0] if len(heads) == 1 else None
    if side == "new" or (only is not None and only[0] == 0 and only[1] == 0):
        change, old_path = FileChange.ADDED, None
    elif side == "deleted" or (only is not None and only[2] == 0 and only[3] == 0):
        change, old_path = FileChange.DELETED, path
    else:
        change, old_path = FileChange.MODIFIED, path
    return [Hunk(pr, path, old_path, change, old_start, old_lines, new_start, new_lines, body, (), *blobs)
            for old_start, old_lines, new_start, new_lines, body in heads]


def _blob(digits: str) -> str | None:
    return None if _NULL_BLOB.fullmatch(digits) else digits


def body_end(lines: list[str], i: int, old: int, new: int, *, blank_context: bool = False) -> tuple[int, int] | None:
    """Where the body of a hunk from line `i` ends, its counts `old` and `new`, and how many markers
    it holds, when each of its lines is a context, removed or added line or a marker (with
    `blank_context`, an empty line is a context line that lost its space; else it makes the body
    unsound); else None (the lines run out, a line of another kind, more lines than counted).
    Counted a run of lines at a time: each line uses up one count at most, so the next
    max(old, new) lines all belong to it."""
    markers = 0
    while old > 0 or new > 0:
        run = max(old, new)
        if i + run >= len(lines):
            return None
        kinds = "".join([line[:1] for line in lines[i : i + run]])
        blank = run - len(kinds) if blank_context else 0
        context, removed, added = kinds.count(" ") + blank, kinds.count("-"), kinds.count("+")
        marked = kinds.count("\\")
        if context + removed + added + marked < run:  # (a bare line, another kind)
            return None
        markers += marked
        old, new, i = old - context - removed, new - context - added, i + run
        if old < 0 or new < 0:
            return None
    return i, markers


def _body(lines: list[str], markers: int) -> tuple[HunkLine, ...]:
    """A hunk body's lines (each starting with its kind), its `markers` left out."""
    if markers:
        lines = [line for line in lines if not line.startswith("\\")]
    return tuple(map(hunk_line, zip(map(_KIND, lines), map(_TEXT, lines), strict=True)))


hunk_line: Callable[[tuple[str, str]], HunkLine] = partial(tuple.__new__, HunkLine)
"""HunkLine((kind, text)), at C speed (a named tuple's own constructor is Python code)."""
_KIND, _TEXT = itemgetter(0), itemgetter(slice(1, None))
