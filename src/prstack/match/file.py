"""Pure hunk matching: (hunks of one file, target file bytes, package index) -> verdicts with evidence.

No I/O: callers pass bytes. The pieces live in `prstack.match`; this module is the public face.
How a hunk is judged, in order:
  1. file-level changes (binary, mode, pure rename, deleted file) and absent files;
  2. fast paths: target text identical to the PR head (all applied) or to its base (all missing);
  3. per hunk, in diff order, where the diff expects it after the offsets of the hunks before
     it (as patch tracks them): a direct look there; else a window from unique lines around the
     hunk in head/base, and the whole new or old image nearest to it (exact, then trailing-space,
     whitespace, quotes), or re-wrapped; an image outside the window loses to the hunk's whole
     context found inside it, judged there line by line (partial, diverged, conflict); then fuzz;
  4. hunks not present in their file: their block searched in the rest of the package (relocated).
  5. for a PR below others in a stack, hunks still not present: present where the target's file is
     the file at a head above it (the stack composed; see StackTop).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from prstack.match.anchors import Anchors
from prstack.match.explain import Explainer
from prstack.match.index import FileIndex
from prstack.match.judge import judge
from prstack.match.package import PackageIndex, key, loose_keys
from prstack.match.region import Finding
from prstack.match.relocation import looked_up_elsewhere, relocated, relocation_blocks, settle
from prstack.match.shape import Shape
from prstack.match.text import LEVELS, LOOSEST, blob_id, decode, names_blob, same_file, same_text, trivial
from prstack.models import FileChange, Hunk, HunkResult, HunkStatus, MatchEvidence, Rewrite

__all__ = ["Elsewhere", "Explainer", "OwnVerdict", "PackageIndex", "StackTop", "at_stack_top", "decode",
           "file_verdicts", "looked_up", "match_file", "relocated", "relocation_blocks", "settle"]

FOUND_TEXT_MAX = 40
"""At most this many target lines are quoted as evidence."""


@dataclass(frozen=True)
class StackTop:
    """The file at the heads of the PRs built on a PR, the top's first (they may have rewritten
    the PR's lines): the stack composed, as a target built from all or part of it holds it."""

    texts: Callable[[], Iterable[tuple[int, bytes | None]]]
    """(PR, the file at its head), read only when asked; None: that head does not have the file
    (deleted or moved above)."""
    blobs: tuple[tuple[int, str | None], ...] = ()
    """(PR, the file's blob id at its head as its diff names it; None: deleted there), for PRs
    that name no head to read (patches)."""

    def same_as(self, target: bytes | None) -> int | None:
        """The first PR whose head leaves the file as `target` holds it (None: none)."""
        same = next((n for n, text in self.texts() if same_file(target, text)), None)
        if same is None:
            same = next((n for n, blob in self.blobs if (target is None and blob is None) or (
                target is not None and blob is not None and names_blob(blob, target))), None)
        return same


@dataclass(frozen=True)
class Elsewhere:
    """Where a hunk's block not found in its own file is looked for: the target's other files
    (`package`), a place there counting as a move only where `explain` does not explain it otherwise."""

    package: PackageIndex
    explain: Explainer | None = None


def match_file(
    hunks: Sequence[Hunk],
    target: bytes | None,
    *,
    installed_path: str,
    base: bytes | None = None,
    head: bytes | None = None,
    elsewhere: Elsewhere | None = None,
) -> list[HunkResult]:
    """Judge every hunk of one file of one PR against the target's copy of that file.

    `target` is None when the target lacks the file. `base` and `head` are the whole file
    at the PR's base and head, where known (fast paths and anchoring). `elsewhere`: where a block
    not found in its file is looked for (relocated).
    """
    explain = elsewhere.explain if elsewhere is not None else None
    return looked_up(file_verdicts(hunks, target, installed_path, (base, head), explain), installed_path, elsewhere)


OwnVerdict = tuple[HunkResult, bool]
"""A hunk's verdict from its own file alone, and whether its block is then looked for in the
target's other files (a verdict of missing or diverged there)."""


def file_verdicts(hunks: Sequence[Hunk], target: bytes | None, installed_path: str,
                  sides: tuple[bytes | None, bytes | None], explain: Explainer | None = None) -> list[OwnVerdict]:
    """The verdicts `match_file` gives before any block is looked for elsewhere: they depend on the
    file's bytes, its `sides` (base, head) and the lines the other PRs' hunks of the file add
    (`explain`), never on the target's other files."""
    if any(h.symlink for h in hunks):  # (one file's hunks: all of them)
        note = "a symbolic link: what it points to is not compared (only file contents are)"
        return [(HunkResult(h, HunkStatus.UNVERIFIABLE, installed_path, evidence=MatchEvidence(note=note)), False)
                for h in hunks]
    return _match_file(hunks, target, installed_path, sides, explain)


