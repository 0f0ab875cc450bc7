"""Carried hunks judged in many trees of one clone (releases, a ref, the default branch): each
file's blob at each tree from one stream, each distinct blob judged once per PR and file."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from prstack.match.changes import file_sides
from prstack.match.file import match_file
from prstack.models import Hunk, HunkResult, PullRequest

GroupKey = tuple[int, str]
"""(PR number, repository path): the hunks of one PR in one file, judged together."""
BlobIds = Callable[[Sequence[tuple[str, str]]], list[str | None]]
"""(commit, path) pairs -> the blob id of each there (None: no such file)."""
ReadFile = Callable[[str, str], bytes | None]
Prefetch = Callable[[Iterable[tuple[str, str]]], None]


def grouped(hunks: Iterable[Hunk]) -> dict[GroupKey, list[Hunk]]:
    """Hunks by (PR, path), in the order they first occur."""
    groups: defaultdict[GroupKey, list[Hunk]] = defaultdict(list)
    for hunk in hunks:
        groups[(hunk.pr, hunk.path)].append(hunk)
    return dict(groups)


class TreeJudge:
    """Verdicts of each hunk group in the files of many commits' trees. A file's blob is judged
    once per group however many trees hold it (the same file at thirty tags: one judgement)."""

    def __init__(self, prs: Mapping[int, PullRequest], groups: Mapping[GroupKey, list[Hunk]], *,
                 blob_ids: BlobIds, read: ReadFile, prefetch: Prefetch, with_sides: bool) -> None:
        self._prs, self._groups = prs, groups
        self._blob_ids, self._read, self._prefetch = blob_ids, read, prefetch
        self._with_sides = with_sides
        self._judged: dict[tuple[GroupKey, str | None], list[HunkResult]] = {}
        self._probed: dict[GroupKey, list[_Probe]] = {}
        self.judgements = 0
        """How many (group, blob) judgements the matcher made (the rest were shared)."""
        self.shortcuts = 0
        """How many (group, blob) pairs held every hunk's whole new image verbatim (no matcher needed)."""

    def blobs(self, commits: Sequence[str]) -> dict[str, dict[GroupKey, str | None]]:
        """Per commit, each group's file blob there."""
        paths = sorted({path for _, path in self._groups})
        ids = self._blob_ids([(c, p) for c in commits for p in paths])
        at = {(c, p): ids[i * len(paths) + j] for i, c in enumerate(commits) for j, p in enumerate(paths)}
        return {c: {key: at[(c, key[1])] for key in self._groups} for c in commits}

    def presence(self, commits: Sequence[str]) -> dict[str, dict[GroupKey, tuple[bool, ...]]]:
        """Per commit, whether each group's hunks are present in that commit's tree (see `_held`)."""
        blobs = self.blobs(commits)
        found = self._held({(key, blob) for per in blobs.values() for key, blob in per.items()})
        return {c: {key: found[(key, blob)] for key, blob in per.items()} for c, per in blobs.items()}

    def presence_at(self, wanted: Mapping[GroupKey, Sequence[str]]) -> dict[GroupKey, dict[str, tuple[bool, ...]]]:
        """Per group, whether its hunks are present at each of the commits asked for it (the
        blob ids of every commit's files from one stream, each distinct blob judged once)."""
        names = [(commit, key[1]) for key, commits in wanted.items() for commit in commits]
        ids = iter(self._blob_ids(names))
        blobs = {key: {commit: next(ids) for commit in commits} for key, commits in wanted.items()}
        found = self._held({(key, blob) for key, per in blobs.items() for blob in per.values()})
        return {key: {c: found[(key, blob)] for c, blob in per.items()} for key, per in blobs.items()}

    def first_holding(self, searches: Sequence[tuple[GroupKey, Sequence[str], Sequence[int]]]
                      ) -> list[list[str | None]]:
        """For each search (a group, commits oldest first, indexes of some of its hunks): per hunk,
        the first of the commits whose tree holds it (None: none does). The commits are judged in
        order, and no further once every hunk asked for is found (the blob ids of all of them from
        one stream, their blobs from another)."""
        names = [(commit, key[1]) for key, commits, _ in searches for commit in commits]
        ids = iter(self._blob_ids(names))
        blobs = [[(commit, next(ids)) for commit in commits] for _, commits, _ in searches]
        self._prefetch([(blob, "") for seq in blobs for _, blob in seq if blob is not None])
        out: list[list[str | None]] = []
        for (key, _, wanted), seq in zip(searches, blobs, strict=True):
            found: dict[int, str] = {}
            for commit, blob in seq:
                if len(found) == len(wanted):
                    break
                held = self._held({(key, blob)})[(key, blob)]
                found |= {i: commit for i in wanted if held[i] and i not in found}
            out.append([found.get(i) for i in wanted])
        return out

    def _held(self, pairs: set[tuple[GroupKey, str | None]]) -> dict[tuple[GroupKey, str | None], tuple[bool, ...]]:
        """Whether each (group, blob) holds each of the group's hunks. A blob that lacks some added
        line of a hunk (whitespace, quotes and line breaks aside: what no normalisation of the
        matcher could find) does not hold that hunk; one that holds every hunk's whole new image
        verbatim holds them (`_Probe.holds_whole`); the matcher judges the rest."""
        self._prefetch([(blob, "") for _, blob in pairs if blob is not None])
        texts = {blob: self._read(blob, "") for blob in {b for _, b in pairs if b is not None}}
        loose = {blob: _loose(text) for blob, text in texts.items() if text is not None}
        lined = {blob: _lined(text) for blob, text in texts.items() if text is not None}
        found: dict[tuple[GroupKey, str | None], tuple[bool, ...]] = {}
        full: list[tuple[GroupKey, str | None]] = []
        for key, blob in pairs:
            there = loose.get(blob) if blob is not None else None
            probes = self._probes(key)
            maybe = tuple(p.may_hold(there) for p in probes)
            found[(key, blob)] = maybe
            if (key, blob) in self._judged:
                full.append((key, blob))
            elif blob in lined and all(maybe) and all(p.holds_whole(lined[blob]) for p in probes):
                self.shortcuts += 1
            elif any(maybe):
                full.append((key, blob))
        judged = self._judge_pairs(full, texts)
        for pair in full:
            found[pair] = tuple(m and r.status.present for m, r in zip(found[pair], judged[pair], strict=True))
        return found

    def judge(self, commits: Sequence[str]) -> dict[str, dict[GroupKey, list[HunkResult]]]:
        """Per commit, each group's verdicts in that commit's tree."""
        blobs = self.blobs(commits)
        pairs = [(key, blob) for per in blobs.values() for key, blob in per.items()]
        judged = self._judge_pairs(pairs, {})
        return {c: {key: judged[(key, blob)] for key, blob in per.items()} for c, per in blobs.items()}

    def _judge_pairs(self, pairs: Iterable[tuple[GroupKey, str | None]], texts: Mapping[str, bytes | None]
                     ) -> dict[tuple[GroupKey, str | None], list[HunkResult]]:
        """The matcher's verdicts of each (group, blob), each made once (`texts`: blobs read already)."""
        pairs = list(pairs)
        todo = sorted({(key, blob) for key, blob in pairs if (key, blob) not in self._judged},
                      key=lambda kb: (kb[0], kb[1] or ""))
        sides = {key: self._sides(key) for key in {key for key, _ in todo}}
        wanted = [(blob, "") for _, blob in todo if blob is not None and blob not in texts]
        wanted += [side for key in sides for side in sides[key] if side is not None]
        self._prefetch(wanted)
        both = {key: tuple(self._read(*side) if side is not None else None for side in pair)
                for key, pair in sides.items()}
        for key, blob in todo:
            base, head = both[key]
            target = (texts[blob] if blob in texts else self._read(blob, "")) if blob is not None else None
            self._judged[(key, blob)] = match_file(self._groups[key], target, installed_path=key[1], base=base,
                                                   head=head)
            self.judgements += 1
        return {pair: self._judged[pair] for pair in pairs}

    def index_in_group(self, hunk: Hunk) -> int:
        """Where `hunk` is among its group's hunks (the flags `presence` gives are in that order)."""
        return next(i for i, h in enumerate(self._groups[(hunk.pr, hunk.path)]) if h is hunk or h == hunk)

    def _probes(self, key: GroupKey) -> list[_Probe]:
        got = self._probed.get(key)
        if got is None:
            got = self._probed[key] = [_Probe.of(h) for h in self._groups[key]]
        return got

    def _sides(self, key: GroupKey) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
        if not self._with_sides:
            return None, None
        return file_sides(self._prs[key[0]], self._groups[key][0])


