"""Prepare the real-world bench: check the snapshots, download the cases' wheels from PyPI, unpack them.

    PRSTACK_REALWORLD_MIRRORS=/work/.mirror python bench/realworld/prepare.py
Wheels and unpacked trees go to $PRSTACK_REALWORLD_CACHE (default ~/.cache/prstack-realworld), never
into git. The snapshots themselves are fetched beforehand (the search tool's fetch of each repo).
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from projects import PROJECTS

HERE = Path(__file__).parent


def cache_dir() -> Path:
    d = Path(os.environ.get("PRSTACK_REALWORLD_CACHE", Path.home() / ".cache" / "prstack-realworld"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def load_cases(path: Path = HERE / "cases.tsv") -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f, delimiter="\t"))


def wheel_path(spec: str) -> Path | None:
    dist, ver = spec.split("==")
    hits = sorted((cache_dir() / "wheels").glob(f"{dist.replace('-', '_')}-{ver}-*.whl"))
    return hits[0] if hits else None


def unpacked(spec: str) -> Path:
    return cache_dir() / "trees" / spec.replace("==", "-")


def main() -> int:
    cases = load_cases()
    bad = 0
    for repo in sorted({c["repo"] for c in cases}):
        m = PROJECTS[repo].mirror()
        if not (m / "objects").is_dir():
            print(f"missing snapshot {m}: fetch github:{repo} (set PRSTACK_REALWORLD_MIRRORS)")
            bad += 1
    wheels = cache_dir() / "wheels"
    for spec in sorted({c["wheel"] for c in cases}):
        if wheel_path(spec) is None:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                            spec, "-d", str(wheels)], check=False)
        w = wheel_path(spec)
        if w is None:
            print(f"no wheel for {spec}")
            bad += 1
            continue
        t = unpacked(spec)
        if not t.is_dir():
            tmp = t.with_suffix(".tmp")
            with zipfile.ZipFile(w) as z:
                z.extractall(tmp)
            tmp.rename(t)
    print(f"cache: {cache_dir()}  ({len(cases)} cases)")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