def looked_up(verdicts: Iterable[OwnVerdict], installed_path: str, elsewhere: Elsewhere | None) -> list[HunkResult]:
    """The verdicts with each block that asks it looked for in the target's other files."""
    if elsewhere is None:
        return [result for result, _ in verdicts]
    return [looked_up_elsewhere(result, elsewhere.package, installed_path, elsewhere.explain) if ask else result
            for result, ask in verdicts]


def at_stack_top(results: list[HunkResult], target: bytes | None, installed_path: str,
                 top: StackTop) -> list[HunkResult]:
    """`results` of a PR below others in a stack, with the hunks not present present where the
    target holds the file as a head above it leaves it (the whole stack composed, or part of it)."""
    if all(r.status.present for r in results) or any(r.hunk.symlink for r in results):
        return results  # (a symbolic link's target is not compared, at any head)
    same = top.same_as(target)
    if same is None:
        return results
    note = (f"present as rewritten later by #{same} (file identical to its head)" if target is not None
            else f"the file is gone at #{same}'s head (deleted or moved there), as in the target")
    return [r if r.status.present else _at_top(r.hunk, installed_path, note, same) for r in results]


def _match_file(hunks: Sequence[Hunk], target: bytes | None, installed_path: str,
                sides: tuple[bytes | None, bytes | None], explain: Explainer | None) -> list[OwnVerdict]:
    base, head = sides
    if target is None:
        return [_absent(h, installed_path) for h in hunks]
    if head is not None and same_text(target, head):
        return [(_file_level(h, target, installed_path) or _at_head(h, installed_path), False) for h in hunks]
    if base is not None and same_text(target, base):
        note = "file identical to the PR's base"
        out = []
        for h in hunks:
            result = _file_level(h, target, installed_path) or HunkResult(
                h, HunkStatus.MISSING, installed_path, evidence=MatchEvidence(note=note))
            out.append((result, result.status is HunkStatus.MISSING))
        return out
    idx = FileIndex.of(target)
    ref = head if head is not None else base
    anchors = Anchors(ref, idx) if ref is not None else None
    results: list[OwnVerdict] = []
    carry = 0
    min_start = 0
    known: Container[str] | None = None
    for h in hunks:
        fixed = _file_level(h, target, installed_path)
        if fixed is not None:
            results.append((fixed, False))
            continue
        if h.change is FileChange.DELETED and not h.new_lines:
            results.append((_deleted_present(h, idx, installed_path), False))
            continue
        exp_new = _start0(h.new_start, h.new_lines)
        refine = None
        if anchors is not None:
            ref_line = exp_new if head is not None else _start0(h.old_start, h.old_lines)
            ref_len = h.new_lines if head is not None else h.old_lines
            refine = partial(anchors.window, ref_line, ref_line + ref_len)
        if known is None:
            known = explain.added_by_others(h.pr, installed_path) if explain is not None else frozenset()
        verdict = judge(idx, Shape.of(h), exp_new + carry, min_start, refine, known)
        if verdict.start is not None and verdict.end is not None:
            carry = verdict.end - (exp_new + h.new_lines)
            min_start = max(min_start, verdict.end)
        result = _result(h, verdict, idx, installed_path, exp_new)
        if result.status is HunkStatus.APPLIED and head is not None:
            result = _more_than_base(result, hunks, idx, head)
        results.append((result, result.status in (HunkStatus.MISSING, HunkStatus.DIVERGED)))
    return results


def _more_than_base(result: HunkResult, hunks: Sequence[Hunk], idx: FileIndex, head: bytes) -> HunkResult:
    """An applied pure addition whose lines the file held before the PR counts as applied only
    when the target holds each of them more often than the base did (the base's count: the
    head's, less the PR's additions of that line to this file). Else the lines found are those
    that were there all along: missing. Not where some added line (not trivial) is in the head
    once: the PR's own line, found in the matched image with the rest."""
    h = result.hunk
    if h.removed or not h.added:
        return result
    added = [t for t in h.added if not trivial(t)]
    repeated = [t for t in added if head.count(t.encode("utf-8", "surrogateescape")) > 1]
    if len(repeated) < len(added):
        # an added line the head holds once is the PR's own, found with the rest: the lines are
        # not old ones (the cheap, common case: no added line occurs twice in the head at all)
        return result
    loose = LEVELS[LOOSEST][1]
    head_count = Counter(loose_keys(head).split(b"\n"))  # (by `key`: as `loose` on the decoded lines, faster)
    adds = Counter(loose(t) for other in hunks for t in other.added)
    target = idx.positions(LOOSEST)
    for t in repeated:
        k = loose(t)
        before = head_count[key(t)] - adds[k]
        now = target.count(k)
        if before > 0 and now <= before:
            note = (f"the added line {t.strip()!r} was in the file {before} times before the PR; "
                    f"the target holds it {now} times, no more: not counted as applied")
            return HunkResult(h, HunkStatus.MISSING, result.installed_path,
                              evidence=MatchEvidence(found_text=result.evidence.found_text, note=note))
    return result


def _start0(start: int, count: int) -> int:
    """0-based first line of a diff range (an empty range names the line before it)."""
    return start - 1 if count else start


