"""Forge URLs, pure: which repository a --repo value, a git remote or a project URL names (the one parser)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from prstack.errors import InputError, Option

_NAME = r"[A-Za-z0-9_.-]+"
_PLAIN = re.compile(rf"^({_NAME})/({_NAME}?)(?:\.git)?/?$")
_URL = re.compile(
    rf"^(?:git\+)?(?:(?:https?|ssh|git)://(?:[^@/]+@)?([^/:]+)(?::\d+)?/|[^@/]+@([^:/]+):/?)"
    rf"({_NAME})/({_NAME}?)(?:\.git)?(?:[/#?@].*)?$"
)


@dataclass(frozen=True, order=True)
class RepoId:
    """A GitHub repository, e.g. RepoId("vllm-project", "vllm")."""

    owner: str
    name: str
    host: str = "github.com"
    """Where it was seen (github.com, or an Enterprise host from a remote URL)."""

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def __str__(self) -> str:
        return self.full_name


_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")


def github_name_problem(repo: RepoId) -> str | None:
    """Why OWNER/NAME is no name GitHub can have (None when it can): owners are letters, digits
    and hyphens (at most 39, not first); names are letters, digits, '.', '-', '_', not '.' or '..'."""
    if not _OWNER.fullmatch(repo.owner):
        return f"{repo.owner!r} is no GitHub owner name"
    if repo.name in (".", "..") or not re.fullmatch(_NAME, repo.name) or len(repo.name) > 100:
        return f"{repo.name!r} is no GitHub repository name"
    return None


def parse_repo(text: str) -> RepoId:
    """OWNER/NAME or a GitHub URL -> RepoId; InputError otherwise (names GitHub cannot have too)."""
    text = text.strip()
    m = _PLAIN.match(text)
    found = RepoId(m.group(1), m.group(2)) if m and m.group(2) and not text.startswith(".") else (
        repo_from_url(text, any_host=True))
    if found is None:
        raise InputError(
            Option("repo"), f" {text!r}: give the repository as OWNER/NAME, e.g. ", Option("repo"), " pypa/pip."
        )
    if (problem := github_name_problem(found)) is not None:
        raise InputError(Option("repo"), f" {text!r}: {problem}; give the repository as OWNER/NAME, e.g. ",
                         Option("repo"), " pypa/pip.")
    return found


def repo_from_url(url: str, *, any_host: bool = False) -> RepoId | None:
    """The repository a git remote or project URL points at (github.com only unless any_host)."""
    m = _URL.match(url.strip())
    if not m:
        return None
    host = (m.group(1) or m.group(2) or "").lower()
    if not any_host and host not in ("github.com", "www.github.com"):
        return None
    if not m.group(4):
        return None
    return RepoId(m.group(3), m.group(4), host.removeprefix("www."))


def repo_slug(url: str | None) -> str | None:
    """'owner/name' (lower case) of a forge URL on any host: https, ssh, git+https, scp-like git@host:owner/name.git."""
    found = repo_from_url(url, any_host=True) if url else None
    return found.full_name.lower() if found else None


def repo_of_remotes(urls: Mapping[str, str]) -> RepoId | None:
    """The repository of a clone's upstream remote, else origin, else its only remote (`urls`:
    remote name -> URL; a remote that is a local path names none)."""
    for name in ("upstream", "origin"):
        if name in urls and (found := repo_from_url(urls[name], any_host=True)):
            return found
    found_all = {r for u in urls.values() if (r := repo_from_url(u, any_host=True))}
    return found_all.pop() if len(found_all) == 1 else None
