"""Which GitHub repositories a target's distributions name (METADATA's URLs, direct_url.json), read confined."""

from __future__ import annotations

import json
import os
import re
import sys
import zipfile
from collections.abc import Iterable
from email.parser import HeaderParser
from pathlib import Path

from prstack.forge import RepoId, repo_from_url
from prstack.models import TargetKind
from prstack.targets.base import TargetSpec, site_dirs_of
from prstack.targets.confined import confined_distributions
from prstack.targets.editable import git_remote_urls

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
    urls = git_remote_urls(root)
    for name in ("upstream", "origin"):
        if name in urls and (found := repo_from_url(urls[name], any_host=True)):
            return found
    found_all = {r for u in urls.values() if (r := repo_from_url(u, any_host=True))}
    return found_all.pop() if len(found_all) == 1 else None


def repos_from_metadata(metadata_text: str, direct_url: str | None = None) -> frozenset[RepoId]:
    """GitHub repositories named by a distribution's METADATA (Project-URL, Home-page, Download-URL)
    and its PEP 610 direct_url.json."""
    headers = HeaderParser().parsestr(metadata_text)
    urls = [headers.get("Home-page") or "", headers.get("Download-URL") or ""]
    urls += [value.split(",", 1)[-1].strip() for value in headers.get_all("Project-URL") or []]
    if direct_url:
        try:
            data = json.loads(direct_url)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("url"), str):
            urls.append(data["url"])
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
    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    found: dict[str, tuple[str, frozenset[RepoId]]] = {}
    for d in confined_distributions(list(dirs)):
        name = d.metadata["Name"]
        if not name or norm(name) in found or (dist and norm(name) != norm(dist)):
            continue
        text = d.read_text("METADATA") or d.read_text("PKG-INFO") or ""
        found[norm(name)] = (name, repos_from_metadata(text, d.read_text("direct_url.json")))
    return list(found.values())
