"""PR metadata from GitHub's REST API, cached and revalidated; the only PyGithub user."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

from github import Auth, Github
from urllib3.util.retry import Retry

from prstack import progress
from prstack.errors import InputError, Option, PrstackError, SourceError
from prstack.placement.forge import RepoId
from prstack.sources.github import payload
from prstack.sources.github.access import DEFAULT_ACCESS, Access
from prstack.sources.github.cache import Cache
from prstack.sources.github.errors import Asking
from prstack.sources.github.http import RestApi
from prstack.sources.github.urls import api_root
from prstack.stack import markers

T = TypeVar("T")
DEFAULT_API_URL = "https://api.github.com"
TOKEN_ENVS = ("GITHUB_TOKEN", "GH_TOKEN")
_SHA = re.compile(r"[0-9a-f]{40}")
DEADLINE_ENV = "PRSTACK_HTTP_DEADLINE"
DEFAULT_DEADLINE = 30.0
"""Seconds a whole answer may take: a stalled or drip-fed server is given up on within this."""
"""Seconds one request to GitHub may take in all (retries of 5xx answers included)."""
PULLS_PAGES = 10
_PARENT_MARKERS = (markers.MarkerKind.DEPENDS_ON, markers.MarkerKind.STACK_LIST)
_RAW_FIELDS = (
    "url",
    "html_url",
    "number",
    "title",
    "body",
    "state",
    "merged",
    "merged_at",
    "merge_commit_sha",
)


@dataclass(frozen=True)
class PRMeta:
    """What GitHub says about one pull request (mutable, so revalidated on each online run)."""

    number: int
    title: str
    body: str
    state: str
    """'open', 'closed' or 'merged'."""
    merged: bool
    merge_commit_sha: str | None
    base_ref: str
    """The branch the PR targets (a parent PR's head branch for a stacked PR)."""
    base_sha: str
    head_ref: str
    head_sha: str
    head_repo: str | None
    """OWNER/NAME the head branch lives in (a fork's, or None when the fork was deleted)."""
    default_branch: str
    clone_url: str
    """Where the git transport fetches refs/pull/N/head from."""
    html_url: str

    @classmethod
    def from_raw(cls, raw: Any) -> PRMeta:
        """Parse GitHub's pull-request JSON (as stored in the cache), every field's type checked;
        github_payload.BadPayload (a ValueError) naming the field when malformed."""
        return cls(**payload.pull_fields(raw))

    def named_parents(self) -> list[int]:
        """PRs the body names as what this one builds on ("depends on #12", "Builds on PR #12",
        "Stacked on https://github.com/o/r/pull/12", a stack list): the grammar `graph` reads too."""
        named = markers.named_prs([self.body], self.number)
        return [n for n, found in named.items() if any(m.kind in _PARENT_MARKERS for m in found)]


def _slim(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a PR's JSON prstack keeps (no user objects, nothing secret)."""

    def side(s: Any) -> dict[str, Any]:
        s = s if isinstance(s, dict) else {}
        repo = s.get("repo") if isinstance(s.get("repo"), dict) else None
        kept = {k: repo.get(k) for k in ("full_name", "default_branch", "clone_url")} if repo else None
        return {"ref": s.get("ref"), "sha": s.get("sha"), "repo": kept}

    slim = {k: raw.get(k) for k in _RAW_FIELDS}
    slim["base"], slim["head"] = side(raw.get("base")), side(raw.get("head"))
    return slim


def find_token(env: Mapping[str, str] | None = None, host: str = "github.com", use_gh: bool = True) -> str | None:
    """GITHUB_TOKEN, GH_TOKEN, else `gh auth token` where gh is installed; else None."""
    env = os.environ if env is None else env
    for name in TOKEN_ENVS:
        if env.get(name, "").strip():
            return env[name].strip()
    gh = shutil.which("gh") if use_gh else None
    if gh is None:
        return None
    try:
        done = subprocess.run(
            [gh, "auth", "token", "--hostname", host],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    token = done.stdout.strip()
    return token if done.returncode == 0 and token else None


def api_host(api_url: str) -> str:
    """The host PRs are cached under: github.com for the public API, else the Enterprise host
    (InputError, one line, for a URL that cannot be GitHub's API)."""
    host = urlsplit(api_root(api_url)).netloc.lower()
    return "github.com" if host == "api.github.com" else host




class GitHub:
    """One repository's pull requests: cached, revalidated by conditional requests."""

    def __init__(
        self,
        repo: RepoId,
        cache: Cache,
        access: Access = DEFAULT_ACCESS,
    ) -> None:
        api_url, token, offline, backoff = access.api_url, access.token, access.offline, access.backoff
        timeout, deadline = access.timeout, access.deadline
        self.repo = repo
        self.cache = cache
        self.api_url = api_root(DEFAULT_API_URL if api_url is None else api_url)
        self.host = api_host(self.api_url)
        self.offline = offline
        self.token = token
        """Kept in memory only: never printed, logged or cached."""
        self.authenticated = token is not None
        self.timeout = timeout
        """Seconds to connect, and between two reads of an answer."""
        self.deadline = _deadline() if deadline is None else deadline
        """Seconds one request may take in all: a drip-fed answer ends there."""
        self.backoff = backoff
        self._pulls: dict[int, PRMeta] = {}
        self._ns = f"github/{self.host}/{repo.owner}/{repo.name}"
        retry = Retry(
            total=backoff.retries,
            connect=0,
            read=0,
            status=backoff.retries,
            backoff_factor=backoff.factor,
            status_forcelist=(500, 502, 503, 504),
            allowed_methods=frozenset({"GET"}),
            raise_on_status=False,
            respect_retry_after_header=False,
        )
        self._gh = Github(
            auth=Auth.Token(token) if token else None,
            base_url=self.api_url,
            timeout=int(max(1, timeout)),
            retry=retry,
            per_page=100,
            seconds_between_requests=None,
            seconds_between_writes=None,
            user_agent="prstack",
            lazy=True,
        )
        self._api = RestApi(
            self._gh.requester,
            Asking("", repo.full_name, self.host, self.api_url, self.authenticated, backoff.retries + 1),
            timeout,
            self.deadline,
        )

    # -- pull requests -----------------------------------------------------

    def pull(self, number: int) -> PRMeta:
        """A PR's metadata: from the cache when GitHub says it is unchanged (304), else fetched."""
        if number in self._pulls:
            return self._pulls[number]
        progress.step(f"asking GitHub about PR #{number}")
        entry = self.cache.get(f"{self._ns}/pulls", str(number))
        if entry is not None and not _valid(entry):
            entry = None  # an entry of another shape (older prstack): refetch it
        if self.offline:
            if entry is None:
                raise SourceError(
                    f"PR #{number} of {self.repo} is not in the cache and ", Option("offline"), f" forbids "
                    f"asking GitHub; run `prstack fetch {number} ", Option("repo"), f" {self.repo}` while online, "
                    "or give ", Option("git"), " PATH."
                )
            meta = PRMeta.from_raw(entry["raw"])
        else:
            what = f"PR #{number}"
            asked = _conditional(entry)
            status, headers, body = self._get(f"/repos/{self.repo.full_name}/pulls/{number}", what, headers=asked)
            if status != 304 or entry is None:  # (a 304 without a conditional request is no answer)
                with self._errors(what):
                    raw = payload.parse_json(body)
                    payload.pull_fields(raw)
                entry = {
                    "raw": _slim(raw),
                    "etag": payload.header(headers, "etag"),
                    "last_modified": payload.header(headers, "last-modified"),
                }
                self.cache.put(f"{self._ns}/pulls", str(number), entry)
            meta = PRMeta.from_raw(entry["raw"])
            if meta.number != number:
                raise SourceError(
                    f"GitHub answered PR #{meta.number} when asked for PR #{number} of {self.repo}; check ",
                                  Option("api_url"), "."
                )
        self._pulls[number] = meta
        return meta

    def pull_of_branch(self, branch: str) -> int | None:
        """The PR whose head is `branch` of this repository (an open one first), or None."""
        cached = self.cache.get(f"{self._ns}/branches", branch)
        if isinstance(cached, dict) and isinstance(cached.get("number"), int):
            meta = self.pull(cached["number"])
            if meta.head_ref == branch and meta.head_repo in (None, self.repo.full_name):
                return meta.number
        if self.offline:
            return None
        pulls = self._pages(
            f"/repos/{self.repo.full_name}/pulls",
            f"the PR of branch {branch!r}",
            {"state": "all", "head": f"{self.repo.owner}:{branch}"},
            ("a list of pull requests", payload.listed_pull),
            PULLS_PAGES,
        )
        found = [(state != "open", -n, n) for n, state in pulls]
        if not found:
            return None
        number = min(found)[2]
        self.cache.put(f"{self._ns}/branches", branch, {"number": number})
        return number

    def parents(self, meta: PRMeta) -> list[int]:
        """PRs `meta` builds on: the PR whose head branch is its base, and PRs its body names."""
        found = []
        if meta.base_ref != meta.default_branch:
            parent = self.pull_of_branch(meta.base_ref)
            if parent is not None and parent != meta.number:
                found.append(parent)
        return found + [n for n in meta.named_parents() if n not in found]

    def stack(self, numbers: Sequence[int], known_only: bool = False) -> dict[int, PRMeta]:
        """The PRs asked for and every PR they build on (by base branch or by name); with
        `known_only`, as far as GitHub (or, offline, the cache) answers, nothing refused."""
        metas: dict[int, PRMeta] = {}
        asked = set(numbers)
        todo = list(dict.fromkeys(numbers))
        while todo:
            number = todo.pop(0)
            if number in metas:
                continue
            try:
                metas[number] = self.pull(number)
            except PrstackError as exc:
                if not known_only and (number in asked or not isinstance(exc, InputError)):
                    raise
                continue  # a "depends on #N" that is an issue, not a PR (or, known_only, not known)
            todo += [n for n in self.parents(metas[number]) if n not in metas]
        return metas

    def fork_point(self, base_sha: str, head_sha: str) -> tuple[str, str] | None:
        """(sha, committer date) of the merge base of two commits, from the compare endpoint;
        cached for good (both are commit ids). None offline without a cached answer, or when the
        answer lacks a well-formed merge base."""
        if not (_SHA.fullmatch(base_sha) and _SHA.fullmatch(head_sha)):  # (text from GitHub)
            return None
        key = f"{base_sha}...{head_sha}"
        cached = self.cache.get(f"{self._ns}/forks", key)
        if not (isinstance(cached, list) and len(cached) == 2) and not self.offline:
            what = f"the merge base of {head_sha[:12]}"
            _, _, body = self._get(f"/repos/{self.repo.full_name}/compare/{key}", what, params={"per_page": 1})
            with self._errors(what):
                data = payload.parse_json(body)
            commit = data.get("merge_base_commit") if isinstance(data, dict) else None
            sha = commit.get("sha") if isinstance(commit, dict) else None
            try:
                when = str(commit["commit"]["committer"]["date"])  # type: ignore[index]
                datetime.fromisoformat(when.replace("Z", "+00:00"))
            except (KeyError, TypeError, ValueError):
                return None
            if not (isinstance(sha, str) and _SHA.fullmatch(sha)):
                return None
            cached = [sha, when]
            self.cache.put(f"{self._ns}/forks", key, cached)
        return (str(cached[0]), str(cached[1])) if isinstance(cached, list) and len(cached) == 2 else None

    # -- requests and errors -------------------------------------------------

    def _get(self, url: str, what: str, **kw: Any) -> tuple[int, dict[str, Any], str | None]:
        return self._api.get(url, what, **kw)

    def _pages(self, url: str, what: str, params: Mapping[str, Any], items: tuple[str, Callable[[Any], T]],
               max_pages: int) -> list[T]:
        return self._api.pages(url, what, params, items, max_pages)

    def _errors(self, what: str) -> AbstractContextManager[None]:
        """GitHub's and the network's failures as one-line prstack errors saying what to do."""
        return self._api.errors(what)


def _valid(entry: Any) -> bool:
    """True when a cached pull entry parses."""
    if not isinstance(entry, dict):
        return False
    try:
        PRMeta.from_raw(entry.get("raw"))
    except ValueError:
        return False
    return True


def _conditional(entry: Mapping[str, Any] | None) -> dict[str, str]:
    """The headers of a conditional request for a cached entry (none without one)."""
    if entry is None:
        return {}
    asked = {"If-None-Match": entry.get("etag"), "If-Modified-Since": entry.get("last_modified")}
    return {k: v for k, v in asked.items() if isinstance(v, str) and payload.header({k: v}, k)}


def _deadline() -> float:
    """PRSTACK_HTTP_DEADLINE (seconds) when set, else DEFAULT_DEADLINE."""
    value = os.environ.get(DEADLINE_ENV, "").strip()
    if not value:
        return DEFAULT_DEADLINE
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 86400:
        raise InputError(f"{DEADLINE_ENV}={value!r} is not a number of seconds; unset it or give e.g. 60.")
    return seconds
