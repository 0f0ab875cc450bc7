"""Patch-ids and changed paths of many commits and commit pairs, each kind in one git pipeline, memoized."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from prstack.errors import SourceError
from prstack.sources.git.diffs import excluding

Pipe = Callable[[Sequence[str], bytes], bytes]
"""Runs git with the given arguments and standard input; returns its standard output."""

Pair = tuple[str, str]
"""(base, head): the change base..head as one diff."""

_DIFF = ("diff-tree", "--stdin", "--always", "-r", "--root", "--no-color", "--no-ext-diff", "--no-renames")


class Patches:
    """What `git diff-tree` says about commits (against their first parent; merges: nothing) and
    about pairs (base..head): `git patch-id --stable` of each and the paths each changes.

    Asking for many at once (`warm`) costs one diff-tree for the paths and one diff-tree piped
    into patch-id for the ids, however many commits and pairs; answers are kept."""

    def __init__(self, pipe: Pipe) -> None:
        self._pipe = pipe
        self.unread: frozenset[str] = frozenset()
        """Paths left out of the diffs patch-ids are taken of (the clone lacks their blobs)."""
        self._ids: dict[str, str | None] = {}
        self._pair_ids: dict[Pair, str | None] = {}
        self._paths: dict[str, frozenset[str] | None] = {}
        self._pair_paths: dict[Pair, tuple[str, ...]] = {}

    def warm(
        self,
        ids: Iterable[str] = (),
        pair_ids: Iterable[Pair] = (),
        paths: Iterable[str] = (),
        pair_paths: Iterable[Pair] = (),
    ) -> None:
        """Compute everything asked for that is not known yet, in at most three git processes."""
        ids = [s for s in dict.fromkeys(ids) if s not in self._ids]
        pair_ids = [p for p in dict.fromkeys(pair_ids) if p not in self._pair_ids]
        if ids or pair_ids:
            found = self._patch_ids([*ids, *(_line(p) for p in pair_ids)])
            self._ids.update(zip(ids, found[: len(ids)], strict=True))
            self._pair_ids.update(zip(pair_ids, found[len(ids) :], strict=True))
        paths = [s for s in dict.fromkeys(paths) if s not in self._paths]
        pair_paths = [p for p in dict.fromkeys(pair_paths) if p not in self._pair_paths]
        if paths or pair_paths:
            named = self._names([*paths, *(_line(p) for p in pair_paths)])
            self._paths.update((s, frozenset(n) or None) for s, n in zip(paths, named[: len(paths)], strict=True))
            self._pair_paths.update(zip(pair_paths, named[len(paths) :], strict=True))

    def lazy_ids(self, shas: Sequence[str]) -> PatchIds:
        """Commit sha -> patch-id like `ids`, each computed only when its value is read."""
        return PatchIds(self, shas)

    def ids(self, shas: Sequence[str]) -> dict[str, str]:
        """Commit sha -> patch-id, in the order asked (merges and empty commits: none)."""
        self.warm(ids=shas)
        return {s: pid for s in shas if (pid := self._ids[s]) is not None}

    def pair_id(self, base: str, head: str) -> str | None:
        """The patch-id of the whole change base..head (what a squash merge of it would have)."""
        self.warm(pair_ids=[(base, head)])
        return self._pair_ids[(base, head)]

    def paths(self, shas: Sequence[str]) -> dict[str, frozenset[str]]:
        """Commit sha -> the paths it changes against its first parent (merges, empty commits: none)."""
        self.warm(paths=shas)
        return {s: p for s in dict.fromkeys(shas) if (p := self._paths[s]) is not None}

    def pair_paths(self, base: str, head: str) -> list[str]:
        """The paths the change base..head touches (no rename detection)."""
        self.warm(pair_paths=[(base, head)])
        return list(self._pair_paths[(base, head)])

    def _sections(self, args: Sequence[str], lines: Sequence[str], sep: bytes) -> list[list[bytes]]:
        """diff-tree's output for each stdin line, as items ending in `sep` (with --always each
        line's output starts with a header naming its first commit; only the next line's header is
        taken for one, so no path can pass for it)."""
        out = self._pipe([*_DIFF, *args], ("\n".join(lines) + "\n").encode())
        heads = [line.split()[0].encode() for line in lines]
        sections: list[list[bytes]] = []
        items = out.split(sep)
        for item in (i + sep for i in items[:-1]):
            if len(sections) < len(heads) and item[: -len(sep)] == heads[len(sections)]:
                sections.append([])
            elif sections:
                sections[-1].append(item)
        return sections + [[] for _ in range(len(heads) - len(sections))]

    def _patch_ids(self, lines: Sequence[str]) -> list[str | None]:
        """`git patch-id --stable` of each stdin line's diff (None when it has none), one pipeline."""
        try:
            sections = self._sections(["-p", *excluding(self.unread)], lines, b"\n")
        except SourceError:  # a blob of these diffs the clone lacks, no promisor remote answering
            lacking = self.unread | self._lacking(lines)
            if lacking == self.unread:
                raise
            sections = self._sections(["-p", *excluding(lacking)], lines, b"\n")
        keyed = b"".join(b"%040x\n" % (index + 1) + b"".join(body) for index, body in enumerate(sections) if body)
        found: list[str | None] = [None] * len(lines)
        if keyed:
            for line in self._pipe(["patch-id", "--stable"], keyed).decode().splitlines():
                pid, _, key = line.partition(" ")
                if pid and key:
                    found[int(key, 16) - 1] = pid
        return found

    def _lacking(self, lines: Sequence[str]) -> frozenset[str]:
        """The paths whose blob, on either side of one of the lines' diffs, the clone lacks (found
        by `rev-list --missing=print` over the trees involved, which fetches nothing)."""
        commits = {sha for line in lines for sha in line.split()} | {f"{line}^" for line in lines if " " not in line}
        listed = self._pipe(["rev-list", "--objects", "--no-walk", "--missing=print", "--ignore-missing", "--stdin"],
                            ("\n".join(sorted(commits)) + "\n").encode())
        missing = {row[1:41] for row in listed.split(b"\n") if row.startswith(b"?")}
        raw = self._pipe([*_DIFF, "--raw", "-z", "--no-abbrev"], ("\n".join(lines) + "\n").encode()).split(b"\0")
        return frozenset(path.decode("utf-8", "surrogateescape") for meta, path in itertools.pairwise(raw)
                         if meta.startswith(b":") and set(meta.split()[2:4]) & missing)

    def _names(self, lines: Sequence[str]) -> list[tuple[str, ...]]:
        sections = self._sections(["--name-only", "-z"], lines, b"\0")
        return [tuple(item[:-1].decode("utf-8", "surrogateescape") for item in body) for body in sections]


