"""What the lineage bench's scripts share: its projects' releases, the cases file, the work clones, the wheels.

The projects are bench/realworld/projects.py's (mirror folder from $PRSTACK_REALWORLD_MIRRORS, PyPI
dist, default branch, package folders); the wheels go to the real-world bench's cache
($PRSTACK_REALWORLD_CACHE, wheels/ and trees/ as its prepare.py lays them out); the work clones to
$PRSTACK_REALWORLD_CACHE/lineage/clones/<all|cases>/<owner>+<name>.git (REFS: which PR refs they hold).
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "realworld"))
from prepare import cache_dir, unpacked, wheel_path
from projects import PROJECTS, Project

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases.tsv"
COLUMNS = ("repo", "pr", "head", "base", "landing", "how", "tag_first", "tag_newest", "tag_before")
RELEASE_TAG = re.compile(r"^[vV]?(\d+(?:\.\d+)*)$")  # stable versions only: no a/b/rc/dev/post, no core-v*


@dataclass(frozen=True)
class Lineage:
    """What the lineage bench adds to a real-world project: the releases PyPI has a wheel for."""

    oldest_wheel: tuple[int, ...]  # the oldest release with a wheel on PyPI (found by `pip download` by hand)
    no_wheel: frozenset[str] = frozenset()  # newer versions without one


LINEAGE: dict[str, Lineage] = {
    "encode/httpx": Lineage((0, 7, 5)),  # 0.7.4 and older: sdists only
    "encode/starlette": Lineage((0, 13, 1)),  # 0.13.0 and older: sdists only
    "fastapi/fastapi": Lineage((0, 1, 11), frozenset({"0.136.2"})),  # 0.1.11: the first tag; 0.136.2: not on PyPI
    "pydantic/pydantic": Lineage((0, 1), frozenset({"0.18", "0.18.1", "0.18.2"})),  # v0.0.x, v0.18.x: none on PyPI
}


def git(repo: Path, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=check, capture_output=True, text=True,
                          errors="replace").stdout


def is_ancestor(repo: Path, commit: str, ref: str) -> bool:
    """The oracle: `git merge-base --is-ancestor COMMIT REF` exits 0."""
    return subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", commit, ref],
                          capture_output=True).returncode == 0


def version_of(tag: str) -> tuple[int, ...] | None:
    m = RELEASE_TAG.match(tag)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def releases(p: Project) -> list[str]:
    """The project's release tags that have a wheel on PyPI, oldest version first."""
    lin = LINEAGE[p.repo]
    tags = []
    for tag in git(p.mirror(), "tag", "--list").split():
        v = version_of(tag)
        if v is not None and v >= lin.oldest_wheel and pypi_version(tag) not in lin.no_wheel:
            tags.append((v, tag))
    return [t for _, t in sorted(tags)]


def pypi_version(tag: str) -> str:
    return tag.lstrip("vV")


def wheel_spec(p: Project, tag: str) -> str:
    return f"{p.dist}=={pypi_version(tag)}"


def load_cases(path: Path = CASES) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f, delimiter="\t"))


REFS = ("all", "cases")  # which PR refs a work clone holds: every one of the snapshot, or the cases' alone


def clone_path(p: Project, refs: str = "all") -> Path:
    return cache_dir() / "lineage" / "clones" / refs / (p.repo.replace("/", "+") + ".git")


def make_clone(p: Project, refs: str, prs: set[str]) -> Path:
    """The work clone prstack reads: `git clone --bare --shared SNAPSHOT` (branches and tags), then the
    snapshot's refs/pull/N/head copied in: every one (refs "all", as a clone that fetched
    +refs/pull/*/head holds them), or those of the PR numbers `prs` alone (refs "cases", kept in step
    with them). Made once; the folder appears only when complete."""
    final = clone_path(p, refs)
    if not final.is_dir():
        tmp = final.with_name(final.name + ".tmp")
        subprocess.run(["rm", "-rf", str(tmp)], check=True)
        tmp.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(p.mirror()), str(tmp)], check=True)
        _copy_pull_refs(p.mirror(), tmp, None if refs == "all" else prs)
        tmp.rename(final)
    elif refs != "all":
        _copy_pull_refs(p.mirror(), final, prs)
    return final


def _copy_pull_refs(snapshot: Path, clone: Path, prs: set[str] | None) -> None:
    """The snapshot's refs/pull/N/head into the clone (only those of `prs` when given; others deleted)."""
    fmt = "--format=%(objectname) %(refname)"
    want = {ref: sha for sha, ref in (line.split() for line in git(snapshot, "for-each-ref", fmt,
                                                                    "refs/pull/*/head").splitlines())
            if prs is None or ref.split("/")[2] in prs}
    have = {ref: sha for sha, ref in (line.split() for line in git(clone, "for-each-ref", fmt,
                                                                    "refs/pull/*/head").splitlines())}
    script = "".join(f"update {ref} {sha}\n" for ref, sha in want.items() if have.get(ref) != sha)
    script += "".join(f"delete {ref}\n" for ref in have if ref not in want)
    if script:
        subprocess.run(["git", "-C", str(clone), "update-ref", "--stdin"], input=script, text=True, check=True)


def fetch_wheel(spec: str) -> Path | None:
    """The release's pure-Python wheel from PyPI (`pip download --no-deps`) into the cache, unpacked beside
    it; None when PyPI has no such wheel."""
    if wheel_path(spec) is None:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--platform", "any", "--implementation", "py", "--abi", "none", "--python-version", "3.11",
                        spec, "-d", str(cache_dir() / "wheels")], check=False, capture_output=True)
    w = wheel_path(spec)
    if w is None:
        return None
    tree = unpacked(spec)
    if not tree.is_dir():
        tmp = tree.with_name(tree.name + ".tmp")
        subprocess.run(["rm", "-rf", str(tmp)], check=True)
        with zipfile.ZipFile(w) as z:
            z.extractall(tmp)
        tmp.rename(tree)
    return w


__all__ = ["PROJECTS", "Project", "cache_dir", "unpacked", "wheel_path"]
