"""The Target interface, and opening one from what the user asked for (choosing the distribution)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Protocol

from prstack.errors import InputError, TargetError
from prstack.models import TargetInfo
from prstack.targets.layout import PathMap
from prstack.targets.metadata import commit_from_direct_url, commit_from_version


class Target(Protocol):
    """Something whose files can be audited."""

    @property
    def info(self) -> TargetInfo: ...

    def files(self) -> frozenset[str]:
        """Every file the target holds, as posix paths relative to its root."""
        ...

    def read(self, path: str) -> bytes | None:
        """A file's bytes, or None when the target lacks it."""
        ...


@dataclass(frozen=True)
class TargetSpec:
    """What the user asked to audit: kind is 'installed', 'python', 'site-packages', 'wheel', 'tree'."""

    kind: str
    path: str | None = None
    dist: str | None = None


@dataclass(frozen=True)
class DistFiles:
    """One distribution's identity and file list, as read from its metadata."""

    name: str
    version: str | None
    files: frozenset[str]
    direct_url: str | None = None


class InstalledDistribution:
    """A distribution installed in a site-packages directory, read through its RECORD."""

    def __init__(self, kind: str, shown_path: str, dist: metadata.Distribution) -> None:
        self._dist = dist
        self.root = Path(str(dist.locate_file("")))
        self.meta = _dist_files(dist)
        self._info = TargetInfo(
            kind=kind,
            path=shown_path,
            distribution=self.meta.name,
            version=self.meta.version,
            vcs_commit=commit_from_direct_url(self.meta.direct_url)
            or commit_from_version(self.meta.version),
        )

    @property
    def info(self) -> TargetInfo:
        return self._info

    def files(self) -> frozenset[str]:
        return self.meta.files

    def read(self, path: str) -> bytes | None:
        if path not in self.meta.files:
            return None
        try:
            return (self.root / path).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise TargetError(f"cannot read {self.root / path}: {exc.strerror}.") from None


class TreeTarget:
    """A plain directory: a checkout, an unpacked sdist, a container layer."""

    def __init__(self, path: Path) -> None:
        if not path.is_dir():
            raise InputError(f"--tree {path}: not a directory; give a source tree.")
        self.root = path
        self._info = TargetInfo(kind="tree", path=str(path))
        self._files: frozenset[str] | None = None

    @property
    def info(self) -> TargetInfo:
        return self._info

    def files(self) -> frozenset[str]:
        if self._files is None:
            found = []
            for dirpath, dirnames, filenames in os.walk(self.root):
                dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__")]
                rel = Path(dirpath).relative_to(self.root)
                found += [(rel / name).as_posix() for name in filenames]
            self._files = frozenset(found)
        return self._files

    def read(self, path: str) -> bytes | None:
        if path not in self.files():
            return None
        return (self.root / path).read_bytes()


def _dist_files(dist: metadata.Distribution) -> DistFiles:
    files = frozenset(
        PurePosixPath(str(f)).as_posix()
        for f in (dist.files or [])
        if not str(f).startswith("..") and not PurePosixPath(str(f)).is_absolute()
    )
    return DistFiles(
        name=dist.metadata["Name"] or "",
        version=dist.version,
        files=files,
        direct_url=dist.read_text("direct_url.json"),
    )


def choose(candidates: Sequence[DistFiles], repo_paths: Iterable[str], repo_files: Iterable[str],
           wanted: str | None, where: str) -> DistFiles:
    """The distribution that ships the PR's files (or the one named with --dist). Pure."""
    if wanted is not None:
        key = _normalise(wanted)
        for cand in candidates:
            if _normalise(cand.name) == key:
                return cand
        raise InputError(f"--dist {wanted}: not installed in {where}; check the name with pip list.")
    repo_paths, repo_files = list(repo_paths), list(repo_files)
    names = {PurePosixPath(p).name for p in repo_paths}
    scored = []
    for cand in candidates:
        if not any(PurePosixPath(f).name in names for f in cand.files):
            continue
        pmap = PathMap(cand.files, repo_files)
        shipped = sum(pmap.locate(p).placement == "shipped" for p in repo_paths)
        if shipped:
            scored.append((shipped, cand))
    if not scored:
        raise InputError(
            f"no distribution in {where} ships any file the PRs change; "
            "name it with --dist NAME or check the target."
        )
    scored.sort(key=lambda sc: -sc[0])
    if len(scored) > 1 and scored[0][0] == scored[1][0]:
        tied = ", ".join(sorted(c.name for s, c in scored if s == scored[0][0]))
        raise InputError(f"several distributions in {where} ship the PRs' files ({tied}); pick one with --dist.")
    return scored[0][1]


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _site_dirs_of(python: str) -> list[str]:
    """The import path of another interpreter, asked without importing anything of the audit's."""
    code = "import json, sys; print(json.dumps(sys.path))"
    try:
        out = subprocess.run([python, "-I", "-c", code], capture_output=True, text=True, timeout=60, check=True)
    except FileNotFoundError:
        raise InputError(f"--python {python}: no such interpreter; give the path of a python executable.") from None
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
        raise InputError(f"--python {python}: it did not run; give a working python executable.") from None
    paths = json.loads(out.stdout)
    return [p for p in paths if p and os.path.isdir(p)]


def open_target(spec: TargetSpec, repo_paths: Sequence[str], repo_files: Sequence[str]) -> Target:
    """Open what the user asked to audit, choosing the distribution that ships the PRs' files."""
    if spec.kind == "tree":
        return TreeTarget(Path(spec.path or "."))
    if spec.kind == "wheel":
        from prstack.targets.wheel import WheelTarget

        return WheelTarget(Path(spec.path or ""))
    if spec.kind == "site-packages":
        site = Path(spec.path or "")
        if not site.is_dir():
            raise InputError(f"--site-packages {site}: not a directory; give a site-packages path.")
        dirs, shown, kind = [str(site)], str(site), "site-packages"
    elif spec.kind == "python":
        dirs, shown, kind = _site_dirs_of(spec.path or ""), spec.path or "", "python"
    elif spec.kind == "installed":
        dirs = [p for p in sys.path if p and os.path.isdir(p)]
        shown, kind = sys.executable, "python"
    else:
        raise InputError(f"unknown target kind {spec.kind!r}.")
    dists = {}
    for dist in metadata.distributions(path=dirs):
        name = dist.metadata["Name"]
        if name and _normalise(name) not in dists:
            dists[_normalise(name)] = dist
    metas = {key: _dist_files(d) for key, d in dists.items()}
    chosen = choose(list(metas.values()), repo_paths, repo_files, spec.dist, shown)
    return InstalledDistribution(kind, shown, dists[_normalise(chosen.name)])
