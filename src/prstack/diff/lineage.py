"""Which commit wrote each line: the PR's commits' diffs replayed in order, no blame. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from prstack.diff.quoting import unquote_git_bytes

Owners = list[str | None]
"""Per line of a file (index 0 = line 1): the commit that wrote it, None for older lines; lines past
the end of the list are older lines too."""

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def diff_path(raw: bytes, prefix: bytes) -> str | None:
    """A `---`/`+++`/`rename` path of git's diff, unquoted, without its a/ b/ prefix."""
    raw = raw.rstrip(b"\r\n\t")  # git ends a name holding a space with a tab
    raw = unquote_git_bytes(raw)
    if raw == b"/dev/null":
        return None
    return raw.removeprefix(prefix).decode("utf-8", "surrogateescape")


_FileHunk = tuple[int, int, bytes, tuple[bytes, ...]]
"""A hunk of one commit's file diff: old start, old count, its lines' kinds (b"+", b"-", b" ") and
the text of its removed lines, in order."""


class Replayed(NamedTuple):
    """What replaying a PR's commits tells about each path at its head."""

    owners: dict[str, Owners]
    """Which commit wrote each line."""
    taken_back: dict[str, frozenset[str]]
    """The lines (stripped, not blank) that one of the commits wrote and a later one removed again:
    lines the PR's own history holds nowhere in its net change. Back in a target, they tell that
    the commit that removed them is not."""


def _replay(old: Owners, hunks: Sequence[_FileHunk], sha: str, taken: set[str]) -> Owners:
    """`old` after one file diff of `sha`: each hunk replaces its old lines; unchanged lines keep
    their owners. The text of a removed line some commit of the range wrote goes to `taken`."""
    new: Owners = []
    pos = 0  # index into old of the first line not yet copied or dropped

    def take(upto: int) -> None:
        nonlocal pos
        if upto > pos:
            new.extend(old[pos:upto])
            if upto > len(old):
                new.extend([None] * (upto - max(pos, len(old))))
            pos = upto

    for start, count, lines, removed in hunks:
        take(start if count == 0 else start - 1)
        at = pos
        gone = iter(removed)
        for kind in lines:
            if kind == 43:  # "+"
                new.append(sha)
                continue
            if kind == 32:  # " "
                new.append(old[at] if at < len(old) else None)
            else:
                text = next(gone, b"")
                if at < len(old) and old[at] is not None and (line := text.decode("utf-8", "replace").strip()):
                    taken.add(line)
            at += 1
        pos = at
    new.extend(old[pos:])
    while new and new[-1] is None:
        new.pop()
    return new


def replay(commits: Iterable[tuple[str, bytes]], files: Mapping[str, Owners] | None = None) -> Replayed:
    """Each path's line owners, and the lines taken back, after applying in order each (sha, diff
    of the commit against its parent): git's unified diffs, any context, renames shown as renames.
    Linear in the diffs' size plus the touched files' changed stretches."""
    owners: dict[str, Owners] = dict(files or {})
    taken: dict[str, set[str]] = {}
    for sha, diff in commits:
        for old_path, new_path, hunks in file_diffs(diff):
            old = owners.pop(old_path, []) if old_path is not None else []
            lines = taken.pop(old_path, set()) if old_path is not None else set()
            if new_path is not None:
                owners[new_path] = _replay(old, hunks, sha, lines) if hunks else old
                if lines:
                    taken[new_path] = lines
    return Replayed(owners, {path: frozenset(lines) for path, lines in taken.items()})


def file_diffs(diff: bytes) -> Iterable[tuple[str | None, str | None, list[_FileHunk]]]:
    """(old path, new path, hunks) of each file in one commit's diff (None: no such side)."""
    lines = diff.splitlines(keepends=True)
    i, n = 0, len(lines)
    while i < n:
        if not lines[i].startswith(b"diff --git "):
            i += 1
            continue
        i += 1
        old: str | None = None
        new: str | None = None
        renamed: tuple[str | None, str | None] = (None, None)
        while i < n and not lines[i].startswith((b"diff --git ", b"@@ ")):
            line = lines[i]
            if line.startswith(b"--- "):
                old = diff_path(line[4:], b"a/")
            elif line.startswith(b"+++ "):
                new = diff_path(line[4:], b"b/")
            elif line.startswith(b"rename from "):
                renamed = (diff_path(line[12:], b""), renamed[1])
            elif line.startswith(b"rename to "):
                renamed = (renamed[0], diff_path(line[10:], b""))
            i += 1
        if old is None and new is None:
            if renamed[0] is None or renamed[1] is None:
                continue  # mode-only or binary change: no lines to own
            old, new = renamed  # a pure rename: no --- / +++ lines
        hunks: list[_FileHunk] = []
        while i < n and lines[i].startswith(b"@@ "):
            m = _HUNK.match(lines[i])
            i += 1
            if m is None:
                continue
            old_left = int(m[2]) if m[2] is not None else 1
            new_left = int(m[4]) if m[4] is not None else 1
            start, count, kinds, removed = int(m[1]), old_left, bytearray(), []
            while i < n and (old_left > 0 or new_left > 0):
                c = lines[i][:1]
                if c == b"+":
                    kinds += b"+"
                    new_left -= 1
                elif c == b"-":
                    kinds += b"-"
                    removed.append(lines[i][1:])
                    old_left -= 1
                elif c == b" " or lines[i] in (b"\n", b"\r\n"):
                    kinds += b" "
                    old_left -= 1
                    new_left -= 1
                elif c != b"\\":
                    break
                i += 1
            while i < n and lines[i].startswith(b"\\"):
                i += 1
            hunks.append((start, count, bytes(kinds), tuple(removed)))
        yield old, new, hunks
