"""PR metadata from GitHub's REST API, cached and revalidated; the only PyGithub user."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3
from github import Auth, Github, GithubException
from github.PullRequest import PullRequest as GhPullRequest
from urllib3.util.retry import Retry

from prstack import markers, progress
from prstack.errors import InputError, SourceError
from prstack.sources.cache import Cache
from prstack.sources.github_errors import Asking, http_error, network_error
from prstack.sources.repo_id import RepoId

DEFAULT_API_URL = "https://api.github.com"
FILES_API_LIMIT = 3000
COMMITS_API_LIMIT = 250
TOKEN_ENVS = ("GITHUB_TOKEN", "GH_TOKEN")
_SHA = re.compile(r"[0-9a-f]{40}")
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
    def from_raw(cls, raw: Mapping[str, Any]) -> PRMeta:
        """Parse GitHub's pull-request JSON (as stored in the cache); ValueError when malformed."""
        try:
            return cls._from_raw(raw)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ValueError(f"not a pull request: {exc!r}") from None

    @classmethod
    def _from_raw(cls, raw: Mapping[str, Any]) -> PRMeta:
        base, head = raw["base"], raw["head"]
        merged = bool(raw.get("merged") or raw.get("merged_at"))
        return cls(
            number=int(raw["number"]),
            title=str(raw.get("title") or ""),
            body=str(raw.get("body") or ""),
            state="merged" if merged else str(raw.get("state") or "open"),
            merged=merged,
            merge_commit_sha=raw.get("merge_commit_sha") or None,
            base_ref=str(base["ref"]),
            base_sha=str(base["sha"]),
            head_ref=str(head["ref"]),
            head_sha=str(head["sha"]),
            head_repo=(head.get("repo") or {}).get("full_name"),
            default_branch=str(base["repo"]["default_branch"]),
            clone_url=str(base["repo"]["clone_url"]),
            html_url=str(raw.get("html_url") or ""),
        )

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
    """The host PRs are cached under: github.com for the public API, else the Enterprise host."""
    host = urlsplit(api_url).netloc.lower()
    return "github.com" if host == "api.github.com" else host


@dataclass(frozen=True)
class ApiDiff:
    """A PR's changes as the REST API gave them."""

    number: int
    text: str | None
    """Unified diff text; None when the API could not give a complete one."""
    via: str
    """'pull diff', 'files API', 'per-commit diffs', or 'none'."""
    reason: str | None
    """Why the first choice was not used (or why nothing was complete)."""


@dataclass(frozen=True)
class Backoff:
    """How hard to retry 5xx answers: `retries` more tries, sleeping factor * 2**n seconds."""

    retries: int = 3
    factor: float = 0.5


DEFAULT_BACKOFF = Backoff()


