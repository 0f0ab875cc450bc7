"""Verdicts judged without the file before the change (a patch gives none): noted where a clone would tell more."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from prstack.match.index import FileIndex, Positions
from prstack.match.text import LEVELS, LOOSEST, normalise_all, trivial
from prstack.models import Hunk, HunkResult, HunkStatus
from prstack.targets.base import Target
from prstack.targets.confined import Unreadable

TARGET_ALONE = ("judged from the target alone: a patch gives no file before it, so whether the block was "
                "already in the package is not known")
"""The note of a relocated hunk of a patch (a clone tells a block there all along; a patch cannot)."""


def noted_without_base(results: Sequence[HunkResult], target: Target) -> tuple[HunkResult, ...]:
    """`results` with a note where a clone would have told more: a relocated block may have been
    in the package all along; an applied pure addition of a line the target's file holds more
    often than the patches add it may have found lines that were there before (a clone counts
    them in the file at the PR's base; a patch has no such file)."""
    by_path: dict[str, list[HunkResult]] = {}
    for r in results:
        by_path.setdefault(r.hunk.path, []).append(r)
    adds: dict[str, Counter[str]] = {}
    counts: dict[str, Positions | None] = {}

    def added_at(path: str) -> Counter[str]:
        """How often the audited hunks of `path` add each line (loosely normalised)."""
        if path not in adds:
            adds[path] = Counter(normalise_all([t for r in by_path[path] for k, t in r.hunk.lines if k == "+"],
                                               LOOSEST))
        return adds[path]

    def in_target(path: str, line: str) -> int:
        """How often the target's file at `path` holds `line` (loosely normalised)."""
        if path not in counts:
            try:
                data = target.read(path)
            except Unreadable:
                data = None
            counts[path] = FileIndex.of(data).positions(LOOSEST) if data is not None else None
        held = counts[path]
        return held.count(line) if held is not None else 0

    out = []
    for r in results:
        note = None
        if r.status is HunkStatus.RELOCATED:
            note = TARGET_ALONE
        elif r.status is HunkStatus.APPLIED and r.installed_path and _pure_addition(r.hunk):
            for t in r.hunk.added:
                if trivial(t):
                    continue
                loose = _loose(t)
                now, added = in_target(r.installed_path, loose), added_at(r.hunk.path)[loose]
                if now > added:
                    note = (f"judged from the target alone: the added line {t.strip()!r} is in the file {now} "
                            f"times, the patches add it {added}; whether it was there before is not known")
                    break
        if note is not None:
            note = f"{r.evidence.note}; {note}" if r.evidence.note else note
            r = replace(r, evidence=replace(r.evidence, note=note))
        out.append(r)
    return tuple(out)


def _pure_addition(h: Hunk) -> bool:
    """Whether the hunk adds lines and removes none."""
    kinds = {k for k, _ in h.lines}
    return "+" in kinds and "-" not in kinds


_loose = LEVELS[LOOSEST][1]
