"""A refreshed patch series for the candidate (pure): retired items dropped, partly-upstream ones
reduced to the hunks left, kept ones re-diffed against the candidate's files with fresh line
numbers (as `quilt refresh` would), each patch on top of the ones before it. An item that needs a
person (rebase by hand) stays in `series`, after a comment that says why: a carried patch as it was
(not refreshed), a PR as the comment alone."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from prstack.models import FileChange, Hunk
from prstack.upkeep.judging import writable
from prstack.upkeep.values import Item, UpkeepReport, Verdict


@dataclass(frozen=True)
class Series:
    """The files of a refreshed series (name -> bytes, `series` among them) and what was left out."""

    files: dict[str, bytes]
    written: tuple[tuple[Item, str], ...]
    """Each written item and its patch's name, in series order."""
    dropped: tuple[Item, ...]
    """Retired items."""
    unwritten: tuple[tuple[Item, str], ...]
    """Items still needed that could not be refreshed, and why (rebase them by hand)."""
    kept: tuple[tuple[Item, str], ...] = ()
    """Those of them that are patch files, carried into the series as they were, and their names there."""


class _Stuck(Exception):
    """A hunk whose pre-image is not where the series leaves the file."""


def refreshed_series(report: UpkeepReport, candidate_file: Callable[[str], bytes | None],
                     carried_patch: Callable[[str], bytes | None] = lambda name: None) -> Series:
    """The series for the candidate whose files `candidate_file` gives by repository path;
    `carried_patch` gives a carried patch file's bytes by its name (for those kept as they were)."""
    files: dict[str, bytes] = {}
    tree: dict[str, str | None] = {}
    written: list[tuple[Item, str]] = []
    dropped: list[Item] = []
    unwritten: list[tuple[Item, str]] = []
    kept: list[tuple[Item, str]] = []
    lines: list[str] = []
    for item in report.items:
        if item.verdict is Verdict.RETIRE:
            dropped.append(item)
            continue
        try:
            body = _refreshed(item, tree, candidate_file)
        except _Stuck as exc:
            why = f"rebase by hand: {exc}"
            unwritten.append((item, why))
            original = carried_patch(item.patch) if item.patch is not None else None
            named = f"#{item.number}" if item.patch is None else item.patch
            lines.append(f"# {_one_line(named)}: {_one_line(why)} (not refreshed)\n")
            if original is not None:
                name = _name(item, len(written) + len(kept) + 1, files)
                files[name] = original
                kept.append((item, name))
                lines.append(f"{name}\n")
            continue
        name = _name(item, len(written) + len(kept) + 1, files)
        head = f"{_title(item)}\nRefreshed by prstack upkeep for {report.candidate.name}.\n\n"
        files[name] = head.encode("utf-8", "surrogateescape") + body
        written.append((item, name))
        lines.append(f"{name}\n")
    files["series"] = "".join(lines).encode("utf-8", "surrogateescape")
    return Series(files, tuple(written), tuple(dropped), tuple(unwritten), tuple(kept))


def _refreshed(item: Item, tree: dict[str, str | None], candidate_file: Callable[[str], bytes | None]) -> bytes:
    """The item's remaining hunks as a diff over the series so far; _Stuck when it needs a person."""
    results = [h.result for h in item.hunks]
    if item.verdict is Verdict.REBASE or not writable(results):
        raise _Stuck("; ".join(f"{h.result.hunk.path}:{h.result.hunk.old_start} {h.result.status.value}"
                               for h in item.remaining if h.result.status.value != "missing"))
    return _diff([h.result.hunk for h in item.remaining], tree, candidate_file)


def _one_line(text: str) -> str:
    """Text for a line of `series`: control characters (a newline in a path) as \\xNN."""
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m.group(0)):02x}", text)


def _title(item: Item) -> str:
    subject = item.pr.title or next((c.subject for c in item.pr.commits if c.subject), "")
    named = f"#{item.number}" if item.number is not None else (item.patch or "")
    return f"{named}: {subject}".rstrip(": ") if subject else named


