"""Verdicts judged without the file before the change (a patch gives none): noted where a clone would tell more."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from prstack.match.index import FileIndex
from prstack.match.text import LEVELS, LOOSEST, normalise_all, trivial
from prstack.models import HunkResult, HunkStatus
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
    adds: Counter[tuple[str, str]] = Counter()
    for r in results:
        path = r.hunk.path
        adds.update((path, t) for t in normalise_all(list(r.hunk.added), LOOSEST))
    counts: dict[str, Counter[str]] = {}

    def in_target(path: str) -> Counter[str]:
        if path not in counts:
            try:
                data = target.read(path)
            except Unreadable:
                data = None
            counts[path] = Counter(FileIndex.of(data).norm(LOOSEST)) if data is not None else Counter()
        return counts[path]

    out = []
    for r in results:
        note = None
        if r.status is HunkStatus.RELOCATED:
            note = TARGET_ALONE
        elif r.status is HunkStatus.APPLIED and r.hunk.added and not r.hunk.removed and r.installed_path:
            for t in r.hunk.added:
                if trivial(t):
                    continue
                now, added = in_target(r.installed_path)[_loose(t)], adds[(r.hunk.path, _loose(t))]
                if now > added:
                    note = (f"judged from the target alone: the added line {t.strip()!r} is in the file {now} "
                            f"times, the patches add it {added}; whether it was there before is not known")
                    break
        if note is not None:
            note = f"{r.evidence.note}; {note}" if r.evidence.note else note
            r = replace(r, evidence=replace(r.evidence, note=note))
        out.append(r)
    return tuple(out)


_loose = LEVELS[LOOSEST][1]
