"""A real environment for the real-world bench, the way users run `prstack audit --site-packages`:
the distributions of environment.txt (real wheels from PyPI, dozens of them, tens of thousands of
files) installed in one folder, and for each case's wheel a copy of that folder (hard links) with the
wheel installed beside the other projects' newest bench wheels, as an application's environment
holds its web framework, its HTTP client and its validation library together.

    python bench/realworld/prepare.py && python bench/realworld/environment.py
    python bench/realworld/run.py --site-packages       # audits with --site-packages, not --wheel
Everything goes under $PRSTACK_REALWORLD_CACHE/env; a folder appears only once it is complete.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from prepare import cache_dir, load_cases, wheel_path
from projects import PROJECTS

ENVIRONMENT = Path(__file__).parent / "environment.txt"
"""name==version of every distribution of the shared environment, one a line."""


def env_dir() -> Path:
    return cache_dir() / "env"


def site_for(spec: str) -> Path:
    """The site-packages of the case wheel `spec` (dist==version)."""
    return env_dir() / "sites" / spec.replace("==", "-")


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "-q", "--disable-pip-version-check", *args], check=True)


def _complete(final: Path, build: Callable[[Path], None]) -> Path:
    """`final`, built by `build(tmp)` in a temporary sibling and renamed when done."""
    if final.is_dir():
        return final
    tmp = final.with_name(final.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    build(tmp)
    tmp.rename(final)
    return final


def shared() -> Path:
    """Every distribution of environment.txt installed in one folder (downloaded once)."""
    wheels = env_dir() / "wheels"

    def build(tmp: Path) -> None:
        _pip("download", "--no-deps", "--only-binary=:all:", "--python-version", "3.11",
             "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
             "--platform", "manylinux_2_28_x86_64", "--platform", "any", "-d", str(wheels), "-r", str(ENVIRONMENT))
        _pip("install", "--no-deps", "--no-compile", "--no-index", "--find-links", str(wheels),
             "--python-version", "3.11", "--only-binary=:all:", "--target", str(tmp), "-r", str(ENVIRONMENT))

    return _complete(env_dir() / "shared", build)


def site(spec: str) -> Path:
    """The shared environment plus the case's wheel and the other projects' newest bench wheels."""
    own = spec.split("==")[0]
    others = [f"{p.dist}=={p.tags[-1][1]}" for p in PROJECTS.values() if p.dist != own]
    wheels = [w for s in (spec, *others) if (w := wheel_path(s)) is not None]
    base = shared()

    def build(tmp: Path) -> None:
        shutil.copytree(base, tmp, copy_function=os.link, symlinks=True)
        _pip("install", "--no-deps", "--no-compile", "--no-index", "--target", str(tmp), *map(str, wheels))

    return _complete(site_for(spec), build)


def census(folder: Path) -> tuple[int, int]:
    """(files, distributions) of a site-packages folder."""
    files = sum(len(names) for _, _, names in os.walk(folder))
    return files, sum(1 for p in folder.iterdir() if p.name.endswith(".dist-info"))


def main() -> int:
    specs = sorted({c["wheel"] for c in load_cases()})
    if any(wheel_path(s) is None for s in specs):
        print("run prepare.py first: a case's wheel is not downloaded")
        return 2
    for spec in specs:
        site(spec)
    files, dists = census(site_for(specs[0]))
    print(f"{len(specs)} sites under {env_dir() / 'sites'}; each ~{files:,} files in {dists} distributions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
