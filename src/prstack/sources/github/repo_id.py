"""Which GitHub repository PRs live in: --repo, a remote, dist metadata, env or pyproject (URLs:
prstack.placement.forge)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from prstack.errors import InputError, Option
from prstack.placement.forge import RepoId, parse_repo, repo_from_url, repo_of_remotes
from prstack.sources.git.runner import run

REPO_ENV = "PRSTACK_REPO"


def remote_urls(path: Path) -> dict[str, str]:
    """remote.NAME.url -> URL of a clone's remotes."""
    try:
        out = run(path, ["config", "--get-regexp", r"^remote\..*\.url$"], timeout=30).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def remote_repos(urls: Mapping[str, str]) -> set[RepoId]:
    """The repositories a clone's remotes (its `remote_urls`) name by URL (a remote that is a
    local path names none)."""
    return {r for u in urls.values() if (r := repo_from_url(u, any_host=True))}


def repo_from_git(path: Path, urls: Mapping[str, str] | None = None) -> RepoId | None:
    """The repository of a clone's upstream remote, else origin, else its only remote (`urls`: the
    clone's `remote_urls`, when already read)."""
    urls = remote_urls(path) if urls is None else urls
    by_name = {key.removeprefix("remote.").removesuffix(".url"): url for key, url in urls.items()}
    return repo_of_remotes(by_name)


def pyproject_repo(cwd: Path) -> str | None:
    """[tool.prstack] repo of ./pyproject.toml, when set."""
    path = cwd / "pyproject.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    import tomllib  # (a parser imported only when there is a file to parse)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    tool = data.get("tool")
    section = tool.get("prstack") if isinstance(tool, dict) else None
    value = section.get("repo") if isinstance(section, dict) else None
    return value if isinstance(value, str) else None  # a malformed [tool.prstack] names nothing


def infer_repo(
    *,
    explicit: str | None = None,
    git_path: Path | None = None,
    dists: Sequence[tuple[str, frozenset[RepoId]]] = (),
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> RepoId:
    """The repository to ask GitHub about, in this order: --repo; --git's remote; the one
    distribution of the target naming a GitHub repository; PRSTACK_REPO; [tool.prstack] repo."""
    if explicit:
        return parse_repo(explicit)
    if git_path is not None and (found := repo_from_git(git_path)):
        return found
    named = sorted({(name, repo) for name, repos in dists for repo in repos})
    if len({repo for _, repo in named}) == 1:
        return named[0][1]
    env = os.environ if env is None else env
    if env.get(REPO_ENV):
        return parse_repo(env[REPO_ENV])
    if (value := pyproject_repo(cwd or Path.cwd())) is not None:
        return parse_repo(value)
    if named:
        shown = ", ".join(f"{repo} ({name})" for name, repo in named[:8])
        more = f" and {len(named) - 8} more" if len(named) > 8 else ""
        raise InputError(
            f"which GitHub repository? the target's distributions name {shown}{more}; "
            "say which with ", Option("repo"), " OWNER/NAME (or narrow the target with ", Option("dist"), " NAME)."
        )
    raise InputError(
        "which GitHub repository? none found in ", Option("git"), "'s remote, the target's metadata, "
        f"{REPO_ENV} or [tool.prstack] repo; give it with ", Option("repo"), " OWNER/NAME."
    )
