"""Stack markers in PR bodies and commit messages: "depends on #N", ghstack/spr/stack-pr."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache


class MarkerKind(StrEnum):
    """What kind of text named another PR (or tied commits across PRs)."""

    DEPENDS_ON = "depends-on"
    """Prose: "depends on #N", "stacked on #N", "based on #N", "requires #N" (names the parent)."""
    GHSTACK = "ghstack"
    """ghstack trailer "Pull Request resolved: .../pull/N" (names the PR the commit belongs to)."""
    STACK_INFO = "stack-info"
    """stack-pr trailer "stack-info: PR: .../pull/N, branch: ..." (names the commit's own PR)."""
    STACK_LIST = "stack-list"
    """A stack listed in a PR body, newest first (ghstack "Stack from ghstack", spr "Stack:",
    Graphite): the PRs listed below the PR itself are what it builds on."""
    COMMIT_ID = "commit-id"
    """spr trailer "commit-id: 8a3b1c2d" or Gerrit "Change-Id: I…" (ties copies of a commit)."""


@dataclass(frozen=True)
class Marker:
    """One marker found in a text."""

    kind: MarkerKind
    pr: int | None
    """The PR number it names (None for commit-id markers)."""
    text: str
    """The marker as written, e.g. 'Depends on #40727' (for the report)."""
    value: str | None = None
    """For commit-id markers: the id."""


_PR_REF = r"(?:#|(?:https?://[^\s/]+/[^\s/]+/[^\s/]+/pull/))(\d+)"
_DEPENDS = re.compile(
    r"\b(?:depends\s+on|stacked\s+on(?:\s+top\s+of)?|based\s+on(?:\s+top\s+of)?|requires|builds?\s+on)"
    r"(?:\s+(?:PR|pull\s+request))?\s*:?\s*" + _PR_REF,
    re.IGNORECASE,
)
_GHSTACK = re.compile(
    r"^\s*Pull[ -]Request(?:\s+resolved)?:\s*\S*?/pull/(\d+)\b", re.IGNORECASE | re.MULTILINE
)
_STACK_INFO = re.compile(
    r"^\s*stack-info:.*?\bPR:\s*\S*?/pull/(\d+)\b", re.IGNORECASE | re.MULTILINE
)
_COMMIT_ID = re.compile(
    r"^\s*(commit-id|Change-Id):\s*([0-9A-Za-z]{6,64})\s*$", re.IGNORECASE | re.MULTILINE
)


def parse_markers(text: str | None) -> list[Marker]:
    """Every stack marker of one text, in the order they appear (duplicates removed)."""
    return list(_markers_of(text)) if text else []


@lru_cache(maxsize=1 << 16)
def _markers_of(text: str) -> tuple[Marker, ...]:
    """`parse_markers`, kept per text: a stacked PR's commits are its parents' too, so detection
    reads each message again for every PR above it (5,000 parses for a 50-PR stack otherwise)."""
    found: list[tuple[int, Marker]] = []
    for m in _DEPENDS.finditer(text):
        found.append(
            (m.start(), Marker(MarkerKind.DEPENDS_ON, int(m.group(1)), _squash(m.group(0))))
        )
    for m in _GHSTACK.finditer(text):
        found.append((m.start(), Marker(MarkerKind.GHSTACK, int(m.group(1)), _squash(m.group(0)))))
    for m in _STACK_INFO.finditer(text):
        found.append(
            (m.start(), Marker(MarkerKind.STACK_INFO, int(m.group(1)), _squash(m.group(0))))
        )
    for m in _COMMIT_ID.finditer(text):
        found.append(
            (m.start(), Marker(MarkerKind.COMMIT_ID, None, _squash(m.group(0)), m.group(2)))
        )
    found.sort(key=lambda item: item[0])
    return tuple(dict.fromkeys(marker for _, marker in found))


_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBER = re.compile(r"#(\d+)\b")


def parse_stack_list(body: str | None, own: int) -> list[Marker]:
    """The PRs below `own` in a stack list of a PR body (newest first, as ghstack, spr and
    Graphite write them), nearest first."""
    if not body:
        return []
    lowered = body.lower()
    if "stack" not in lowered and "dependencies" not in lowered:
        return []  # (no line names one)
    lines = body.splitlines()
    for start, line in enumerate(lines):
        if "stack" not in line.lower() and "dependencies" not in line.lower():
            continue
        items: list[int] = []
        for row in lines[start + 1 :]:
            bullet = _BULLET.match(row)
            if not bullet:
                if items or row.strip():
                    break
                continue
            numbers = [int(n) for n in _NUMBER.findall(bullet.group(1))]
            if len(numbers) != 1:
                break
            items.append(numbers[0])
        if own in items and len(items) > 1:
            below = items[items.index(own) + 1 :]
            return [Marker(MarkerKind.STACK_LIST, n, f"stack list: #{n} below #{own}") for n in below]
    return []


def named_prs(texts: Iterable[str | None], own: int) -> dict[int, list[Marker]]:
    """PRs other than `own` that the texts name (as parent or as a commit's own PR) -> markers."""
    named: dict[int, list[Marker]] = {}
    for text in texts:
        for marker in parse_markers(text) + parse_stack_list(text, own):
            if marker.pr is not None and marker.pr != own:
                named.setdefault(marker.pr, [])
                if marker not in named[marker.pr]:
                    named[marker.pr].append(marker)
    return named


def commit_id(message: str) -> str | None:
    """The spr commit-id or Gerrit Change-Id of a commit message, if it has one."""
    for marker in parse_markers(message):
        if marker.kind is MarkerKind.COMMIT_ID:
            return marker.value
    return None


def _squash(text: str) -> str:
    return " ".join(text.split())