_LOOSE = bytes(range(33)) + b"\"'`\x7f"
"""Bytes no line is compared by for `_may_hold`: whitespace, line breaks, controls and quotes."""


def _loose(text: bytes) -> bytes:
    return text.translate(None, _LOOSE)


@dataclass(frozen=True)
class _Probe:
    """What of a hunk is looked for in a blob before the matcher is asked (bytes, made once)."""

    loose_added: tuple[bytes, ...] | None
    """Its added lines that are not blank, `_loose`; None: it adds nothing (the matcher's alone)."""
    new_image: bytes | None
    """Its new image as whole lines, where a verbatim find of it can settle it (see `_holds_whole`)."""
    old_image: bytes | None
    """Its old image as whole lines, for a hunk that removes lines."""
    unique: tuple[bytes, ...]
    """For a pure addition: its added lines, each of which must occur once only."""

    @classmethod
    def of(cls, hunk: Hunk) -> _Probe:
        added = [line for line in hunk.added if line.strip()]
        if not added or not hunk.lines:
            return cls(None, None, None, ())
        loose = tuple(_loose(_bytes(line)) for line in added)
        if hunk.symlink:
            return cls(loose, None, None, ())
        removed = bool(hunk.removed)
        return cls(loose, b"\n" + _image(hunk.new_image), b"\n" + _image(hunk.old_image) if removed else None,
                   () if removed else tuple(b"\n" + _bytes(line) + b"\n" for line in added))

    def may_hold(self, loose: bytes | None) -> bool:
        """False when the blob (`_loose` of it; None: no file) surely lacks the hunk's change: an
        added line of it is nowhere in the blob."""
        if self.loose_added is None:
            return True
        return loose is not None and all(line in loose for line in self.loose_added)

    def holds_whole(self, lined: bytes) -> bool:
        """True when the blob (`_lined`) surely holds the hunk: it adds a line that is not blank,
        its whole new image is there verbatim as whole lines and its old image is not (the same old
        text elsewhere, changed in one place only, is the matcher's to place); for a pure addition,
        no added line occurs twice in the blob (lines there all along are the matcher's to count)."""
        if self.new_image is None or self.new_image not in lined:
            return False
        if self.old_image is not None and self.old_image in lined:
            return False
        return all(lined.count(line) == 1 for line in self.unique)


def _lined(text: bytes) -> bytes:
    """The blob with a line break before its first line and after its last (for `holds_whole`)."""
    return b"\n" + text + (b"" if text.endswith(b"\n") else b"\n")


def _bytes(line: str) -> bytes:
    return line.encode("utf-8", "surrogateescape")


def _image(lines: Sequence[str]) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode("utf-8", "surrogateescape")
