"""A hunk not at its place, looked for in the package's other files: relocated where its block stands
elsewhere and nothing else explains it being there. Pure: the package index is given."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import islice

from prstack.match.explain import Explainer
from prstack.match.package import PackageIndex
from prstack.match.text import LEVELS, LOOSEST, normalise_all, trivial
from prstack.models import HunkResult, HunkStatus, MatchEvidence

RELOCATE_MIN_LINES = 3
"""Non-trivial added lines a block needs to count as moved when the old lines are still in place."""
RELOCATE_MIN_CHARS = 60
RELOCATE_WEAK_MIN_LINES = 2
"""...and when the file or the hunk's region is gone (the block had to go somewhere)."""
RELOCATE_WEAK_MIN_CHARS = 30


def relocation_blocks(result: HunkResult) -> list[tuple[str, ...]]:
    """The blocks whose presence in another file of the package would make `result` relocated,
    in the order they are tried; none for a result that is not missing, diverged or file-missing.

    The evidence must be substantial: trivial lines never count, and when the old lines are still
    in place (missing) the added block alone must be sizeable, so copied code is not taken for a move.
    The hunk's own place must be consistent with a move: its pre-image there (missing), the file
    or the whole region gone, or the changed lines removed with nothing in their place; a region
    rewritten (other lines where the hunk's lines were) is not a move.
    """
    if result.status not in (HunkStatus.MISSING, HunkStatus.DIVERGED, HunkStatus.FILE_MISSING):
        return []
    h = result.hunk
    added = [t for t in h.added if not trivial(t)]
    if not added:
        return []
    if result.status is HunkStatus.MISSING:
        strong = len(added) >= RELOCATE_MIN_LINES and _chars(added) >= RELOCATE_MIN_CHARS
        return [h.added] if strong else []
    if result.status is HunkStatus.DIVERGED and _rewritten(result):
        return []
    blocks = [h.new_image] if sum(1 for t in h.new_image if not trivial(t)) >= 3 else []
    if len(added) >= RELOCATE_WEAK_MIN_LINES and _chars(added) >= RELOCATE_WEAK_MIN_CHARS:
        blocks.append(h.added)
    return blocks


def _chars(lines: Sequence[str]) -> int:
    """The characters of `lines` that are not whitespace."""
    return len("".join("".join(lines).split()))


def _rewritten(result: HunkResult) -> bool:
    """Whether the target's lines at a diverged hunk's place hold text that is none of the hunk's."""
    own = set(normalise_all([t for _, t in result.hunk.lines], LOOSEST))
    return any(not trivial(t) and _loose(t) not in own for t in result.evidence.found_text)


_loose = LEVELS[LOOSEST][1]

MOVED_MAX = 8
"""At most this many places of one block elsewhere are weighed (each may be explained otherwise)."""


def relocated(result: HunkResult, path: str, line: int, normalisation: str | None = None) -> HunkResult:
    """`result` turned relocated: its block was found at `line` (1-based) of `path`."""
    return HunkResult(
        result.hunk, HunkStatus.RELOCATED, result.installed_path, path, line, None, None,
        MatchEvidence(normalisation, found_text=(),
                      note=f"not at its place ({result.status.value}); its block is in {path}:{line}"),
    )


def moved_places(package: PackageIndex, blocks: Sequence[Sequence[str]],
                 exclude: str | Sequence[str] | None) -> list[Iterator[tuple[str, int]]]:
    """For each of `blocks`, the places (installed path, 1-based line) it occurs in files other than
    `exclude` (one or several), at most MOVED_MAX, found as they are asked for (`settle` often needs one)."""
    return [islice(package.find_all(block, exclude=exclude), MOVED_MAX) for block in blocks]


def _block_level(block: Sequence[str], lines: Sequence[str], at: int) -> str | None:
    """The strictest normalisation under which the non-trivial lines of `block` are the
    non-trivial lines of `lines` from `at` on (as the package index found them)."""
    want = [t for t in block if not trivial(t)]
    got: list[str] = []
    i = at
    while len(got) < len(want) and i < len(lines):
        if _loose(lines[i]) == _loose(want[len(got)]):
            got.append(lines[i])
        elif not trivial(_loose(lines[i])):
            break
        i += 1
    for name, norm in LEVELS:
        if len(got) == len(want) and all(norm(a) == norm(b) for a, b in zip(want, got, strict=True)):
            return name
    return LEVELS[LOOSEST][0]


def settle(result: HunkResult, blocks: Sequence[Sequence[str]], found: Sequence[Iterable[tuple[str, int]]],
           explain: Explainer | None, package: PackageIndex) -> HunkResult:
    """`result` given where its `blocks` were `found` elsewhere (in `package`): relocated to the
    first place not explained otherwise (see Explainer), with the normalisation that equates the
    block with the lines there (worked out for that place only); else as it is, its note naming
    an explained place."""
    seen: tuple[str, int, str] | None = None
    for block, places in zip(blocks, found, strict=True):
        base: bool | None = None
        for path, line in places:
            if base is None:  # (asked only of a block found elsewhere: it may read the base)
                base = explain is not None and explain.by_base(result.hunk, block)
            why = explain.why(result.hunk, block, path, base) if explain is not None else None
            if why is None:
                return relocated(result, path, line, _block_level(block, package.lines(path), line - 1))
            seen = seen or (path, line, why)
            if base:
                break  # (every other place is explained by the base too)
    if seen is None:
        return result
    path, line, why = seen
    said = f"the same text is in {path}:{line}, explained {why}; not counted"
    note = f"{result.evidence.note}; {said}" if result.evidence.note else said
    return replace(result, evidence=replace(result.evidence, note=note))


def looked_up_elsewhere(result: HunkResult, package: PackageIndex, installed_path: str,
               explain: Explainer | None) -> HunkResult:
    """`result` with its block looked up in the rest of the package (see relocation_blocks)."""
    blocks = relocation_blocks(result)
    if not blocks:
        return result
    return settle(result, blocks, moved_places(package, blocks, installed_path), explain, package)
