"""Upstream releases read from a clone: its version tags in order, and the blob of each file at
each of them from one `git cat-file --batch-check` stream (trees are read, never checked out)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from prstack.errors import InputError, Option, Part
from prstack.sources.git.releases import blobs_at, version_tags
from prstack.sources.git.repo import GitClone
from prstack.sources.git.runner import run_git
from prstack.upkeep.values import Release


def release_tags(git: GitClone, pattern: str | None = None) -> list[Release]:
    """The clone's releases, oldest first (see `version_tags`)."""
    return [Release(name, commit) for name, commit in version_tags(git, pattern)]


def blob_ids(git: GitClone, names: Sequence[tuple[str, str]]) -> list[str | None]:
    """The blob id of each (commit, path), in order; None where the path is no file there (absent,
    a folder, a submodule). The first commit's from one `git cat-file --batch-check`, each other
    commit's as what changed from the one before it, from one `git diff-tree --stdin` (git skips
    the subtrees two releases share, so thirty releases cost little more than one)."""
    if not names:
        return []
    commits = list(dict.fromkeys(rev for rev, _ in names))
    paths = list(dict.fromkeys(path for _, path in names))
    if len(commits) == 1 or not all(_HEX.fullmatch(c) for c in commits):
        return _checked(git, names)
    first = dict(zip(paths, _checked(git, [(commits[0], path) for path in paths]), strict=True))
    at = {commits[0]: first}
    wanted = set(paths)
    pairs = "".join(f"{commit} {before}\n" for before, commit in itertools.pairwise(commits)).encode()
    out = run_git(git.path, ["diff-tree", "--stdin", "-r", "-z", "--no-renames", "--always"], git.env, pairs)
    fields = out.split(b"\0")
    i = 0
    for before, commit in itertools.pairwise(commits):
        while i < len(fields) and not fields[i]:
            i += 1
        i += 1  # (the commit's line)
        now = dict(at[before])
        while i + 1 < len(fields) and fields[i].startswith(b":"):
            meta, path = fields[i].decode(), fields[i + 1].decode("utf-8", "surrogateescape")
            i += 2
            if path in wanted:
                _, mode, _, blob, _ = meta[1:].split(" ")
                now[path] = blob if mode[:2] in ("10", "12") else None
        at[commit] = now
    return [at[rev][path] for rev, path in names]


_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _checked(git: GitClone, names: Sequence[tuple[str, str]]) -> list[str | None]:
    """`blob_ids` from one `git cat-file --batch-check` of each "commit:path"."""
    return blobs_at(git, names)


def commits_touching(git: GitClone, since: str | None, until: str, paths: Sequence[str]) -> dict[str, list[str]]:
    """Per path, the commits of `since..until` (all of `until`'s history when `since` is None)
    that change it, oldest first (parents before children), from one `git log`; merges, which
    change nothing of their own, are not among them."""
    if not paths:
        return {}
    span = f"{since}..{until}" if since is not None else until
    out = run_git(git.path, ["--literal-pathspecs", "log", "--date-order", "--reverse", "--no-renames",
                             "--format=%x01%H", "--name-only", "-z", span, "--", *paths], git.env)
    wanted = set(paths)
    found: dict[str, list[str]] = {}
    for entry in out.split(b"\x01")[1:]:
        sha, *names = entry.split(b"\0")
        commit = sha.decode().strip()
        for name in names:
            path = name.strip(b"\n").decode("utf-8", "surrogateescape")
            if path in wanted:
                found.setdefault(path, []).append(commit)
    return found


def check_pattern(releases: Sequence[Release], pattern: str | None, git: GitClone) -> None:
    """Fail with what to do when no tag is a release."""
    if not releases:
        given: tuple[Part, ...] = (("no tag matches ", Option("releases"), f" {pattern!r}") if pattern
                                   else ("no tag parses as a version",))
        raise InputError(*given, f" in {git.path}; fetch the tags (git -C {git.path} fetch --tags) or give ",
                         Option("releases"), " 'PATTERN' (a glob such as 'v*').")
