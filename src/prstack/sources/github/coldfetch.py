"""A cold fetch bounded by the stack's fork points: the PRs' commits and trees (shallow, blobless,
cut at the oldest fork the compare endpoint names), then every blob the PRs' commits touch in one
batched request; nothing of the history under the forks, no file the PRs leave alone.

Measured on the 20,000-commit repository of tests/gitserver.py (bench/bench_github.py): a cold
audit of a 2-PR stack fell from 28 requests and 6.8 MB (a blobless fetch of the whole history,
then one request per blob) to 9 requests and 74 kB.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from prstack import progress
from prstack.errors import PrstackError
from prstack.sources.github.api import GitHub, PRMeta
from prstack.sources.github.cache import Cache
from prstack.sources.github.fetch import CacheRepo, auth_env

_OFFLINE = {"GIT_ALLOW_PROTOCOL": "prstack-offline"}
"""Git may use no transport: a missing object is reported, never fetched."""


def stack_forks(gh: GitHub, metas: Mapping[int, PRMeta]) -> list[tuple[str, str]] | None:
    """(sha, date) of the merge base of each PR that does not build on another PR of the stack
    (whose base is that PR's head), from the compare endpoint; None when GitHub cannot say."""
    heads = {m.head_sha for m in metas.values()}
    forks = []
    for meta in metas.values():
        if meta.base_sha in heads:
            continue
        try:
            found = gh.fork_point(meta.base_sha, meta.head_sha)
        except PrstackError:  # (an Enterprise server without the endpoint): the whole history
            return None
        if found is None:
            return None
        forks.append(found)
    return forks


def _epoch(date: str) -> int:
    return int(datetime.fromisoformat(date.replace("Z", "+00:00")).timestamp())


def fetch_bounded(
    store: CacheRepo,
    gh: GitHub,
    metas: Mapping[int, PRMeta],
    cache: Cache,
    ns: str,
) -> bool:
    """Fetch the stack into `store` bounded by its fork points; False when that cannot be done
    (GitHub names no fork, or the cut history does not join a head to its fork): then the
    caller fetches the whole history."""
    forks = stack_forks(gh, metas)
    if not forks:
        return False
    since = min(_epoch(date) for _, date in forks)
    kept = cache.get(ns, "shallow-since")  # never shorten what an earlier run fetched
    if isinstance(kept, int):
        since = min(since, kept)
    first = next(iter(metas.values()))
    numbers = sorted(metas)
    store.ensure()
    progress.step(f"fetching {len(numbers)} PR(s) from GitHub, history cut at their fork point")
    specs = [f"+refs/pull/{n}/head:refs/pull/{n}/head" for n in numbers]
    specs.append(f"+refs/heads/{first.default_branch}:refs/remotes/origin/{first.default_branch}")
    done = store.run(
        ["fetch", "--quiet", "--no-tags", "--filter=blob:none", f"--shallow-since={since}", "origin", *specs],
        auth_env(store.url, gh.token),
        f"fetching PRs {', '.join(f'#{n}' for n in numbers)}",
    )
    if done.returncode != 0:
        raise store.fetch_error(done.stderr, numbers)
    store.set_default(first.default_branch)
    cache.put(ns, "shallow-since", since)
    default = f"refs/remotes/origin/{first.default_branch}"
    roots = [m for m in metas.values() if m.base_sha not in {x.head_sha for x in metas.values()}]
    joined = all(_is_ancestor(store, sha, default) for sha, _ in forks) and all(
        any(_is_ancestor(store, sha, m.head_sha) for sha, _ in forks) for m in roots
    )
    if not joined:
        return False
    fetch_blobs(store, [m.head_sha for m in metas.values()], [sha for sha, _ in forks], gh.token)
    return True


def _is_ancestor(store: CacheRepo, ancestor: str, descendant: str) -> bool:
    done = store.run(["merge-base", "--is-ancestor", ancestor, descendant], _OFFLINE, "git merge-base")
    return done.returncode == 0


def fetch_blobs(store: CacheRepo, heads: Sequence[str], forks: Sequence[str], token: str | None) -> int:
    """Every blob the commits heads ^forks touch (each version, both sides) that the store lacks,
    in one request; the number of blobs fetched."""
    done = store.run(
        ["log", "--raw", "--no-abbrev", "-m", "--no-renames", "--format=", *heads, *(f"^{f}" for f in forks)],
        _OFFLINE,
        "git log",
    )
    wanted = sorted({
        sha
        for line in done.stdout.splitlines()
        if line.startswith(":")
        for sha in line.split("\t", 1)[0].split()[2:4]
        if sha.strip("0")
    })
    if not wanted:
        return 0
    listed = store.run(["rev-list", "--objects", "--missing=print", *heads, *forks], _OFFLINE, "git rev-list")
    absent = {line[1:].strip() for line in listed.stdout.splitlines() if line.startswith("?")}
    missing = [sha for sha in wanted if sha in absent]
    if not missing:
        return 0
    progress.step(f"fetching {len(missing)} file version(s) the PRs touch")
    done = store.run(
        ["-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
         "--recurse-submodules=no", "--filter=blob:none", "--stdin", "origin"],
        auth_env(store.url, token),
        f"fetching {len(missing)} file version(s)",
        stdin="".join(f"{sha}\n" for sha in missing),
    )
    if done.returncode != 0:
        raise store.fetch_error(done.stderr, [])
    return len(missing)
