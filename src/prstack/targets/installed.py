"""Distributions installed in site directories, read through their metadata and RECORD (never imported)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

from packaging.utils import canonicalize_name

from prstack.models import EditableSource, TargetInfo, TargetKind
from prstack.placement.choose import Choice, DistFiles, Intact
from prstack.placement.forge import repo_slug
from prstack.placement.paths import BINARY_SUFFIXES
from prstack.targets.confined import (
    READ_CAP,
    ConfinedDistribution,
    Unreadable,
    confined_distributions,
    hashed_confined,
    read_confined,
    sha256_confined,
    size_confined,
)
from prstack.targets.editable import (
    enclosing_checkout,
    find_editable,
    find_egg_links,
    source_files,
)
from prstack.targets.evidence import BuildEvidence
from prstack.targets.metadata import (
    metadata_of,
    parse_direct_url,
    parse_version,
    top_level_names,
)
from prstack.targets.record import check_installed, matches, parse_record, read_under, recorded_paths


def _text(dist: ConfinedDistribution, name: str) -> str | None:
    try:
        return dist.read_text(name)
    except (OSError, UnicodeDecodeError):
        return None


def _recorded(dist: ConfinedDistribution) -> frozenset[str]:
    """RECORD's paths that stay inside the site directory (parsed by us: a garbage RECORD has no rows)."""
    return recorded_paths(_text(dist, "RECORD") or "")


def _editable_of(dist: ConfinedDistribution, root: Path, recorded: frozenset[str]) -> EditableSource | None:
    source = find_editable(root, recorded)
    if source is None:
        return None
    direct = parse_direct_url(_text(dist, "direct_url.json"))
    if source.mechanism == "pth" and not (direct and direct.editable):
        # a .pth of a regular distribution adds folders of its own (pywin32): not editable
        inside = all(Path(d).is_relative_to(root.resolve()) for d in source.source_dirs)
        if inside:
            return None
    return source


def dist_files(dist: ConfinedDistribution, editable: EditableSource | None = None) -> DistFiles:
    """A distribution's identity and files (an editable install's source files included)."""
    root = Path(str(dist.locate_file("")))
    recorded = frozenset() if editable and editable.mechanism == "egg-link" else _recorded(dist)
    editable = editable or _editable_of(dist, root, recorded)
    meta = dist.metadata
    core = metadata_of(meta, dist.version)
    direct_text = _text(dist, "direct_url.json")
    direct = parse_direct_url(direct_text)
    repos = set(core.repos)
    if direct and (slug := repo_slug(direct.url)):
        repos.add(slug)
    sources: dict[str, str] = {}
    if editable:
        top = top_level_names(_text(dist, "top_level.txt"), ())
        if not top and editable.mechanism in ("pth", "egg-link"):
            top = (canonicalize_name(meta["Name"] or "").replace("-", "_"),)
        sources = {k: str(v) for k, v in source_files(editable, top).items()}
    return DistFiles(
        name=meta["Name"] or "",
        version=dist.version,
        files=recorded | frozenset(sources) if sources else recorded,
        direct_url=direct_text,
        repos=frozenset(repos),
        sources=sources,
        editable=editable,
    )


def find_distributions(dirs: Sequence[str]) -> dict[str, tuple[ConfinedDistribution, DistFiles]]:
    """Every distribution in `dirs` (first one wins per name, as for imports), legacy egg-links too."""
    found: dict[str, tuple[ConfinedDistribution, DistFiles]] = {}
    for dist in confined_distributions(list(dirs)):
        name = dist.metadata["Name"]
        if name and (key := canonicalize_name(name)) not in found:
            found[key] = (dist, dist_files(dist))
    for directory in dirs:
        for link_name, source in find_egg_links(Path(directory)).items():
            for dist in confined_distributions(list(source.source_dirs)):
                name = dist.metadata["Name"]
                key = canonicalize_name(name or "")
                if name and key == canonicalize_name(link_name) and key not in found:
                    found[key] = (dist, dist_files(dist, source))
    return found


def record_paths(found: dict[str, tuple[ConfinedDistribution, DistFiles]], root: Path,
                 skip: str) -> tuple[frozenset[str], ...]:
    """The paths each other distribution of `root` records (to tell shared namespace folders)."""
    return tuple(files.files for key, (dist, files) in found.items()
                 if key != skip and Path(str(dist.locate_file(""))) == root)


