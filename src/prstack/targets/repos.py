"""Which GitHub repositories a target's distributions name (METADATA's URLs, direct_url.json), read confined."""

from __future__ import annotations

import os
import sys
import zipfile
from collections.abc import Iterable
from email.parser import HeaderParser
from pathlib import Path

from packaging.utils import canonicalize_name

from prstack.forge import RepoId, repo_from_url, repo_of_remotes
from prstack.models import TargetKind
from prstack.targets.base import TargetSpec, site_dirs_of
from prstack.targets.confined import confined_distributions
from prstack.targets.editable import git_remote_urls
from prstack.targets.metadata import CoreMetadata, DirectUrl, metadata_of, parse_direct_url

Named = list[tuple[str, frozenset[RepoId]]]
"""(distribution, the GitHub repositories its metadata names), per distribution."""


def repo_candidates(spec: TargetSpec) -> Named:
    """(distribution, GitHub repositories its metadata names) for the target's distributions."""
    if spec.kind is TargetKind.WHEEL and spec.path:
        return wheel_repos(Path(spec.path))
    if spec.kind is TargetKind.TREE and spec.path:
        found = repo_of_checkout(Path(spec.path))
        return [(spec.path, frozenset({found}))] if found else []
    if spec.kind is TargetKind.SITE_PACKAGES and spec.path:
        dirs = [spec.path]
    elif spec.kind is TargetKind.INSTALLED:
        dirs = [p for p in sys.path if p and os.path.isdir(p)]
    elif spec.kind is TargetKind.PYTHON and spec.path:
        dirs = site_dirs_of(spec.path)
    else:
        return []
    return installed_repos(dirs, spec.dist)


def repo_of_checkout(root: Path) -> RepoId | None:
    """The repository of a checkout's upstream remote, else origin, else its only remote."""
    return repo_of_remotes(git_remote_urls(root))


def repos_from_metadata(metadata_text: str, direct_url: str | None = None) -> frozenset[RepoId]:
    """GitHub repositories named by a distribution's METADATA text and its direct_url.json."""
    return repos_named(metadata_of(HeaderParser().parsestr(metadata_text)), parse_direct_url(direct_url))


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
        (HeaderParser().parsestr(text).get("Name") or name.split("-")[0], repos_from_metadata(text))
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