def _name(item: Item, at: int, taken: dict[str, bytes]) -> str:
    if item.patch is not None:
        name = PurePosixPath(item.patch.replace("\\", "/")).name or f"{at:04d}.patch"
    else:
        name = f"{at:04d}-pr-{item.number}.patch"
    name = re.sub(r"[^A-Za-z0-9._+-]", "_", name)
    if name in ("series", "") or name.startswith("."):
        name = f"{at:04d}-{name.lstrip('.')}"
    while name in taken:
        name = f"{at:04d}-{name}"
    return name


def _diff(hunks: Sequence[Hunk], tree: dict[str, str | None], candidate_file: Callable[[str], bytes | None]) -> bytes:
    """The diff of `hunks` applied to the files as the series so far leaves them (kept in `tree`)."""
    by_path: dict[str, list[Hunk]] = {}
    for h in hunks:
        if not h.lines and h.change is not FileChange.DELETED:
            raise _Stuck(f"{h.path}: a {h.change.value} change without text")
        by_path.setdefault(h.path, []).append(h)
    out: list[str] = []
    after: dict[str, str | None] = {}
    for path, file_hunks in by_path.items():
        if path not in tree:
            data = candidate_file(path)
            tree[path] = data.decode("utf-8", "surrogateescape") if data is not None else None
        before = tree[path]
        new = _apply(path, before, file_hunks)
        after[path] = new
        out.append(_unified(path, before, new))
    tree.update(after)
    return "".join(out).encode("utf-8", "surrogateescape")



def _split(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    return lines + ([parts[-1]] if parts[-1] else [])


def _apply(path: str, text: str | None, hunks: Sequence[Hunk]) -> str | None:
    """The file with every hunk applied where its pre-image is, nearest where the diff expects it."""
    if all(h.change is FileChange.ADDED for h in hunks) and text is None:
        return "".join(line.text + "\n" for h in hunks for line in h.lines if line.kind != "-")
    if text is None:
        raise _Stuck(f"{path}: not in the candidate")
    lines = _split(text)
    bare = [line.rstrip("\n") for line in lines]
    offset, floor = 0, 0
    for h in hunks:
        old = list(h.old_image)
        origin = h.old_start - 1 if h.old_lines else h.old_start
        expected = max(origin + offset, 0)
        at = _find(bare, old, expected, floor)
        if at is None:
            raise _Stuck(f"{path}:{h.old_start} its pre-image is not in the candidate")
        ending = lines[at + len(old) - 1][len(bare[at + len(old) - 1]):] if old else "\n"
        new = [line + "\n" for line in h.new_image]
        if new and at + len(old) == len(lines) and not ending:
            new[-1] = new[-1].rstrip("\n")
        lines[at:at + len(old)] = new
        bare[at:at + len(old)] = [n.rstrip("\n") for n in new]
        offset = at - origin + len(new) - len(old)
        floor = at + len(new)
    if all(h.change is FileChange.DELETED for h in hunks) and not lines:
        return None
    return "".join(lines)


def _find(lines: Sequence[str], image: Sequence[str], expected: int, floor: int) -> int | None:
    """Where `image` occurs whole in `lines` at or after `floor`, nearest `expected`."""
    if not image:
        return min(max(expected, floor), len(lines))
    best: int | None = None
    first = image[0]
    for at in range(floor, len(lines) - len(image) + 1):
        if lines[at] == first and list(lines[at:at + len(image)]) == list(image) and (
                best is None or abs(at - expected) < abs(best - expected)):
            best = at
    return best


def _unified(path: str, before: str | None, after: str | None) -> str:
    a, b = _split(before or ""), _split(after or "")
    old = "/dev/null" if before is None else f"a/{path}"
    new = "/dev/null" if after is None else f"b/{path}"
    out = []
    for line in difflib.unified_diff(a, b, old, new, n=3):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
