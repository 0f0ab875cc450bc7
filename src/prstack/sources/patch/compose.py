"""Pure: the hunks of successive diffs of one file (a mailbox's commits) composed into its net hunks.

A patch of several commits changes a file once per commit; the second commit's hunks are numbered
in the file the first left, and may rewrite lines the first added. A clone gives the net diff from
the PR's base to its head; a patch gives only these steps. Where the steps' hunks overlap, the
lines both show of the file between them are the same, and the net hunk is found from them alone
(as combinediff does); steps that do not agree there, or change more than text (renames, binary
files, deletions), are left as they are (None).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher

from prstack.models import FileChange, Hunk, HunkLine

CONTEXT = 3
"""Context lines kept around a composed hunk's changes (git's default)."""

_TEXT = (FileChange.MODIFIED, FileChange.ADDED)


def compose_steps(steps: Sequence[Sequence[Hunk]]) -> list[Hunk] | None:
    """The net hunks of one file changed by `steps` in order (each the hunks of one diff of that
    file, in position order, commits set), or None when they cannot be composed."""
    if any(not step for step in steps):
        return None
    first = steps[0]
    if any(h.change not in _TEXT or not h.lines for step in steps for h in step):
        return None
    if any(h.change is FileChange.ADDED for step in steps[1:] for h in step):
        return None
    net = list(first)
    for step in steps[1:]:
        composed = _compose(net, step)
        if composed is None:
            return None
        net = composed
    last = steps[-1][0]
    return [replace(h, change=first[0].change, old_path=first[0].old_path, old_blob=first[0].old_blob,
                    new_blob=last.new_blob) for h in net]


@dataclass(frozen=True)
class _Span:
    """A hunk's lines in the middle file: of the first diff, its new side; of the second, its old side."""

    start: int
    end: int
    hunk: Hunk
    second: bool


def _start0(start: int, count: int) -> int:
    return start - 1 if count else start


def _span(h: Hunk, second: bool) -> _Span:
    start, count = (h.old_start, h.old_lines) if second else (h.new_start, h.new_lines)
    s = _start0(start, count)
    return _Span(s, s + count, h, second)


def _compose(xs: Sequence[Hunk], ys: Sequence[Hunk]) -> list[Hunk] | None:
    """Hunks A->B (`xs`) then B->C (`ys`) as hunks A->C, or None where they disagree about B."""
    spans = sorted([_span(h, False) for h in xs] + [_span(h, True) for h in ys], key=lambda s: (s.start, s.second))
    clusters: list[list[_Span]] = []
    for span in spans:
        if clusters and span.start <= max(s.end for s in clusters[-1]):
            clusters[-1].append(span)
        else:
            clusters.append([span])
    out: list[Hunk] = []
    shift_x = shift_y = 0  # lines the hunks of each diff before the cluster added (minus removed)
    for cluster in clusters:
        firsts = [s.hunk for s in cluster if not s.second]
        seconds = [s.hunk for s in cluster if s.second]
        if not seconds:
            out += [replace(h, new_start=h.new_start + shift_y) for h in firsts]
        elif not firsts:
            out += [replace(h, old_start=h.old_start - shift_x) for h in seconds]
        else:
            made = _merged(cluster, shift_x, shift_y)
            if made is None:
                return None
            out += made
        shift_x += sum(h.new_lines - h.old_lines for h in firsts)
        shift_y += sum(h.new_lines - h.old_lines for h in seconds)
    return out


def _merged(cluster: Sequence[_Span], shift_x: int, shift_y: int) -> list[Hunk] | None:
    """One net hunk for overlapping hunks of both diffs (none when they cancel out)."""
    b0, b1 = min(s.start for s in cluster), max(s.end for s in cluster)
    middle: dict[int, str] = {}
    for s in cluster:
        image = s.hunk.old_image if s.second else s.hunk.new_image
        for at, text in enumerate(image, s.start):
            if middle.setdefault(at, text) != text:
                return None  # the two diffs do not show the same file between them
    before = _side(cluster, b0, b1, middle, second=False)
    after = _side(cluster, b0, b1, middle, second=True)
    if before is None or after is None:
        return None
    lines: list[HunkLine] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if op == "equal":
            lines += [HunkLine(" ", t) for t in before[i1:i2]]
        else:
            lines += [HunkLine("-", t) for t in before[i1:i2]] + [HunkLine("+", t) for t in after[j1:j2]]
    changed = [i for i, line in enumerate(lines) if line.kind != " "]
    if not changed:
        return []
    lead = max(0, changed[0] - CONTEXT)
    tail = min(len(lines), changed[-1] + 1 + CONTEXT)
    lines = lines[lead:tail]
    old_n = sum(1 for line in lines if line.kind != "+")
    new_n = sum(1 for line in lines if line.kind != "-")
    a0, c0 = b0 - shift_x + lead, b0 + shift_y + lead
    commits = tuple(dict.fromkeys(c for s in cluster for c in s.hunk.commits))
    first = cluster[0].hunk
    return [replace(first, old_start=a0 + 1 if old_n else a0, old_lines=old_n, new_start=c0 + 1 if new_n else c0,
                    new_lines=new_n, lines=tuple(lines), commits=commits)]


def _side(cluster: Sequence[_Span], b0: int, b1: int, middle: dict[int, str], *, second: bool) -> list[str] | None:
    """The cluster's lines before both diffs (`second` False: undo the first's hunks) or after
    both (True: apply the second's), from the middle file's lines both diffs show."""
    own = sorted((s for s in cluster if s.second == second), key=lambda s: (s.start, s.end))
    out: list[str] = []
    b = b0
    for s in own:
        while b < s.start:
            if b not in middle:
                return None
            out.append(middle[b])
            b += 1
        out += list(s.hunk.new_image if second else s.hunk.old_image)
        b = s.end
    while b < b1:
        if b not in middle:
            return None
        out.append(middle[b])
        b += 1
    return out
