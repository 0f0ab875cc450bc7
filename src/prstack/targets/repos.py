"""Where a target's distributions came from: the repositories their metadata names (Project-URLs,
direct_url.json) and their install records (VCS URL, requested revision, clone), read confined."""

from __future__ import annotations

import os
import sys
import zipfile
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import cast
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from prstack.models import TargetKind
from prstack.placement.forge import RepoId, repo_from_url, repo_of_remotes
from prstack.placement.installed_from import InstallRecord
from prstack.targets.base import TargetSpec, site_dirs_of
from prstack.targets.confined import ConfinedDistribution, confined_distributions
from prstack.targets.editable import git_head, git_remote_urls, pr_ref_heads
from prstack.targets.metadata import (
    CoreMetadata,
    DirectUrl,
    header_fields,
    metadata_of,
    parse_direct_url,
    parse_version,
)

OWN_NAME = "prstack"

Named = list[tuple[str, frozenset[RepoId]]]
"""(distribution, the GitHub repositories its metadata names), per distribution."""


def repo_candidates(spec: TargetSpec) -> Named:
    """(distribution, GitHub repositories its metadata names) for the target's distributions
    (prstack's own and its dependencies' left out: an environment running prstack holds them)."""
    if spec.kind is TargetKind.WHEEL and spec.path:
        return wheel_repos(Path(spec.path))
    if spec.kind is TargetKind.TREE and spec.path:
        found = repo_of_checkout(Path(spec.path))
        return [(spec.path, frozenset({found}))] if found else []
    dirs = environment_dirs(spec)
    if dirs is None:
        return []
    own = frozenset() if spec.dist else own_closure(dirs)
    return [(name, repos) for name, repos in installed_repos(dirs, spec.dist) if canonicalize_name(name) not in own]


def environment_dirs(spec: TargetSpec) -> list[str] | None:
    """The site directories of an environment target (None for a wheel, a tree or an image)."""
    if spec.kind is TargetKind.SITE_PACKAGES and spec.path:
        return [spec.path]
    if spec.kind is TargetKind.INSTALLED:
        return [p for p in sys.path if p and os.path.isdir(p)]
    if spec.kind is TargetKind.PYTHON and spec.path:
        return site_dirs_of(spec.path)
    return None


class _Requirements(metadata.Distribution):
    """importlib's reading of what an installed distribution requires (Requires-Dist, else an
    egg-info's requires.txt), its files read confined."""

    def __init__(self, dist: ConfinedDistribution) -> None:
        self._dist = dist

    def read_text(self, filename: str | os.PathLike[str]) -> str | None:
        return self._dist.read_text(filename)

    def locate_file(self, path: str | os.PathLike[str]) -> Path:
        return self._dist.locate_file(path)

    @property
    def metadata(self) -> metadata.PackageMetadata:
        return cast(metadata.PackageMetadata, self._dist.metadata)


def _requires(dist: ConfinedDistribution | metadata.Distribution,
              extras: frozenset[str]) -> list[tuple[str, frozenset[str]]]:
    """(name, extras asked of it) of what a distribution requires with `extras` asked of it (a
    requirement's marker evaluated for each, and for none)."""
    out: list[tuple[str, frozenset[str]]] = []
    requires = (_Requirements(dist) if isinstance(dist, ConfinedDistribution) else dist).requires
    for line in requires or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        marker = req.marker
        if marker is None or any(marker.evaluate({"extra": extra}) for extra in {"", *extras}):
            out.append((canonicalize_name(req.name), frozenset(req.extras)))
    return out


def own_closure(dirs: Sequence[str]) -> frozenset[str]:
    """prstack and everything it requires, transitively (extras asked of a requirement included),
    by normalised name: of the environment's prstack where it has one, and of the running
    prstack's requirements (never the audited project)."""
    by_name: dict[str, ConfinedDistribution] = {}
    for d in confined_distributions(list(dirs)):
        by_name.setdefault(canonicalize_name(d.metadata["Name"] or ""), d)
    try:
        running = _requires(metadata.distribution(OWN_NAME), frozenset())
    except metadata.PackageNotFoundError:
        running = []
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(OWN_NAME, frozenset[str]()), *running]
    while todo:
        item = todo.pop()
        if item in seen:
            continue
        seen.add(item)
        if (found := by_name.get(item[0])) is not None:
            todo += [r for r in _requires(found, item[1]) if r not in seen]
    return frozenset(name for name, _ in seen)