class PatchIds(Mapping[str, str]):
    """Commit sha -> patch-id of the given commits, as `Patches.ids` gives, but each value is
    computed only when read (a commit changing a huge file costs a second to diff): which commits
    have one is known from their paths, which are cheap. `Patches.warm` computes many at once."""

    def __init__(self, patches: Patches, shas: Sequence[str]) -> None:
        self._patches = patches
        changed = patches.paths(shas)  # a commit that changes something has a patch-id
        self._shas = [s for s in dict.fromkeys(shas) if s in changed]
        self._known = set(self._shas)

    def __getitem__(self, sha: str) -> str:
        if sha not in self._known:
            raise KeyError(sha)
        found = self._patches.ids([sha])
        if sha not in found:
            raise KeyError(sha)
        return found[sha]

    def __contains__(self, sha: object) -> bool:
        return sha in self._known

    def __iter__(self) -> Iterator[str]:
        return iter(self._shas)

    def __len__(self) -> int:
        return len(self._shas)

    def __repr__(self) -> str:
        self._patches.warm(ids=self._shas)
        return repr(dict(self))


def _line(pair: Pair) -> str:
    """diff-tree's stdin line for base..head: "<head> <base>" diffs base (as the parent) to head."""
    base, head = pair
    return f"{head} {base}"
