"""Helpers for the matcher's tests: real unified diffs (difflib) parsed by prstack.hunks."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from prstack.hunks import parse_diff
from prstack.matcher import PackageIndex, match_file
from prstack.models import Hunk, HunkResult

PATH = "pkg/mod.py"


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def make_hunks(old: str, new: str, *, path: str = PATH, pr: int = 1, context: int = 3) -> list[Hunk]:
    """The hunks of the diff old -> new, as prstack parses them from git."""
    a, b = lines_of(old), lines_of(new)
    for side in (a, b):
        if side and not side[-1].endswith("\n"):
            side[-1] += "\n"
    src = "/dev/null" if not old else f"a/{path}"
    dst = "/dev/null" if not new else f"b/{path}"
    diff = "".join(difflib.unified_diff(a, b, src, dst, n=context))
    assert diff, "old and new must differ"
    return parse_diff(diff, pr)


def apply_some(old: str, new: str, chosen: Sequence[bool], *, context: int = 3) -> str:
    """`old` with only the chosen hunks of old -> new applied (truth by construction)."""
    a, b = lines_of(old), lines_of(new)
    groups = list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context))
    assert len(groups) == len(chosen)
    out: list[str] = []
    pos = 0
    for group, take in zip(groups, chosen, strict=True):
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                continue
            out.extend(a[pos:i1])
            out.extend(b[j1:j2] if take else a[i1:i2])
            pos = i2
    out.extend(a[pos:])
    return "".join(out)


def judge(
    old: str, new: str, target: str | bytes | None, *, context: int = 3,
    package: dict[str, str] | None = None, with_sides: bool = False, path: str = PATH,
) -> list[HunkResult]:
    hunks = make_hunks(old, new, context=context, path=path)
    data = target.encode("utf-8", "surrogateescape") if isinstance(target, str) else target
    index = None
    if package is not None:
        files = {p: t.encode() for p, t in package.items()}
        index = PackageIndex(lambda: files)
    return match_file(
        hunks, data, installed_path=path, package=index,
        base=old.encode() if with_sides else None, head=new.encode() if with_sides else None,
    )