def install_records(spec: TargetSpec, numbers: Sequence[int]) -> list[InstallRecord]:
    """What each distribution of an environment target says of where it came from (a VCS URL, a
    clone, a `+g<sha>` build), prstack's own and its dependencies' left out unless named with --dist."""
    dirs = environment_dirs(spec)
    if dirs is None:
        return []
    own = frozenset() if spec.dist else own_closure(dirs)
    records: dict[str, InstallRecord] = {}
    for d in confined_distributions(dirs):
        name = d.metadata["Name"] or ""
        key = canonicalize_name(name)
        if name and key not in records and key not in own and (record := _install_record(d, numbers)):
            records[key] = record
    return list(records.values())


def _install_record(dist: ConfinedDistribution, numbers: Sequence[int]) -> InstallRecord | None:
    name = dist.metadata["Name"] or ""
    try:
        direct = parse_direct_url(dist.read_text("direct_url.json"))
    except (OSError, UnicodeDecodeError):
        direct = None
    commit = parse_version(dist.version or "").commit
    if direct is None or direct.kind not in ("vcs", "dir"):
        named = repos_named(metadata_of(dist.metadata), None)
        if commit is None or len(named) != 1:
            return None
        return InstallRecord(name, "version", next(iter(named)), commit=commit)
    clone = _clone_of(direct.url)
    repo = repo_of_checkout(clone) if clone else repo_from_url(direct.url, any_host=True)
    prs = pr_ref_heads(clone, numbers) if clone else {}
    return InstallRecord(name, direct.kind, repo, direct.requested_revision, direct.commit_id or commit,
                         str(clone) if clone else None, git_head(clone) if clone else None, prs)


def _clone_of(url: str) -> Path | None:
    """The git checkout a `file://` URL (git+file:// too) points into, up to a few folders up."""
    parts = urlsplit(url.removeprefix("git+"))
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    folder = Path(unquote(parts.path))
    for candidate in [folder, *folder.parents][:6]:
        if (candidate / ".git").exists() or ((candidate / "HEAD").is_file() and (candidate / "refs").is_dir()):
            return candidate
    return None


def repo_of_checkout(root: Path) -> RepoId | None:
    """The repository of a checkout's upstream remote, else origin, else its only remote."""
    return repo_of_remotes(git_remote_urls(root))


def repos_from_metadata(metadata_text: str, direct_url: str | None = None) -> frozenset[RepoId]:
    """GitHub repositories named by a distribution's METADATA text and its direct_url.json."""
    return repos_named(metadata_of(header_fields(metadata_text)), parse_direct_url(direct_url))


def repos_named(core: CoreMetadata, direct: DirectUrl | None) -> frozenset[RepoId]:
    """GitHub repositories named by METADATA's Project-URLs, Home-page and Download-URL, and by
    PEP 610 direct_url.json's URL."""
    urls = [url for _, url in core.project_urls] + [core.download_url or "", direct.url if direct else ""]
    return frozenset(r for u in urls if u and (r := repo_from_url(u)))


def wheel_repos(path: Path) -> Named:
    """(distribution, repositories) named by a wheel's METADATA."""
    try:
        with zipfile.ZipFile(path) as zf:
            name = next(
                (
                    n
                    for n in zf.namelist()
                    if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
                ),
                None,
            )
            if name is None:
                return []
            text = zf.read(name).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile):
        return []
    return [
        (header_fields(text).get("Name") or name.split("-")[0], repos_from_metadata(text))
    ]


def installed_repos(
    dirs: Iterable[str], dist: str | None = None
) -> Named:
    """(distribution, repositories) for each distribution under `dirs` (only `dist` when given)."""
    found: dict[str, tuple[str, frozenset[RepoId]]] = {}
    for d in confined_distributions(list(dirs)):
        name = d.metadata["Name"]
        key = canonicalize_name(name or "")
        if not name or key in found or (dist and key != canonicalize_name(dist)):
            continue
        direct = parse_direct_url(d.read_text("direct_url.json"))
        found[key] = (name, repos_named(metadata_of(d.metadata), direct))
    return list(found.values())
