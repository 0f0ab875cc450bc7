"""Pure hunk matching: (hunks of one file, target file bytes, package index) -> verdicts with evidence.

PLACEHOLDER first cut (exact search only); the rigorous matcher replaces it (issue 3).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from prstack.models import FileChange, Hunk, HunkResult, HunkStatus, MatchEvidence


def decode(data: bytes) -> list[str]:
    """Bytes to lines without endings; CRLF and CR tolerated, undecodable bytes kept as escapes."""
    text = data.decode("utf-8", "surrogateescape")
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


class PackageIndex:
    """Every text file of the audited distribution, indexed on first use for relocation search."""

    def __init__(self, load: Callable[[], Mapping[str, bytes]]) -> None:
        self._load = load
        self._files: dict[str, list[str]] | None = None

    @property
    def files(self) -> dict[str, list[str]]:
        if self._files is None:
            self._files = {path: decode(data) for path, data in self._load().items()}
        return self._files


def _find(lines: list[str], image: tuple[str, ...], near: int) -> int | None:
    if not image:
        return None
    n = len(image)
    starts = [i for i in range(len(lines) - n + 1) if tuple(lines[i : i + n]) == image]
    return min(starts, key=lambda i: abs(i - near)) if starts else None


def match_file(
    hunks: Sequence[Hunk],
    target: bytes | None,
    *,
    installed_path: str,
    base: bytes | None = None,
    head: bytes | None = None,
    package: PackageIndex | None = None,
) -> list[HunkResult]:
    """Judge every hunk of one file of one PR against the target's copy of that file.

    `target` is None when the target lacks the file. `base` and `head` are the whole file
    at the PR's base and head, where known (fast paths and anchoring).
    """
    results = []
    lines = decode(target) if target is not None else None
    for hunk in hunks:
        if lines is None:
            status = HunkStatus.APPLIED if hunk.change is FileChange.DELETED else HunkStatus.FILE_MISSING
            results.append(HunkResult(hunk, status, installed_path=installed_path))
            continue
        near = hunk.new_start - 1
        at = _find(lines, hunk.new_image, near)
        if at is not None and (hunk.added or _find(lines, hunk.old_image, near) is None):
            results.append(
                HunkResult(hunk, HunkStatus.APPLIED, installed_path, installed_path, at + 1,
                           at - near, 0, MatchEvidence())
            )
        else:
            results.append(HunkResult(hunk, HunkStatus.MISSING, installed_path=installed_path))
    return results