def _at_head(h: Hunk, installed_path: str) -> HunkResult:
    line = _start0(h.new_start, h.new_lines) + 1
    return HunkResult(h, HunkStatus.APPLIED, installed_path, installed_path, line, 0, 0,
                      MatchEvidence(note="file identical to the PR's head"))


def _at_top(h: Hunk, installed_path: str, note: str, by: int) -> HunkResult:
    """Present as the stack leaves the file at the head of PR `by`, built on the hunk's."""
    return HunkResult(h, HunkStatus.APPLIED, installed_path, evidence=MatchEvidence(note=note),
                      superseded_by=Rewrite(by, None))


def _file_level(h: Hunk, target: bytes, installed_path: str) -> HunkResult | None:
    """Verdicts for changes without a text body, the file being present."""
    if h.change is FileChange.BINARY or (h.lines == () and (h.old_blob or h.new_blob)
                                          and h.change not in (FileChange.MODE, FileChange.RENAMED)):
        return _binary(h, target, installed_path)
    if h.lines:
        return None
    if h.change is FileChange.MODE:
        note = "file present; file modes are not verifiable in an installed tree"
        return HunkResult(h, HunkStatus.UNVERIFIABLE, installed_path, installed_path,
                          evidence=MatchEvidence(note=note))
    if h.change is FileChange.RENAMED:
        note = f"file present under its new name (was {h.old_path})"
        return HunkResult(h, HunkStatus.APPLIED, installed_path, installed_path,
                          evidence=MatchEvidence(note=note))
    if h.change is FileChange.DELETED:
        return HunkResult(h, HunkStatus.MISSING, installed_path,
                          evidence=MatchEvidence(note="the PR deletes this file; it is still there"))
    if h.change is FileChange.ADDED:
        if target.strip():
            return HunkResult(h, HunkStatus.DIVERGED, installed_path, evidence=MatchEvidence(
                note="the PR adds this file empty; the target's copy has content"))
        return HunkResult(h, HunkStatus.APPLIED, installed_path, installed_path, 1, 0, 0)
    return HunkResult(h, HunkStatus.APPLIED, installed_path, installed_path,
                      evidence=MatchEvidence(note="no line changes to check; file present"))


def _binary(h: Hunk, target: bytes, installed_path: str) -> HunkResult:
    got = blob_id(target)

    def same(blob: str | None) -> bool:
        return blob is not None and names_blob(blob, target)

    note = f"target blob {got}"
    if same(h.new_blob):
        return HunkResult(h, HunkStatus.APPLIED, installed_path, installed_path,
                          evidence=MatchEvidence(note=note + " = PR head"))
    if same(h.old_blob):
        return HunkResult(h, HunkStatus.MISSING, installed_path,
                          evidence=MatchEvidence(note=note + " = PR base"))
    why = " matches neither side of the diff" if h.new_blob or h.old_blob else "; diff names no blob"
    return HunkResult(h, HunkStatus.DIVERGED, installed_path, evidence=MatchEvidence(note=note + why))


def _deleted_present(h: Hunk, idx: FileIndex, installed_path: str) -> HunkResult:
    """The PR deletes the file, yet the target has it: missing when it still holds the old text."""
    old = [t for t in h.old_image if not trivial(t)]
    have = set(idx.lines)
    kept = sum(1 for t in old if t in have)
    if not old or kept * 2 >= len(old):
        status, note = HunkStatus.MISSING, "the PR deletes this file; it is still there"
    else:
        status, note = HunkStatus.DIVERGED, "the PR deletes this file; it is there, rewritten"
    return HunkResult(h, status, installed_path, evidence=MatchEvidence(note=note))


def _absent(h: Hunk, installed_path: str) -> OwnVerdict:
    if h.change is FileChange.DELETED or (h.change is FileChange.BINARY and h.old_blob and not h.new_blob):
        # (a binary file's deletion names its old blob and a null new one)
        return HunkResult(h, HunkStatus.APPLIED, installed_path,
                          evidence=MatchEvidence(note="file deleted, as the PR does")), False
    result = HunkResult(h, HunkStatus.FILE_MISSING, installed_path,
                        evidence=MatchEvidence(note="the target has no such file"))
    return result, bool(h.lines)


def _result(h: Hunk, v: Finding, idx: FileIndex, installed_path: str, exp_new: int) -> HunkResult:
    found_text: tuple[str, ...] = ()
    if v.start is not None and v.end is not None:
        found_text = tuple(idx.window(v.start, min(v.end, v.start + FOUND_TEXT_MAX)))
    evidence = MatchEvidence(v.normalisation, v.applied_lines, v.missing_lines, found_text, v.note)
    offset = v.start - exp_new if v.start is not None else None
    where = v.status in (HunkStatus.APPLIED, HunkStatus.PARTIAL, HunkStatus.CONFLICT)
    return HunkResult(
        h, v.status, installed_path,
        found_path=installed_path if where else None,
        found_line=v.start + 1 if where and v.start is not None else None,
        offset=offset, fuzz=v.fuzz, evidence=evidence,
    )
