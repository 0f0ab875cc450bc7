"""Blobs a clone lacks (a partial clone, `--filter=blob:none`, a mirror that drops big files): found
without reading them, fetched in one batch from a promisor remote where one answers; the files whose
blobs stay missing are named, with the command that fetches them, so the audit judges the rest."""

from __future__ import annotations

import itertools
import re
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from prstack.sources.git.runner import run

__all__ = ["FETCH_TIMEOUT", "NO_LAZY_FETCH", "HistoryWalk", "MissingBlobs", "changed_among", "fetch_blobs",
           "find_missing", "promisor_remotes", "settle_missing", "wanted_blobs"]

FETCH_TIMEOUT = 300.0
"""Seconds the one batch fetch of missing blobs may take before the audit goes on without them."""
NO_LAZY_FETCH = {"GIT_NO_LAZY_FETCH": "1", "GIT_ALLOW_PROTOCOL": ""}
"""git's environment where a promisor remote did not answer: a git that reads a blob the clone lacks
fails at once, asking no remote for it (GIT_NO_LAZY_FETCH from git 2.45 on; before, an empty list
of the transports git may use, so the fetch git starts for it fails before it connects)."""
_OID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


@dataclass(frozen=True)
class MissingBlobs:
    """The blobs of the audited history the clone lacks, and the paths that held them."""

    oids: frozenset[str]
    held: Mapping[str, frozenset[str]]
    """Path -> the missing blobs it held at a revision looked at."""
    repo: Path
    remote: str
    """The remote a user fetches them from (the clone's promisor remote, else its likeliest)."""
    remote_answered: bool = False
    """Whether a promisor remote answered the batch fetch (it lacks these, then): False where none
    did, or there is none to ask, so a git reading one of these would fetch it from no remote."""

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(self.held)

    @cached_property
    def command(self) -> str:
        """The git command that fetches every one of `oids` into the clone."""
        return fetch_command(self.repo, self.remote, self.oids)

    def joined(self, more: MissingBlobs) -> MissingBlobs:
        """These and `more` (found by another look), every path with the versions either found."""
        paths = dict.fromkeys([*self.held, *more.held])
        held = {p: self.held.get(p, frozenset()) | more.held.get(p, frozenset()) for p in paths}
        return MissingBlobs(self.oids | more.oids, held, self.repo, self.remote,
                            self.remote_answered and more.remote_answered)


@dataclass(frozen=True)
class HistoryWalk:
    """The commits of `heads` that none of `starts` reaches (that the default branch does not reach,
    when no start is given): one git walk. Ranges that stack on one another are walked apart, since
    a range's start (a merged parent's head, where the PR built on it starts) hides the commits of
    the range below it from a walk they share."""

    heads: tuple[str, ...]
    starts: tuple[str, ...] = ()


def wanted_blobs(repo: Path, env: Mapping[str, str], walks: Sequence[HistoryWalk]) -> dict[str, frozenset[str]]:
    """Path -> every version (blob id) of it on either side of a change that a commit of the walks
    made (merges against each parent): the file versions the audit's diffs read."""
    found: dict[str, set[str]] = {}
    for walk in walks:
        done = run(repo, ["log", "--raw", "-m", "--no-renames", "--no-abbrev", "-z", "--format=", *walk.heads,
                          *(f"^{start}" for start in walk.starts)], env)
        items = done.stdout.split(b"\0")
        for meta, path in itertools.pairwise(items):
            fields = meta.strip().split()
            if meta.strip().startswith(b":") and len(fields) >= 4:
                versions = {f.decode() for f in fields[2:4] if f.strip(b"0")}
                found.setdefault(path.decode("utf-8", "surrogateescape"), set()).update(versions)
    return {path: frozenset(v) for path, v in found.items()}


def find_missing(repo: Path, env: Mapping[str, str], walks: Sequence[HistoryWalk], default: str) -> frozenset[str]:
    """The blobs missing from the commits of the walks (past their starts, outside `default` for a
    walk with none) and from the trees of their starts (git rev-list --missing=print: nothing is
    read, nothing lazily fetched). Past the starts, a merged PR's own commits count too."""
    missing: set[str] = set()
    asks = [["rev-list", "--objects", "--missing=print", *w.heads, *(f"^{s}" for s in w.starts or [default])]
            for w in walks]
    starts = list(dict.fromkeys(s for w in walks for s in w.starts))
    if starts:
        asks.append(["rev-list", "--objects", "--no-walk", "--missing=print", *starts])
    for args in asks:
        done = run(repo, args, env)
        if done.returncode == 0:
            missing.update(line[1:] for line in done.stdout.decode().splitlines()
                           if line.startswith("?") and _OID.fullmatch(line[1:]))
    return frozenset(missing)


