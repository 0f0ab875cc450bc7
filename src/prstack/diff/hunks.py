"""Diff text -> Hunks with provenance. Pure; the only module that imports unidiff."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace

from prstack.diff.plain import plain_hunks
from prstack.diff.quoting import unquote_git
from prstack.errors import InputError
from prstack.models import FileChange, Hunk, HunkLine

_INDEX_RE = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)", re.MULTILINE)
_NULL_BLOB = re.compile(r"^0+$")


def _strip_prefix(name: str | None) -> str | None:
    if name is None or name == "/dev/null":
        return None
    name = unquote_git(name)
    if name.startswith(("a/", "b/")):
        name = name[2:]
    return name


def check_path(path: str) -> str:
    """Refuse a diff path that would leave the repository (absolute, '..', empty, a NUL).

    Control characters, quotes and backslashes are legal in a git file name: kept (renderers escape them).
    """
    if not path or path.startswith("/") or ".." in path.split("/") or "\0" in path:
        raise InputError(
            f"the diff names the path {path!r}, which leaves the repository; "
            "refusing to use this diff (check where it came from)."
        )
    return path


_SYMLINK_RE = re.compile(r"^(?:new file |deleted file |old |new )?mode 120000$", re.MULTILINE)


def _bodies(text: str) -> Iterator[tuple[HunkLine, ...]]:
    """The lines of each hunk of a diff unidiff has checked, in order, as unidiff's full parse reads
    them: lines split at LF only, a bare line ending an empty context line, the "No newline at end
    of file" marker no line of ours. (unidiff's parse without line contents checks the same in a
    third of the time; reading the contents here costs less than the rest.) A line's text is
    without its line ending: its LF, then one CR."""
    from unidiff.constants import RE_HUNK_HEADER

    lines = iter(text.split("\n"))
    for header in lines:
        if not header.startswith("@@ -") or (m := RE_HUNK_HEADER.match(header)) is None:
            continue  # (outside a hunk, every line that reads as a hunk header is one)
        old_left, new_left = int(m.group(2) or 1), int(m.group(4) or 1)
        body: list[HunkLine] = []
        for line in lines:
            kind = line[:1]
            if kind == "+":
                new_left -= 1
                body.append(HunkLine("+", line[1:].removesuffix("\r")))
            elif kind == "-":
                old_left -= 1
                body.append(HunkLine("-", line[1:].removesuffix("\r")))
            elif kind != "\\":  # (the marker: no line)
                old_left -= 1
                new_left -= 1
                # a bare line ending (unidiff takes its first one or two CR/LFs for the line)
                bare = "\r" if line.startswith("\r\r") else ""
                body.append(HunkLine(" ", line[1:].removesuffix("\r") if kind == " " else bare))
            if old_left == 0 and new_left == 0:
                break
        yield tuple(body)


def parse_diff(diff: bytes | str, pr: int) -> list[Hunk]:
    """Parse a unified git diff into Hunks of PR `pr`, file-level changes included."""
    text = diff.decode("utf-8", "surrogateescape") if isinstance(diff, bytes) else diff
    plain = plain_hunks(text, pr)
    if plain is not None:
        for path in dict.fromkeys(h.path for h in plain):
            check_path(path)
        return plain
    return _parsed(text, pr)


def _parsed(text: str, pr: int) -> list[Hunk]:
    """`parse_diff` of any diff, by unidiff's parser (imported here: the plainest diffs, most of
    them, never need it)."""
    from unidiff.errors import UnidiffParseError
    from unidiff.patch import PatchSet

    try:
        patch = PatchSet(text, metadata_only=True)
    except UnidiffParseError as exc:
        raise InputError(
            f"the diff of PR #{pr} is malformed or truncated ({exc}); refetch it."
        ) from None
    bodies = _bodies(text)
    hunks: list[Hunk] = []
    for pfile in patch:
        old_path = _strip_prefix(pfile.source_file)
        new_path = _strip_prefix(pfile.target_file)
        info = str(pfile.patch_info or "")
        m = _INDEX_RE.search(info)
        old_blob = new_blob = None
        if m:
            old_blob = None if _NULL_BLOB.match(m.group(1)) else m.group(1)
            new_blob = None if _NULL_BLOB.match(m.group(2)) else m.group(2)
        if pfile.is_added_file:
            change, old_path = FileChange.ADDED, None
        elif pfile.is_removed_file:
            change = FileChange.DELETED
        elif pfile.is_binary_file:
            change = FileChange.BINARY
        elif pfile.is_rename:
            change = FileChange.RENAMED
        elif len(pfile) == 0 and "old mode" in info:
            change = FileChange.MODE
        else:
            change = FileChange.MODIFIED
        symlink = _SYMLINK_RE.search(info) is not None
        path = check_path(new_path or old_path or "")
        if old_path is not None:
            check_path(old_path)
        if len(pfile) == 0:
            hunks.append(
                Hunk(pr, path, old_path, change if not pfile.is_binary_file else FileChange.BINARY,
                     0, 0, 0, 0, (), (), old_blob, new_blob, symlink)
            )
            continue
        for uh in pfile:
            hunks.append(
                Hunk(pr, path, old_path, change, uh.source_start, uh.source_length,
                     uh.target_start, uh.target_length, next(bodies), (), old_blob, new_blob, symlink)
            )
    return hunks


def in_path_order(hunks: list[Hunk], file_hunks: list[Hunk], path: str) -> list[Hunk]:
    """`hunks` of a diff with one more file's hunks placed where git's path order puts them."""
    key = path.encode("utf-8", "surrogateescape")
    at = next((i for i, h in enumerate(hunks) if h.path.encode("utf-8", "surrogateescape") > key), len(hunks))
    return hunks[:at] + file_hunks + hunks[at:]


def added_line_numbers(hunk: Hunk) -> list[int]:
    """1-based line numbers, in the post-change file, of the hunk's added lines."""
    numbers, line_no = [], hunk.new_start
    for line in hunk.lines:
        if line.kind == "+":
            numbers.append(line_no)
        if line.kind != "-":
            line_no += 1
    return numbers


def with_provenance(
    hunks: Sequence[Hunk],
    blame: Mapping[str, Mapping[int, str]],
    commit_order: Sequence[str],
    touching: Callable[[str], Sequence[str]],
) -> list[Hunk]:
    """Attach to each hunk the commits that introduced it.

    `blame[path][line]` names the commit of each added line (post-change numbering);
    `commit_order` is the PR's commits oldest first; `touching(path)` lists the commits that
    touch a path, for hunks with no added line (pure deletions, file-level changes): those get
    every such commit, the last one being the best guess.
    """
    rank = {sha: i for i, sha in enumerate(commit_order)}
    out = []
    for hunk in hunks:
        per_line = blame.get(hunk.path, {})
        shas = {per_line[n] for n in added_line_numbers(hunk) if n in per_line}
        if not shas:
            shas = set(touching(hunk.path))
        commits = tuple(sorted(shas, key=lambda s: rank.get(s, len(rank))))
        out.append(replace(hunk, commits=commits))
    return out
