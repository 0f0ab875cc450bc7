"""Pure mapping of repository paths to a distribution's installed paths (src/, python/, renames)."""

from __future__ import annotations

import functools
import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath

COMPILED_SOURCE_SUFFIXES = frozenset(
    {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh", ".pyx", ".pxd", ".rs", ".f90"}
)
BINARY_SUFFIXES = frozenset({".so", ".pyd", ".dylib", ".dll"})
METADATA_SUFFIXES = (".dist-info", ".egg-info")
_STRONG = 2
_MAX_SAME_NAME = 64  # basenames more common than this (e.g. __init__.py) add noise, not evidence


class Placement(StrEnum):
    """Where a repository file stands with respect to the distribution."""

    SHIPPED = "shipped"
    """The distribution ships it (installed_path says where)."""
    FILE_MISSING = "file-missing"
    """It belongs to a shipped package, but the target lacks it."""
    NOT_SHIPPED = "not-shipped"
    """The distribution does not ship it (tests, docs, CI)."""
    UNVERIFIABLE = "unverifiable"
    """A source compiled into a binary the distribution ships."""


@dataclass(frozen=True)
class Location:
    placement: Placement
    installed_path: str | None
    binary: str | None = None
    """For an unverifiable compiled source: the shipped binary that most likely holds it."""


@functools.lru_cache(maxsize=1 << 17)
def path_parts(path: str) -> tuple[str, ...]:
    """A relative POSIX path's parts (as PurePosixPath.parts, at a fraction of the cost). Cached:
    choosing a distribution maps the same repository paths against every candidate."""
    parts = path.split("/")
    if "" in parts or "." in parts:
        return tuple(part for part in parts if part and part != ".")
    return tuple(parts)


def _metadata_path(parts: tuple[str, ...]) -> bool:
    """A file of a distribution's metadata (*.dist-info, *.egg-info) or outside the site directory:
    never the image of a repository file (a repo's LICENSE is no evidence that its tests/ would be
    installed into attrs-21.1.0.dist-info/tests/)."""
    return not parts or parts[0] == ".." or parts[0].endswith(METADATA_SUFFIXES)


def _suffix(path: str) -> str:
    return posixpath.splitext(path)[1]


def _common_suffix(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    if len(a) < 2 or len(b) < 2 or a[-2] != b[-2]:
        return int(a[-1:] == b[-1:])
    return shared_tail(a, b)


def shared_tail(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How many parts two paths' parts share at their ends."""
    n = 0
    while n < len(a) and n < len(b) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _backed(rp: tuple[str, ...], ip: tuple[str, ...], repo_parts: list[tuple[str, ...]],
            mapped: frozenset[tuple[str, ...]], installed: list[tuple[str, ...]]) -> bool:
    """Whether the installed folders that the repo folder `rp` would land in under `ip` (a renamed
    package: lib/kvserve -> kvs; a copy: rich -> pip/_vendor) hold mostly the repository's files.
    Packages that merely share file names (__init__.py, utils.py, core/base.py) do not: of their
    folders, those the repository's files would land in hold mostly files of their own."""
    n = len(rp)
    images = [ip + parts[n:] for parts in repo_parts if parts[:n] == rp and len(parts) > n]
    hit = [img for img in images if img in mapped]
    roots = {img[: len(ip) + 1] if len(img) > len(ip) + 1 else ip for img in hit}
    k = len(ip)
    held = sum(1 for parts in installed
               if parts[:k] == ip and (parts[: k + 1] if len(parts) > k + 1 else ip) in roots
               and not parts[-1].endswith(".pyc"))
    return bool(hit) and 2 * len(hit) >= held


def _unique_best(counts: Counter[tuple[str, ...]]) -> tuple[tuple[str, ...], int] | None:
    """The entry with the most votes, None when another has as many."""
    top = counts.most_common(2)
    return top[0] if len(top) == 1 or top[0][1] > top[1][1] else None


class PathMap:
    """Maps repo paths to installed paths by voting on directory prefixes.

    Every repository file whose name also appears among the installed files votes for the
    pair (repo prefix, installed prefix) left over once the longest common path suffix is
    removed: `src/demo/runner.py` ~ `demo/runner.py` votes for ('src', ''). The best-voted
    installed prefix of the deepest voted repo prefix maps a path, also for files the target
    lacks (which is how file-missing is told from not-shipped).
    """

    def __init__(self, installed: Iterable[str], repo_files: Iterable[str], left: Iterable[str] = (),
                 source_tree: bool = False) -> None:
        """`left`: repository paths the audited changes move or delete (the files at their bases),
        which a place the prefixes point to may be too; they do not vote. `source_tree`: the target
        is a plain folder (--tree), which ships by its layout when it is laid out as the repository
        (see `checkout`)."""
        self.installed = frozenset(installed)
        self._source_tree = source_tree
        mappable = [parts for path in self.installed if not _metadata_path(parts := path_parts(path))]
        by_name: defaultdict[str, list[tuple[str, ...]]] = defaultdict(list)
        for parts in mappable:
            by_name[parts[-1]].append(parts)
        repo_files = list(repo_files)
        votes: defaultdict[tuple[str, ...], Counter[tuple[str, ...]]] = defaultdict(Counter)
        for repo_path in repo_files:
            rparts = path_parts(repo_path)
            same = by_name.get(rparts[-1], []) if rparts else []
            if not same or len(same) > _MAX_SAME_NAME:
                continue
            shared = [_common_suffix(rparts, iparts) for iparts in same]
            best = max(shared)
            for iparts, n in zip(same, shared, strict=True):
                if n == best:
                    # an installed path that is a whole suffix of the repo path is strong
                    # evidence; a shared tail alone counts only when another file agrees
                    weight = _STRONG if best == len(iparts) else 1
                    votes[rparts[:-best]][iparts[:-best]] += weight
        # the installed prefix with the most votes, at least two; a tie is no evidence for either (a new
        # folder whose file names every sibling folder has: src/pkg/tuners/new/ is in none of them). A
        # folder of tests, docs or examples is never installed: not inside a package of another name, nor
        # at the root (tests/torchtune/ mirrors torchtune/ folder for folder, __init__.py files and all)
        voted = {rp: winner[0] for rp, c in votes.items()
                 if not any(map(not_package, rp)) and (winner := _unique_best(c)) is not None and winner[1] >= 2}
        if any(voted.values()):
            repo_parts = [path_parts(p) for p in repo_files]
            mapped = frozenset(mappable)
            self.prefixes = {rp: ip for rp, ip in voted.items()
                             if not ip or _backed(rp, ip, repo_parts, mapped, mappable)}
        else:
            self.prefixes = voted
        self.top_level = frozenset(parts[0] for parts in mappable if len(parts) > 1)
        self._repo_paths = frozenset(repo_files).union(left)

    @functools.cached_property
    def checkout(self) -> bool:
        """Whether the target is a tree laid out as the repository (a checkout, an unpacked source
        archive): most of its files are the repository's, at their own paths. It ships a path of
        the repository by that layout, whether or not the file is there (see `_laid_out`)."""
        if not self._source_tree or not self.installed:
            return False
        own = sum(1 for path in self.installed if path in self._repo_paths)
        return own >= 2 and 2 * own >= len(self.installed)

    @functools.cached_property
    def _tree_folders(self) -> frozenset[str]:
        return frozenset(parts[0] for path in self.installed if len(parts := path_parts(path)) > 1)

    def _laid_out(self, repo_path: str) -> bool:
        """Whether a tree laid out as the repository ships `repo_path`: a file at its root, or
        under a top folder it holds (a checkout holds them all; a source archive or a build tree
        may leave tests/, docs/ or csrc/ out, and then ships none of them)."""
        parts = path_parts(repo_path)
        return len(parts) == 1 or (len(parts) > 1 and parts[0] in self._tree_folders)

    # lazy: only a path the target lacks asks, and choosing a distribution maps every candidate
    @functools.cached_property
    def shipped_suffixes(self) -> frozenset[str]:
        return frozenset(_suffix(p) for p in self.installed)

    @functools.cached_property
    def ships_binaries(self) -> bool:
        return not BINARY_SUFFIXES.isdisjoint(self.shipped_suffixes)

    def _candidate(self, repo_path: str) -> str | None:
        rparts = path_parts(repo_path)
        for cut in range(len(rparts) - 1, -1, -1):
            installed_prefix = self.prefixes.get(rparts[:cut])
            if installed_prefix is not None:
                return "/".join((*installed_prefix, *rparts[cut:]))  # parts are clean: as PurePosixPath
        return None

    def locate(self, repo_path: str) -> Location:
        """Where the target holds, or should hold, a repository file. A file at the repository
        path itself is that file (a source tree); a place the prefixes point to that is another
        repository file's own path is that file's, never this one's (a folder the stack moved,
        judged against a tree from before the move)."""
        suffix = _suffix(repo_path)
        if repo_path in self.installed and not _metadata_path(path_parts(repo_path)):
            return Location(Placement.SHIPPED, repo_path)
        if self.checkout and self._laid_out(repo_path):
            return Location(Placement.FILE_MISSING, repo_path)  # shipped by the layout, not there
        candidate = self._candidate(repo_path)
        if candidate is not None and candidate != repo_path and candidate in self._repo_paths:
            candidate = repo_path
        if candidate is not None and candidate in self.installed:
            return Location(Placement.SHIPPED, candidate)
        if suffix in COMPILED_SOURCE_SUFFIXES and self.ships_binaries:
            return Location(Placement.UNVERIFIABLE, None, self.binary_for(repo_path))
        if (
            candidate is not None
            and len(path_parts(candidate)) > 1
            and path_parts(candidate)[0] in self.top_level
            and suffix in self.shipped_suffixes
        ):
            return Location(Placement.FILE_MISSING, candidate)
        return Location(Placement.NOT_SHIPPED, None)

    @functools.cached_property
    def _binaries(self) -> list[str]:
        """The installed binaries, sorted (found once: `binary_for` is asked per hunk)."""
        return sorted(p for p in self.installed if PurePosixPath(p).suffix in BINARY_SUFFIXES)

    def binary_for(self, repo_path: str) -> str | None:
        """The shipped binary a compiled source most likely went into, when one can be told.

        The only binary; else the one named like the source, its folder or its package
        (csrc/attention/kernels.cu -> ..._C.so only when nothing closer matches, so None).
        """
        binaries = self._binaries
        if len(binaries) == 1:
            return binaries[0]
        rparts = path_parts(repo_path)
        if not rparts:
            return None
        names = [PurePosixPath(rparts[-1]).stem, *reversed(rparts[:-1])]
        for name in names:
            key = name.lower().lstrip("_")
            hits = [b for b in binaries if PurePosixPath(b).name.split(".", 1)[0].lower().lstrip("_") == key]
            if len(hits) == 1:
                return hits[0]
        candidate = self._candidate(repo_path)
        if candidate is not None:
            folder = PurePosixPath(candidate).parent
            near = [b for b in binaries if PurePosixPath(b).parent == folder]
            if len(near) == 1:
                return near[0]
        return None


NOT_PACKAGES = frozenset({"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks",
                          "bench", "scripts", "tools", "ci", "build", "dist"})
"""Folders of a repository that are not its packages even when they hold an __init__.py."""


def not_package(name: str) -> bool:
    """A repository folder of tests, docs, examples or tooling (tests, docs_src, test_tutorial)."""
    return name in NOT_PACKAGES or name.split("_", 1)[0] in NOT_PACKAGES


def repo_packages(repo_files: Iterable[str]) -> frozenset[str]:
    """The repository's own top-level import names: folders holding an __init__.py whose parent
    holds none (src/acme/__init__.py -> 'acme'), and modules directly under src/ (src/six.py)."""
    files = set(repo_files)
    inits = {path.removesuffix("/__init__.py") for path in files if path.endswith("/__init__.py")}
    inits |= {"" for path in files if path == "__init__.py"}
    out = set()
    for folder in inits:
        parent, _, name = folder.rpartition("/")
        if name and parent not in inits and not any(map(not_package, (name, *parent.split("/")))):
            out.add(name)
    for path in files:
        if path.startswith("src/") and path.count("/") == 1 and path.endswith(".py"):
            out.add(path[4:-3])
    return frozenset(out)


def nearest_packages(paths: Iterable[str], repo_files: Iterable[str]) -> frozenset[str]:
    """Of the repository's packages, those whose project folder holds `paths` most closely: a
    monorepo's pydantic/ (project folder: the root) for tests/test_main.py, its
    pydantic-core/python/pydantic_core/ (project folder: pydantic-core/) for pydantic-core/tests/x.py.
    A package's project folder is the one above it, less a trailing src/ or python/."""
    files = set(repo_files)
    names = repo_packages(files)
    homes: dict[str, set[str]] = defaultdict(set)
    for path in files:
        if not path.endswith("/__init__.py"):
            continue
        folder = path.removesuffix("/__init__.py")
        parent, _, name = folder.rpartition("/")
        if name in names and parent + "/__init__.py" not in files:  # a top-level package, not a sub-package
            head, _, last = parent.rpartition("/")
            homes[head if last in ("src", "python") else parent].add(name)
    found: set[str] = set()
    for path in paths:
        best = max((h for h in homes if not h or path.startswith(h + "/")), key=len, default=None)
        if best is not None:
            found |= homes[best]
    return frozenset(found)


def top_level_of(installed: Iterable[str]) -> frozenset[str]:
    """The import names a distribution's files install: first folders and top-level modules."""
    out = set()
    for path in installed:
        head, sep, _ = path.partition("/")
        if head in ("..", "", "__pycache__") or head.endswith((*METADATA_SUFFIXES, ".data")):
            continue
        if sep:
            out.add(head)
        elif head.endswith((".py", ".so", ".pyd")):
            out.add(head.split(".", 1)[0])
    return frozenset(out)