def promisor_remotes(repo: Path, env: Mapping[str, str]) -> list[str]:
    """The clone's promisor remotes (a partial clone's origin), the one its config names first."""
    done = run(repo, ["config", "--get-regexp", r"^(remote\..*\.promisor|extensions\.partialclone)$"], env)
    names: list[str] = []
    for row in done.stdout.decode(errors="replace").splitlines():
        key, _, value = row.partition(" ")
        if key.lower() == "extensions.partialclone" and value:
            names.insert(0, value)
        elif value.lower() in ("true", "yes", "on", "1"):
            names.append(key[len("remote."):-len(".promisor")])
    return list(dict.fromkeys(names))


def fetch_blobs(repo: Path, env: Mapping[str, str], remote: str, oids: frozenset[str]) -> bool:
    """Fetch `oids` from `remote` in one batch, as git's own lazy fetch asks for them; whether git
    said it did (a remote that does not answer, or an offline guard, is no error here)."""
    try:
        done = run(repo, [*fetch_args(remote), "--stdin"], env, ("\n".join(sorted(oids)) + "\n").encode(),
                   timeout=FETCH_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def fetch_args(remote: str) -> list[str]:
    """git's arguments that fetch blobs named by id from `remote` (the ids follow, or `--stdin`)."""
    return ["-c", "fetch.negotiationAlgorithm=noop", "fetch", remote, "--no-tags", "--no-write-fetch-head",
            "--recurse-submodules=no", "--filter=blob:none"]


def fetch_command(repo: Path, remote: str, oids: frozenset[str]) -> str:
    """The command a user runs to fetch `oids` into the clone at `repo`."""
    return shlex.join(["git", "-C", str(repo), *fetch_args(remote), *sorted(oids)])


def settle_missing(repo: Path, env: Mapping[str, str], walks: Sequence[HistoryWalk], default: str,
                   fetch: bool = True) -> MissingBlobs | None:
    """Of the file versions the commits of the walks change, those the clone lacks after one batch
    fetch from its promisor remote (when it has one, and `fetch`); None when it lacks none."""
    lacking = find_missing(repo, env, walks, default)
    if not lacking:  # (the common case: the file versions wanted need not be listed)
        return None
    wanted = wanted_blobs(repo, env, walks)
    every = frozenset().union(*wanted.values())
    missing = every & lacking
    if not missing:
        return None
    remotes = promisor_remotes(repo, env)
    answered = bool(remotes) and fetch and fetch_blobs(repo, env, remotes[0], missing)
    if answered:
        missing = every & find_missing(repo, env, walks, default)
        if not missing:
            return None
    remote = remotes[0] if remotes else _a_remote(repo, env)
    held = {path: versions & missing for path, versions in wanted.items() if versions & missing}
    return MissingBlobs(missing, held, repo, remote, answered)


def _a_remote(repo: Path, env: Mapping[str, str]) -> str:
    """The remote a user would fetch the project's objects from: upstream, origin, the only one."""
    names = run(repo, ["remote"], env).stdout.decode(errors="replace").split()
    return next((n for n in ("upstream", "origin") if n in names), names[0] if len(names) == 1 else "origin")


def changed_among(repo: Path, env: Mapping[str, str], pair: tuple[str, str],
                  paths: frozenset[str]) -> list[tuple[str, str, str, str]]:
    """(path, old blob, new blob, git's status letter A/D/M...) of each of `paths` that differs
    between the pair's two revisions (trees only: no blob is read)."""
    if not paths:
        return []
    done = run(repo, ["diff-tree", "-r", "--no-renames", "--raw", "-z", "--no-abbrev", *pair, "--",
                      *(f":(literal){p}" for p in sorted(paths))], env)
    items = done.stdout.split(b"\0")
    out = []
    for meta, path in itertools.pairwise(items):
        fields = meta.strip().split()
        if meta.startswith(b":") and len(fields) >= 5:
            out.append((path.decode("utf-8", "surrogateescape"), fields[2].decode(), fields[3].decode(),
                        fields[4][:1].decode()))
    return out
