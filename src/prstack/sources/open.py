"""Opening the clone an audit reads: a --git clone, or the cache repository fed GitHub's PRs, with their metadata."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from prstack.errors import InputError, Option, PrstackError, SourceError
from prstack.placement.forge import RepoId
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.sources.github.access import DEFAULT_ACCESS, Access
from prstack.sources.github.repo_id import infer_repo, remote_repos, repo_from_git

if TYPE_CHECKING:  # PyGithub and requests are imported only when GitHub is asked (not for a --git clone alone)
    from prstack.sources.github.api import GitHub, PRMeta
    from prstack.sources.github.cache import Cache


@dataclass(frozen=True)
class OpenedClone:
    """Where the audit reads PRs from, and what GitHub said about them."""

    git: GitClone
    """A git-backed source (the user's clone, or the managed cache repository)."""
    meta: Mapping[int, PRMeta] = field(default_factory=dict)
    """GitHub's metadata per PR number (titles, states, branches); empty without GitHub."""
    repo: RepoId | None = None
    fetched: tuple[int, ...] = ()
    """PRs whose heads were fetched over the network in this run (empty when the cache sufficed)."""

    def prs(self, numbers: Sequence[int], base: str | None = None) -> ClonePRs:
        """The stack under `numbers` in this clone as a PR source, with what GitHub said of its PRs."""
        return ClonePRs(self.git, numbers, base, self.meta)

    def titles(self) -> dict[int, str]:
        """PR number -> title, for the report's title column."""
        return {n: m.title for n, m in self.meta.items()}


def open_clone(
    numbers: Sequence[int],
    *,
    git: Path | None = None,
    repo: str | None = None,
    access: Access = DEFAULT_ACCESS,
    named: Callable[[], Sequence[tuple[str, frozenset[RepoId]]]] | None = None,
    cache: Cache | None = None,
) -> OpenedClone:
    """A git-backed source holding the PRs `numbers` and the PRs they stack on.

    With `git`: that clone (plus GitHub's metadata when `repo` is given). Otherwise the GitHub
    repository (--repo, or inferred) is asked for the stack's metadata, and the PR heads are fetched
    into the managed cache repository unless it already holds them. `access.offline` never touches
    the network: the cache must already hold everything. `named`: the repositories the target's
    distributions name (asked when the repository must be inferred, or to refuse a given one that
    the target's one distribution does not name). `access`: how GitHub is reached (its token
    defaults to GITHUB_TOKEN, GH_TOKEN or `gh auth token`).
    """
    if repo is not None and named is not None:
        _named_by_target(infer_repo(explicit=repo), named())
    if git is not None:
        source = GitClone(git)
        if repo is not None:
            _same_project(source, infer_repo(explicit=repo))
        known = infer_repo(explicit=repo) if repo is not None else repo_from_git(source.path, source.remote_urls)
        if known is None or (repo is None and access.api_url is None and known.host != "github.com"):
            return OpenedClone(source)
        gh = _github(known, _cache(cache), access)
        if access.offline:  # the clone holds the PRs: the cache adds what it knows of them, nothing is asked
            return OpenedClone(source, gh.stack(numbers, known_only=True), gh.repo)
        if repo is not None:
            try:
                return OpenedClone(source, gh.stack(numbers), gh.repo)
            except SourceError as exc:
                from prstack.sources.github.errors import with_clone

                raise with_clone(exc) from None
        try:  # the clone's remote names the repository: titles and bodies from GitHub when it answers
            return OpenedClone(source, gh.stack(numbers), gh.repo)
        except PrstackError:
            return OpenedClone(source)  # the clone answers everything else
    from prstack.sources.github.fetch import CacheRepo

    repo_id = infer_repo(explicit=repo, dists=named() if named is not None and repo is None else ())
    cache = _cache(cache)
    gh = _github(repo_id, cache, access)
    metas = gh.stack(numbers)
    first = metas[numbers[0]]
    store = CacheRepo(cache.git_dir(gh.host, repo_id.owner, repo_id.name), first.clone_url)
    ns, key = f"github/{gh.host}/{repo_id.owner}/{repo_id.name}", "fetched"
    recorded = cache.get(ns, key)
    recorded = recorded if isinstance(recorded, dict) else {}
    wanted = {str(n): [m.head_sha, m.base_sha, m.state] for n, m in metas.items()}
    stale = sorted(
        n for n, m in metas.items() if recorded.get(str(n)) != wanted[str(n)] or store.head_of(n) != m.head_sha
    )
    if stale and access.offline:
        shown = " ".join(str(n) for n in stale)
        raise SourceError(
            f"the cache lacks the commits of PR {', '.join(f'#{n}' for n in stale)} and ", Option("offline"), f" "
            f"forbids fetching them; run `prstack fetch {shown} ", Option("repo"), f" {repo_id}` while online."
        )
    if stale:
        # cold (or cut before): the PRs' commits, trees and touched blobs, cut at their fork points
        from prstack.sources.github.coldfetch import fetch_bounded  # (it needs GitHub: imported only here)

        bounded = (store.shallow or not store.exists) and fetch_bounded(store, gh, metas, cache, ns)
        if not bounded:
            store.fetch(metas, first.default_branch, gh.token)
        cache.put(ns, key, {**recorded, **wanted})
    return OpenedClone(store.source(gh.token, access.offline), metas, repo_id, tuple(stale))


def _cache(given: Cache | None) -> Cache:
    """The cache given, else the user's (a clone whose PRs GitHub is not asked about needs none)."""
    from prstack.sources.github.cache import Cache

    return given if given is not None else Cache()


def _same_project(clone: GitClone, repo: RepoId) -> None:
    """Refuse a repository (a PR URL's, --repo) that is not the clone's: one whose name none of
    the clone's remotes has (a fork's own origin, another owner, is the same project by name)."""
    remotes, path = remote_repos(clone.remote_urls), clone.path
    if remotes and all(r.name.lower().removesuffix(".git") != repo.name.lower() for r in remotes):
        shown = ", ".join(sorted({str(r) for r in remotes}))
        raise InputError(f"{repo} is not the repository of the clone {path} (its remotes name {shown}); "
                         f"give a PR of {shown.split(', ')[0]}, or a clone of {repo} with ", Option("git"), ".")


def _named_by_target(repo: RepoId, named: Sequence[tuple[str, frozenset[RepoId]]]) -> None:
    """Refuse a repository (a PR URL's, --repo) that the target, one distribution or checkout,
    does not name: its Project-URLs (or remotes) name other repositories, none of the same name
    (a fork is the same project by name). A target of several distributions is left to choosing."""
    if len(named) != 1:
        return
    what, repos = named[0]
    if repos and all(r.name.lower().removesuffix(".git") != repo.name.lower() for r in repos):
        shown = ", ".join(sorted({str(r) for r in repos}))
        raise InputError(f"{repo} is not the repository of the target {what} (its Project-URL or remote names "
                         f"{shown}); give a PR of {shown.split(', ')[0]}, or a target built from {repo}.")


def _github(repo: RepoId, cache: Cache, access: Access) -> GitHub:
    from prstack.sources.github.api import DEFAULT_API_URL, GitHub, api_host, find_token

    if access.api_url is None and repo.host != "github.com":  # an Enterprise remote or --repo URL
        access = replace(access, api_url=f"https://{repo.host}/api/v3")
    if access.token is None and not access.offline:
        access = replace(access, token=find_token(host=api_host(access.api_url or DEFAULT_API_URL)))
    return GitHub(repo, cache, access)