class InstalledDistribution:
    """A distribution installed in a site directory, read through its RECORD; an editable
    install is read from the source directory its finder, .pth or .egg-link points at."""

    def __init__(self, kind: TargetKind, shown_path: str, dist: ConfinedDistribution, meta: DistFiles,
                 choice: Choice | None = None, others: tuple[frozenset[str], ...] = ()) -> None:
        self._dist = dist
        self.root = Path(str(dist.locate_file("")))
        self.meta = meta
        self._choice = choice
        self._others = others
        self._digests: dict[str, bytes] | None = {}
        """Recorded path -> the SHA-256 of the bytes read there, until RECORD's check takes them (no
        second read of a file judged)."""
        version = parse_version(meta.version) if meta.version else None
        direct = parse_direct_url(meta.direct_url)
        self._info = TargetInfo(
            kind=kind,
            path=shown_path,
            distribution=meta.name,
            version=meta.version,
            vcs_commit=(direct.commit_id if direct else None) or (version.commit if version else None),
        )

    @property
    def info(self) -> TargetInfo:
        return self._info

    def files(self) -> frozenset[str]:
        return self.meta.files

    def read(self, path: str, cap: int = READ_CAP) -> bytes | None:
        if path not in self.meta.files:
            return None
        if path in self.meta.sources or self._digests is None:
            return read_confined(*self._where(path), cap)
        got = hashed_confined(str(self.root), path, cap)
        if got is None:
            return None
        self._digests[path] = got[1]
        return got[0]

    def sha256(self, path: str, cap: int = READ_CAP) -> bytes | None:
        """The SHA-256 of what `read` returns (None and Unreadable alike), without reading a file
        hashed before in the run that is still what it was (see sha256_confined)."""
        if path in self.meta.sources or path not in self.meta.files:
            data = self.read(path, cap)
            return None if data is None else hashlib.sha256(data).digest()
        digest = sha256_confined(str(self.root), path, cap)
        if digest is not None and self._digests is not None:
            self._digests[path] = digest
        return digest

    def _where(self, path: str) -> tuple[str, str]:
        """(root, relative path) a file is read from: the site directory, or the editable source
        folder that holds it (a source file outside every source folder is read as outside)."""
        if path not in self.meta.sources:
            return str(self.root), path
        source = self.meta.sources[path]
        editable = self.meta.editable
        for folder in editable.source_dirs if editable else ():
            base = folder if os.path.isdir(folder) else os.path.dirname(folder)
            if source.startswith(base.rstrip("/") + "/"):
                return base, source[len(base.rstrip("/")) + 1:]
        return os.path.dirname(source), "../" + os.path.basename(source)

    def size(self, path: str) -> int | None:
        if path not in self.meta.files:
            return None
        return size_confined(*self._where(path))

    @cached_property
    def evidence(self) -> BuildEvidence:
        """Build metadata and RECORD integrity (hashes every recorded file once, on first use)."""
        dist = self._dist
        record_text = _text(dist, "RECORD")
        record = None
        read_before, self._digests = self._digests, None
        if record_text is not None:
            record = check_installed(self.root, record_text, self._others, read_before)
        installer = (_text(dist, "INSTALLER") or "").strip() or None
        files = self.meta.files
        meta = dist.metadata
        core = metadata_of(meta, dist.version)
        editable = self.meta.editable
        checkout = enclosing_checkout(Path(editable.source_dirs[0])) if editable and editable.source_dirs else None
        return BuildEvidence(
            distribution=self.meta.name,
            version=parse_version(self.meta.version) if self.meta.version else None,
            direct_url=parse_direct_url(self.meta.direct_url),
            installer=installer,
            top_level=top_level_names(_text(dist, "top_level.txt"), files),
            project_urls=core.project_urls,
            record=record,
            editable=self.meta.editable,
            binaries=tuple(sorted(f for f in files if _suffix(f) in BINARY_SUFFIXES)),
            candidates=self._choice.candidates if self._choice else (),
            chosen_by=self._choice.reason if self._choice else None,
            checkout_commit=checkout[1] if checkout else None,
        )


def _suffix(path: str) -> str:
    """PurePosixPath(path).suffix, without making the path (a distribution has thousands)."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def intact_on_disk(found: dict[str, tuple[ConfinedDistribution, DistFiles]]) -> Intact:
    """How many of a candidate's files (those the PRs change) still match its RECORD."""

    def intact(cand: DistFiles, paths: Sequence[str]) -> int:
        dist, _ = found[canonicalize_name(cand.name)]
        entries = {e.path: e for e in parse_record(_text(dist, "RECORD") or "")}
        read = read_under(Path(str(dist.locate_file(""))))

        count = 0
        for path in paths:
            entry = entries.get(path)
            try:
                data = read(path) if entry is not None else None
            except Unreadable:
                data = None
            if entry is not None and data is not None and matches(entry, data):
                count += 1
        return count

    return intact

