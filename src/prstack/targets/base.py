"""The Target interface, and opening one from what the user asked for (choosing the distribution)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from packaging.utils import canonicalize_name

from prstack.errors import InputError, Option
from prstack.models import TargetInfo, TargetKind
from prstack.placement.choose import Asked, choose
from prstack.targets.confined import READ_CAP, read_confined, size_confined
from prstack.targets.editable import git_head
from prstack.targets.evidence import BuildEvidence
from prstack.targets.installed import (
    InstalledDistribution,
    find_distributions,
    intact_on_disk,
    record_paths,
)
from prstack.targets.spec import TargetSpec

if TYPE_CHECKING:
    from prstack.targets.image import StartedImage

__all__ = ["InstalledDistribution", "Target", "TargetSpec", "TreeTarget", "open_target"]


class Target(Protocol):
    """Something whose files can be audited."""

    @property
    def info(self) -> TargetInfo: ...

    def files(self) -> frozenset[str]:
        """Every file the target holds, as posix paths relative to its root."""
        ...

    def read(self, path: str, cap: int = READ_CAP) -> bytes | None:
        """A file's bytes, or None when the target lacks it. Raises Unreadable when it is not
        read (over `cap` bytes among the reasons: a larger file is not even opened for reading)."""
        ...

    def size(self, path: str) -> int | None:
        """A file's size in bytes without reading it, or None when the target lacks it."""
        ...

    @property
    def evidence(self) -> BuildEvidence:
        """What the target's metadata says about its build (RECORD checked on first use)."""
        ...


class TreeTarget:
    """A plain directory: a checkout, an unpacked sdist, a container layer."""

    def __init__(self, path: Path) -> None:
        if not path.is_dir():
            raise InputError(Option("tree"), f" {path}: not a directory; give a source tree.")
        self.root = path
        self._root = str(path)
        self._info = TargetInfo(kind=TargetKind.TREE, path=str(path), vcs_commit=git_head(path))
        self._files: frozenset[str] | None = None

    @property
    def info(self) -> TargetInfo:
        return self._info

    def files(self) -> frozenset[str]:
        if self._files is None:
            found = []
            root = os.fspath(self.root)
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__")]
                rel = os.path.relpath(dirpath, root).replace(os.sep, "/")  # (strings: thousands of files)
                prefix = "" if rel == "." else rel + "/"
                found += [prefix + name for name in filenames]
            self._files = frozenset(found)
        return self._files

    def read(self, path: str, cap: int = READ_CAP) -> bytes | None:
        if path not in self.files():
            return None
        return read_confined(self._root, path, cap)

    def size(self, path: str) -> int | None:
        if path not in self.files():
            return None
        return size_confined(self._root, path)

    @cached_property
    def evidence(self) -> BuildEvidence:
        """A tree has no RECORD; a checkout's .git/HEAD names its commit."""
        return BuildEvidence(checkout_commit=self._info.vcs_commit)


def site_dirs_of(python: str) -> list[str]:
    """The import path of another interpreter, asked without importing anything of the audit's.

    `-S` and a no-op `site.addpackage` keep the environment's .pth files (an editable finder's
    `install()` among them) and sitecustomize from running, while site's own venv and
    site-packages logic still names its site directories.
    """
    code = ("import json, site, sys; site.addpackage = lambda *a, **k: None; "
            "site.addsitepackages(site.venv(site.removeduppaths())); print(json.dumps(sys.path))")
    try:
        out = subprocess.run([python, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60,
                             check=True)
    except FileNotFoundError:
        raise InputError(Option("python"),
                         f" {python}: no such interpreter; give the path of a python executable.") from None
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError, ValueError):
        raise InputError(Option("python"), f" {python}: it did not run; give a working python executable.") from None
    try:
        paths = json.loads(out.stdout)
    except ValueError:
        paths = None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise InputError(Option("python"), f" {python}: it is not a Python interpreter (it did not answer like one); "
                         "give the path of one, e.g. /opt/venv/bin/python.")
    return [p for p in paths if p and os.path.isdir(p)]


