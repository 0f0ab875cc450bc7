"""Which GitHub repository PRs live in: --repo, a remote, dist metadata, env or pyproject."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from prstack.errors import InputError

REPO_ENV = "PRSTACK_REPO"
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


def parse_repo(text: str) -> RepoId:
    """OWNER/NAME or a GitHub URL -> RepoId; InputError otherwise."""
    text = text.strip()
    m = _PLAIN.match(text)
    if m and m.group(2) and not text.startswith("."):
        return RepoId(m.group(1), m.group(2))
    found = repo_from_url(text, any_host=True)
    if found is None:
        raise InputError(
            f"--repo {text!r}: give the repository as OWNER/NAME, e.g. --repo pypa/pip."
        )
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


def repo_from_git(path: Path) -> RepoId | None:
    """The repository of a clone's upstream remote, else origin, else its only remote."""
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "config", "--get-regexp", r"^remote\..*\.url$"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    urls = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    for key in ("remote.upstream.url", "remote.origin.url"):
        if key in urls and (found := repo_from_url(urls[key], any_host=True)):
            return found
    found_all = {r for u in urls.values() if (r := repo_from_url(u, any_host=True))}
    return found_all.pop() if len(found_all) == 1 else None


def repos_from_metadata(metadata_text: str, direct_url: str | None = None) -> frozenset[RepoId]:
    """GitHub repositories named by a distribution's METADATA (Project-URL, Home-page, Download-URL)
    and its PEP 610 direct_url.json."""
    headers = HeaderParser().parsestr(metadata_text)
    urls = [headers.get("Home-page") or "", headers.get("Download-URL") or ""]
    urls += [value.split(",", 1)[-1].strip() for value in headers.get_all("Project-URL") or []]
    if direct_url:
        try:
            data = json.loads(direct_url)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("url"), str):
            urls.append(data["url"])
    return frozenset(r for u in urls if u and (r := repo_from_url(u)))


def pyproject_repo(cwd: Path) -> str | None:
    """[tool.prstack] repo of ./pyproject.toml, when set."""
    path = cwd / "pyproject.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tool = data.get("tool")
    section = tool.get("prstack") if isinstance(tool, dict) else None
    value = section.get("repo") if isinstance(section, dict) else None
    return value if isinstance(value, str) else None  # a malformed [tool.prstack] names nothing


def wheel_repos(path: Path) -> list[tuple[str, frozenset[RepoId]]]:
    """(distribution, repositories) named by a wheel's METADATA."""
    try:
        with zipfile.ZipFile(path) as zf:
            name = next(
                (
                    n
                    for n in zf.namelist()
                    if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
                ),
                None,
            )
            if name is None:
                return []
            text = zf.read(name).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile):
        return []
    return [
        (HeaderParser().parsestr(text).get("Name") or name.split("-")[0], repos_from_metadata(text))
    ]


def installed_repos(
    dirs: Iterable[str], dist: str | None = None
) -> list[tuple[str, frozenset[RepoId]]]:
    """(distribution, repositories) for each distribution under `dirs` (only `dist` when given)."""
    from prstack.targets.confined import confined_distributions  # (metadata read confined, never hung)

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    found: dict[str, tuple[str, frozenset[RepoId]]] = {}
    for d in confined_distributions(list(dirs)):
        name = d.metadata["Name"]
        if not name or norm(name) in found or (dist and norm(name) != norm(dist)):
            continue
        text = d.read_text("METADATA") or d.read_text("PKG-INFO") or ""
        found[norm(name)] = (name, repos_from_metadata(text, d.read_text("direct_url.json")))
    return list(found.values())


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
            "say which with --repo OWNER/NAME (or narrow the target with --dist NAME)."
        )
    raise InputError(
        "which GitHub repository? none found in --git's remote, the target's metadata, "
        f"{REPO_ENV} or [tool.prstack] repo; give it with --repo OWNER/NAME."
    )
