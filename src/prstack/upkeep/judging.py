"""Pure upkeep judgements: where a hunk landed across releases, an item's first release, its verdict."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from prstack.models import FileChange, HunkResult, HunkStatus, Landed
from prstack.upkeep.values import Landing, Verdict

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
    """The earliest release whose tree holds every hunk of `landings` at once (None: no release
    does), and a sentence when that is not the whole story: hunks that landed in different
    releases, a later release that lacked some of them (taken back or rewritten) and whether they
    all came back, hunks not in the newest release, a hunk that came and went before that."""
    if not landings or not names:
        return None, None
    count = len(names)
    every = [all(lg.present[i] for lg in landings) for i in range(count)]
    earliest = next((i for i, ok in enumerate(every) if ok), None)
    notes: list[str] = []
    lost: int | None = None
    if earliest is None:
        if any(lg.first_seen for lg in landings):
            notes.append("no release holds all its hunks at once")
    else:
        lost = next((i for i in range(earliest + 1, count) if not every[i]), None)
    if earliest is not None and lost is not None:
        stable = count
        while stable > 0 and every[stable - 1]:
            stable -= 1
        what, some = ("its hunk was", "lacked it") if len(landings) == 1 else ("all its hunks were", "lacked some")
        back = f", all back in {names[stable]}" if stable < count else ""
        notes.append(f"{what} in {names[earliest]}, {names[lost]} {some} (taken back or rewritten){back}")
    where = Counter(lg.first_seen for lg in landings if lg.first_seen is not None)
    if len(where) > 1:
        notes.append("its hunks landed in different releases: "
                     + ", ".join(f"{n} in {r}" for r, n in sorted(where.items(), key=lambda kv: names.index(kv[0]))))
    missing = sum(not lg.present[-1] for lg in landings)
    if missing and where:
        notes.append(f"{missing} of {len(landings)} hunk(s) not in the newest release ({names[-1]})")
    if lost is None:  # a hunk that came and went before the release holding them all, or with none
        for lg in landings:
            if lg.reverted_in:
                back = f", back in {lg.landed_in}" if lg.landed_in and lg.landed_in != lg.first_seen else ""
                notes.append(f"a hunk was in {lg.first_seen}, not in {', '.join(lg.reverted_in)}{back}")
                break
    return names[earliest] if earliest is not None else None, "; ".join(notes) or None


def taken_back_note(landed: Landed, names: Sequence[str]) -> str | None:
    """For a merged PR: the releases after its first that took it back (a revert), and whether a
    later one has it again; None when every release since holds it."""
    if not landed.taken_back_in:
        return None
    gone = ", ".join(landed.taken_back_in)
    last = names.index(landed.taken_back_in[-1]) if landed.taken_back_in[-1] in names else len(names) - 1
    back = f", back in {names[last + 1]}" if last + 1 < len(names) else ""
    return f"merged for {landed.first_release}, taken back in {gone}{back}"


def verdict(results: Sequence[HunkResult]) -> Verdict:
    """retire (every counted hunk present), partly-upstream (some), keep (none, every pre-image
    in place: a new file's place is free), rebase (none, and some region diverged, in conflict or
    gone). An item that ships nothing has nothing to rebase: keep."""
    counted = [r for r in results if r.status.shipped]
    if not counted:
        return Verdict.KEEP
    present = sum(r.status.present for r in counted)
    if present == len(counted):
        return Verdict.RETIRE
    if present:
        return Verdict.PARTLY_UPSTREAM
    if all(_clean(r) for r in counted):
        return Verdict.KEEP
    return Verdict.REBASE


def _clean(r: HunkResult) -> bool:
    """Whether a hunk not in the candidate still applies there: its pre-image is in place, or it
    adds a file the candidate lacks."""
    return r.status in _CLEAN or (r.status is HunkStatus.FILE_MISSING and r.hunk.change is FileChange.ADDED)


def writable(results: Sequence[HunkResult]) -> bool:
    """Whether the hunks not present all still apply (their pre-images are in place)."""
    return all(_clean(r) for r in results if r.status.shipped and not r.status.present)