class GitHub:
    """One repository's pull requests: cached, revalidated by conditional requests."""

    def __init__(
        self,
        repo: RepoId,
        cache: Cache,
        *,
        api_url: str | None = None,
        token: str | None = None,
        offline: bool = False,
        backoff: Backoff = DEFAULT_BACKOFF,
        timeout: float = 15.0,
    ) -> None:
        self.repo = repo
        self.cache = cache
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self.host = api_host(self.api_url)
        self.offline = offline
        self.token = token
        """Kept in memory only: never printed, logged or cached."""
        self.authenticated = token is not None
        self.timeout = timeout
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
                    f"PR #{number} of {self.repo} is not in the cache and --offline forbids "
                    f"asking GitHub; run `prstack fetch {number} --repo {self.repo}` while online, "
                    "or give --git PATH."
                )
            meta = PRMeta.from_raw(entry["raw"])
        else:
            with self._errors(f"PR #{number}"):
                if entry is not None:
                    obj = self._gh.create_from_raw_data(
                        GhPullRequest,
                        entry["raw"],
                        {
                            "etag": entry.get("etag") or "",
                            "last-modified": entry.get("last_modified") or "",
                        },
                    )
                    changed = obj.update()
                else:
                    obj = self._gh.get_repo(self.repo.full_name).get_pull(number)
                    changed = True
                if changed:  # (a lazy object asks GitHub here, so inside _errors)
                    raw, headers = obj.raw_data, obj.raw_headers
            if changed:
                entry = {
                    "raw": _slim(raw),
                    "etag": headers.get("etag"),
                    "last_modified": headers.get("last-modified"),
                }
                if not _valid(entry):
                    raise SourceError(
                        f"GitHub's answer for PR #{number} of {self.repo} is not a pull request; check --api-url."
                    )
                self.cache.put(f"{self._ns}/pulls", str(number), entry)
            assert entry is not None
            meta = PRMeta.from_raw(entry["raw"])
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
        with self._errors(f"the PR of branch {branch!r}"):
            repo = self._gh.get_repo(self.repo.full_name)
            found = [
                (p.state != "open", -p.number, p.number)
                for p in repo.get_pulls(state="all", head=f"{self.repo.owner}:{branch}")
            ]
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

    def stack(self, numbers: Sequence[int]) -> dict[int, PRMeta]:
        """The PRs asked for and every PR they build on (by base branch or by name)."""
        metas: dict[int, PRMeta] = {}
        asked = set(numbers)
        todo = list(dict.fromkeys(numbers))
        while todo:
            number = todo.pop(0)
            if number in metas:
                continue
            try:
                metas[number] = self.pull(number)
            except InputError:
                if number in asked:
                    raise
                continue  # a "depends on #N" that is an issue, not a PR
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
            url = f"{self.api_url}/repos/{self.repo.full_name}/compare/{key}"
            with self._errors(f"the merge base of {head_sha[:12]}"):
                _, data = self._gh.requester.requestJsonAndCheck("GET", url, parameters={"per_page": 1})
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

    # -- diffs through the API -----------------------------------------------

    def _diff_text(self, url: str, what: str) -> str | None:
        """A .diff media-type answer; None when GitHub refuses it as too large (406)."""
        with self._errors(what):
            try:
                _, data = self._gh.requester.requestJsonAndCheck(
                    "GET", url, headers={"Accept": "application/vnd.github.v3.diff"}
                )
            except GithubException as exc:
                if exc.status == 406:
                    return None
                raise
        return str(data.get("data") or "") if isinstance(data, dict) else ""

    def api_diff(self, meta: PRMeta) -> ApiDiff:
        """The PR's diff from the REST API, as complete as GitHub gives it: the pull's .diff, else
        the files API's patches, else per-commit diffs; `text` is None when none is complete
        (then the git transport has to fetch the commits). Cached by head and base sha."""
        key = f"{meta.head_sha}-{meta.base_sha}"
        cached = self.cache.get(f"{self._ns}/diffs", key)
        if cached is not None:
            return ApiDiff(meta.number, cached["text"], cached["via"], cached["reason"])
        if self.offline:
            return ApiDiff(meta.number, None, "none", "not in the cache (offline)")
        found = self._api_diff(meta)
        self.cache.put(f"{self._ns}/diffs", key, asdict(found) | {"number": meta.number})
        return found

    def _api_diff(self, meta: PRMeta) -> ApiDiff:
        n = meta.number
        url = f"{self.api_url}/repos/{self.repo.full_name}/pulls/{n}"
        text = self._diff_text(url, f"the diff of PR #{n}")
        if text is not None:
            return ApiDiff(n, text, "pull diff", None)
        pull = self._gh.get_repo(self.repo.full_name).get_pull(n)
        with self._errors(f"the files of PR #{n}"):
            files = [(f.filename, f.previous_filename, f.status, f.patch) for f in pull.get_files()]
        omitted = [name for name, _, _, patch in files if patch is None]
        if not omitted and len(files) < FILES_API_LIMIT:
            parts = [_file_diff(*f) for f in files]
            return ApiDiff(n, "".join(parts), "files API", "the pull's .diff is too large (406)")
        reason = (
            f"the files API omits the patch of {omitted[0]}"
            if omitted
            else f"the files API stops at {FILES_API_LIMIT} files"
        )
        with self._errors(f"the commits of PR #{n}"):
            shas = [c.sha for c in pull.get_commits()]
        if len(shas) >= COMMITS_API_LIMIT:
            return ApiDiff(n, None, "none", f"{reason}; the commits API stops at {COMMITS_API_LIMIT} commits")
        diffs = []
        for sha in shas:
            one = self._diff_text(
                f"{self.api_url}/repos/{self.repo.full_name}/commits/{sha}",
                f"the diff of commit {sha[:12]}",
            )
            if one is None:
                return ApiDiff(n, None, "none", f"{reason}; commit {sha[:12]} is too large")
            diffs.append(one)
        return ApiDiff(n, "".join(diffs), "per-commit diffs", reason)

    # -- errors ------------------------------------------------------------

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """GitHub's and the network's failures as one-line prstack errors saying what to do."""
        ctx = Asking(
            what,
            self.repo.full_name,
            self.host,
            self.api_url,
            self.authenticated,
            self.backoff.retries + 1,
        )
        try:
            yield
        except GithubException as exc:
            raise http_error(exc.status, exc.headers or {}, exc.data, ctx) from None
        except requests.RequestException as exc:
            raise network_error(ctx, self.timeout if _timed_out(exc) else None) from None


def _valid(entry: Any) -> bool:
    """True when a cached pull entry parses."""
    try:
        PRMeta.from_raw(entry["raw"])
    except (ValueError, KeyError, TypeError):
        return False
    return True


def _file_diff(name: str, previous: str | None, status: str, patch: str | None) -> str:
    """One file's entry of the files API as a unified diff."""
    old = previous or name
    before = "/dev/null" if status == "added" else f"a/{old}"
    after = "/dev/null" if status == "removed" else f"b/{name}"
    return f"diff --git a/{old} b/{name}\n--- {before}\n+++ {after}\n{patch}\n"


def _timed_out(exc: requests.RequestException) -> bool:
    """True when a request failed by a timeout (requests wraps urllib3's in ConnectionError)."""
    if isinstance(exc, requests.Timeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    if isinstance(reason, urllib3.exceptions.NewConnectionError):  # a ConnectTimeoutError subclass
        return False
    return isinstance(reason, urllib3.exceptions.TimeoutError)


def meta_as_dict(meta: PRMeta) -> dict[str, Any]:
    """A PRMeta as plain JSON-able values."""
    return asdict(meta)