def needs_pr_paths(spec: TargetSpec) -> bool:
    """Whether opening the target needs the paths the PRs touch (to choose the distribution that
    ships them): all but a plain source tree and a wheel."""
    if spec.kind is TargetKind.WHEEL:
        return False
    if spec.kind is TargetKind.TREE:
        root = Path(spec.path or ".")
        return root.is_dir() and next(root.glob("*.dist-info"), None) is not None
    return True


def start_target(spec: TargetSpec) -> StartedImage | None:
    """What can begin before the PRs' paths are known, for open_target to go on with: an image's layers
    opened and their blobs being checked against their digests. None for other targets, or an image that
    cannot be started (open_target says why)."""
    if spec.kind is not TargetKind.IMAGE:
        return None
    from prstack.targets.image import start_image

    return start_image(spec)


def open_target(spec: TargetSpec, repo_paths: Sequence[str], repo_files: Sequence[str],
                started: StartedImage | None = None) -> Target:
    """Open what the user asked to audit, choosing the distribution that ships the PRs' files; from
    `started` (start_target) when it was."""
    if spec.kind is TargetKind.TREE:
        root = Path(spec.path or ".")
        if root.is_dir() and next(root.glob("*.dist-info"), None) is not None:
            # a site directory in a container layer or a mounted image: read it through its metadata
            try:
                return _installed(TargetKind.TREE, [str(root)], str(root), spec, repo_paths, repo_files)
            except InputError:
                if spec.dist is not None:
                    raise
        return TreeTarget(root)
    if spec.kind is TargetKind.IMAGE:
        from prstack.targets.image import open_image

        return open_image(spec, repo_paths, repo_files, started)
    if spec.kind is TargetKind.WHEEL:
        from prstack.targets.wheel import WheelTarget

        wheel = WheelTarget(Path(spec.path or ""))
        name = wheel.info.distribution
        if spec.dist is not None and (name is None or canonicalize_name(name) != canonicalize_name(spec.dist)):
            raise InputError(Option("dist"),
                             f" {spec.dist}: the wheel {spec.path} is {name or 'unnamed'}, not {spec.dist}; "
                             "give that distribution's wheel, or leave ", Option("dist"), " out.")
        return wheel
    if spec.kind is TargetKind.SITE_PACKAGES:
        site = Path(spec.path or "")
        if not site.is_dir():
            raise InputError(Option("site_packages"), f" {site}: not a directory; give a site-packages path.")
        dirs, shown, kind = [str(site)], str(site), TargetKind.SITE_PACKAGES
    elif spec.kind is TargetKind.PYTHON:
        dirs, shown, kind = site_dirs_of(spec.path or ""), spec.path or "", TargetKind.PYTHON
    elif spec.kind is TargetKind.INSTALLED:
        dirs = [p for p in sys.path if p and os.path.isdir(p)]
        shown, kind = sys.executable, TargetKind.PYTHON
    else:
        raise InputError(f"unknown target kind {spec.kind!r}.")
    return _installed(kind, dirs, shown, spec, repo_paths, repo_files)


def _installed(kind: TargetKind, dirs: Sequence[str], shown: str, spec: TargetSpec, repo_paths: Sequence[str],
               repo_files: Sequence[str]) -> InstalledDistribution:
    found = find_distributions(dirs)
    choice = choose([meta for _, meta in found.values()], repo_paths, repo_files, shown,
                    Asked(spec.dist, spec.repo, spec.names), intact_on_disk(found))
    key = canonicalize_name(choice.dist.name)
    dist = found[key][0]
    others = record_paths(found, Path(str(dist.locate_file(""))), key)
    return InstalledDistribution(kind, shown, dist, choice.dist, choice, others)
