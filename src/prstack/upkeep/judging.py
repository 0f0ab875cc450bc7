"""Pure upkeep judgements: where a hunk landed across releases, an item's first release, its verdict."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from prstack.models import HunkResult, HunkStatus
from prstack.upkeep.model import Landing, Verdict

_CLEAN = (HunkStatus.MISSING,)
"""Statuses of a hunk not in the candidate that still applies there (its pre-image is in place)."""


def landing(present: Sequence[bool], names: Sequence[str]) -> Landing:
    """Where a hunk is across releases (`present[i]`: release `names[i]` holds it)."""
    flags = tuple(present)
    first = next((i for i, p in enumerate(flags) if p), None)
    stable = len(flags)
    while stable > 0 and flags[stable - 1]:
        stable -= 1
    landed = names[stable] if stable < len(flags) else None
    reverted = tuple(names[i] for i in range(len(flags)) if first is not None and i > first and not flags[i]
                     and flags[i - 1])
    return Landing(flags, landed, names[first] if first is not None else None, reverted)


def first_release(landings: Sequence[Landing], names: Sequence[str]) -> tuple[str | None, str | None]:
    """The earliest release from which on every release holds every hunk of `landings`, and a
    sentence when that is not the whole story (hunks that landed in different releases, a release
    that held them all and a later one that lost some, hunks not in the newest release)."""
    if not landings or not names:
        return None, None
    count = len(names)
    every = [all(lg.present[i] for lg in landings) for i in range(count)]
    stable = count
    while stable > 0 and every[stable - 1]:
        stable -= 1
    first = names[stable] if stable < count else None
    notes: list[str] = []
    earliest = next((i for i, ok in enumerate(every) if ok), None)
    if earliest is not None and earliest < stable:
        lost = next(i for i in range(earliest + 1, count) if not every[i])
        notes.append(f"all its hunks were in {names[earliest]}, some were taken back in {names[lost]}")
    elif earliest is None and any(lg.first_seen for lg in landings):
        notes.append("no release holds all its hunks at once")
    where = Counter(lg.landed_in for lg in landings if lg.landed_in is not None)
    if len(where) > 1:
        notes.append("its hunks landed in different releases: "
                     + ", ".join(f"{n} in {r}" for r, n in sorted(where.items(), key=lambda kv: names.index(kv[0]))))
    missing = sum(lg.landed_in is None for lg in landings)
    if missing and where:
        notes.append(f"{missing} of {len(landings)} hunk(s) not in the newest release")
    for lg in landings:
        if lg.reverted_in:
            back = f", back in {lg.landed_in}" if lg.landed_in and lg.landed_in != lg.first_seen else ""
            notes.append(f"a hunk landed in {lg.first_seen}, was reverted in {', '.join(lg.reverted_in)}{back}")
            break
    return first, "; ".join(notes) or None


def verdict(results: Sequence[HunkResult]) -> Verdict:
    """retire (every counted hunk present), partly-upstream (some), keep (none, every pre-image
    in place), rebase (none, and some region diverged, in conflict or gone). An item with no
    hunk that counts (all unverifiable by design) needs a person: rebase."""
    counted = [r for r in results if r.status.shipped]
    if not counted:
        return Verdict.REBASE
    present = sum(r.status.present for r in counted)
    if present == len(counted):
        return Verdict.RETIRE
    if present:
        return Verdict.PARTLY_UPSTREAM
    if all(r.status in _CLEAN for r in counted):
        return Verdict.KEEP
    return Verdict.REBASE


def writable(results: Sequence[HunkResult]) -> bool:
    """Whether the hunks not present all still apply (their pre-images are in place)."""
    return all(r.status in _CLEAN for r in results if r.status.shipped and not r.status.present)
