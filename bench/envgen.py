"""Builds the main-path bench's case: a git repo whose stacked PRs touch the same files in several
commits, and a site-packages of many distributions whose file names recur, one of them the repo's."""

from __future__ import annotations

import base64
import hashlib
import random
from dataclasses import dataclass
from pathlib import Path

from benchgen import git

PACKAGE = "stackpkg"
"""The audited distribution's import package (repo path src/stackpkg/...)."""
COMMON = ("__init__.py", "utils.py", "base_manager.py", "config.py", "models.py", "layers.py", "io.py",
          "registry.py", "types.py", "errors.py", "_version.py", "helpers.py", "core.py", "api.py")
"""File names every real environment repeats across distributions."""
DIRS = ("", "models/", "utils/", "core/", "ops/", "backends/", "io/", "distributed/", "kernels/", "v1/")


@dataclass
class Site:
    path: Path
    files: int
    dists: int


@dataclass
class MainCase:
    repo: Path
    sites: list[Site]
    numbers: list[int]
    starts: dict[int, str]
    heads: dict[int, str]


def module_text(rng: random.Random, m: int, lines: int) -> list[str]:
    out = [f'"""Module {m}."""', ""]
    while len(out) < lines:
        k = len(out)
        out += [f"def func_{m}_{k}(x, layer_id):", f"    y = x * {rng.randrange(1000)}",
                "    if layer_id > 0:", "        y = y + layer_id", f"    return y  # {m}.{k}", ""]
    return out


def _record_line(rel: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{rel},sha256={digest},{len(data)}"


def _readme(name: str) -> str:
    """A long description as real METADATA carries it: the project's README, a few hundred lines."""
    sections = [f"## {topic}\n\n" + "\n".join(f"- {name} {topic.lower()} note {i}: see the docs." for i in range(20))
                for topic in ("Install", "Usage", "Configuration", "API", "Changelog", "Contributing",
                              "Security", "License")]
    return f"# {name}\n\n" + "\n\n".join(sections) + "\n"


def write_dist(site: Path, name: str, version: str, files: dict[str, bytes]) -> None:
    """One installed distribution as pip leaves it: its files, METADATA with the README as its body,
    and RECORD (with hashes, CRLF line ends as pip's csv writer writes them)."""
    info = f"{name}-{version}.dist-info"
    rows = []
    for rel, data in files.items():
        p = site / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        rows.append(_record_line(rel, data))
    meta = (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            f"Description-Content-Type: text/markdown\n\n{_readme(name)}").encode()
    (site / info).mkdir(parents=True, exist_ok=True)
    (site / info / "METADATA").write_bytes(meta)
    (site / info / "top_level.txt").write_text(name.replace("-", "_") + "\n")
    rows += [_record_line(f"{info}/METADATA", meta), f"{info}/RECORD,,"]
    (site / info / "RECORD").write_bytes(("\r\n".join(rows) + "\r\n").encode())


def build_env(site: Path, files: int, dists: int, seed: int = 7) -> int:
    """`dists` - 1 other distributions of about files / dists files each, names from COMMON under
    DIRS (so the same relative names recur in every one). Returns how many files were written."""
    rng = random.Random(seed)
    per = max(1, files // dists)
    written = 0
    for d in range(dists - 1):
        top = f"otherpkg{d}"
        content: dict[str, bytes] = {}
        i = 0
        while len(content) < per:
            folder = DIRS[i % len(DIRS)] + (f"sub{i // 140}/" if i >= 140 else "")
            name = COMMON[(i // len(DIRS)) % len(COMMON)]
            content[f"{top}/{folder}{name}"] = f"# {top} {i} {rng.random()}\nVALUE = {i}\n".encode()
            i += 1
        write_dist(site, f"otherpkg{d}", "1.0", content)
        written += len(content) + 3
    return written


def build_repo(repo: Path, prs: int = 50, commits: int = 4, modules: int = 120, seed: int = 16
               ) -> tuple[list[int], dict[int, str], dict[int, str], dict[str, bytes]]:
    """A package of `modules` modules (file names from COMMON, so they recur in the environment) and
    `prs` stacked PRs as refs/pull/N/head; each PR's `commits` commits edit the same few files again
    (lines added, then modified; lines moved). Returns numbers, starts, heads and the top's files."""
    rng = random.Random(seed)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "--initial-branch=main")
    paths = [f"src/{PACKAGE}/{DIRS[m % len(DIRS)]}{f'm{m}_' if m >= len(COMMON) else ''}"
             f"{COMMON[m % len(COMMON)]}" for m in range(modules)]
    text = {p: module_text(rng, m, 240) for m, p in enumerate(paths)}

    dirty = set(paths)

    def commit(message: str) -> str:
        for p in sorted(dirty):
            lines = text[p]
            f = repo / p
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text("\n".join(lines) + "\n")
        dirty.clear()
        git(repo, "add", "-A")
        git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", message)
        return git(repo, "rev-parse", "HEAD").decode().strip()

    start = commit("base")
    git(repo, "checkout", "-q", "-b", "stack")
    numbers, starts, heads = [], {}, {}
    for n in range(1, prs + 1):
        mine = rng.sample(paths, 4)
        for c in range(commits):
            for p in rng.sample(mine, 3):
                lines = text[p]
                dirty.add(p)
                for e in range(4):
                    at = 8 + rng.randrange(len(lines) - 16)
                    kind = (c + e) % 3
                    if kind == 0:
                        lines.insert(at, f"    # pr {n} commit {c} note {e}")
                    elif kind == 1:
                        lines[at] = lines[at] + f"  # pr {n} c{c}"
                    else:
                        lines.insert(rng.randrange(8, len(lines) - 8), lines.pop(at))
            commit(f"pr {n} commit {c}")
        heads[n] = git(repo, "rev-parse", "HEAD").decode().strip()
        git(repo, "update-ref", f"refs/pull/{n}/head", heads[n])
        starts[n] = start
        numbers.append(n)
        start = heads[n]
    git(repo, "repack", "-a", "-d", "-q")  # packed, as a clone or a fetch of the PRs leaves it
    top = {p.removeprefix("src/"): ("\n".join(lines) + "\n").encode() for p, lines in text.items()}
    return numbers, starts, heads, top


def build(root: Path, envs: list[tuple[int, int]], prs: int = 50, commits: int = 4) -> MainCase:
    """The repo, and for each (files, dists) a site-packages holding its top PR's package (a tenth
    of its files from an older build) plus other distributions; `sites` in that order."""
    numbers, starts, heads, top = build_repo(root / "repo", prs, commits)
    rng = random.Random(3)
    installed = dict(top)
    for rel in rng.sample(sorted(installed), len(installed) // 10):
        installed[rel] = installed[rel].replace(b"  # pr ", b"  # old pr ", 1)
    sites = []
    for files, dists in envs:
        site = root / f"site-{files}-{dists}"
        write_dist(site, PACKAGE, "0.1", installed)
        written = build_env(site, files - len(installed), dists) + len(installed) + 3
        sites.append(Site(site, written, dists))
    return MainCase(root / "repo", sites, numbers, starts, heads)
