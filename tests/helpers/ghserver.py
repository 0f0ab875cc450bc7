"""A GitHub-shaped REST API on 127.0.0.1, answering from a real git repository (for tests only).

It serves what prstack asks GitHub for — pull requests (with ETag/304), the pull list filtered by
head branch (paginated with Link headers), a PR's commits and files, .diff media types (406 when
too large) — and lets a test script faults: rate limits (403/429), 5xx, 401, 404, private
repositories. Every request is logged, so tests count what a run cost.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from conftest import GitRepo


@dataclass
class FakePR:
    number: int
    head_ref: str
    base_ref: str
    title: str = ""
    body: str = ""
    state: str = "open"
    merged: bool = False
    merge_commit_sha: str | None = None


@dataclass
class Fault:
    path: re.Pattern[str]
    status: int
    times: int
    headers: dict[str, str]
    body: Any


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    status: int = 0


@dataclass
class GitHubServer:
    repo: Path
    """A git repository holding the base branch and refs/pull/N/head."""
    owner: str = "acme"
    name: str = "widget"
    default_branch: str = "main"
    token: str | None = None
    """When set, any other Authorization answers 401."""
    private: bool = False
    """When set, requests without a token answer 404 (as GitHub does)."""
    rate_limit: int = 60
    per_page_cap: int = 100
    diff_file_limit: int = 300
    omit_patch: set[str] = field(default_factory=set)
    prs: dict[int, FakePR] = field(default_factory=dict)
    log: list[Seen] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.remaining = self.rate_limit
        self.reset_at = int(time.time()) + 1800
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # -- control -----------------------------------------------------------

    def start(self) -> GitHubServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server._handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The Enterprise-style API root to give PyGithub (and prstack's --api-url)."""
        return f"http://127.0.0.1:{self.port}/api/v3"

    @property
    def clone_url(self) -> str:
        return self.repo.resolve().as_uri()

    def add_pr(self, number: int, head_ref: str, base_ref: str = "main", **kw: Any) -> FakePR:
        pr = FakePR(number, head_ref, base_ref, title=kw.pop("title", f"PR {number}"), **kw)
        self.prs[number] = pr
        return pr

    def fail(
        self,
        path: str,
        status: int,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: Any = None,
    ) -> None:
        """Answer the next `times` requests whose path matches the regex `path` with `status`."""
        self.faults.append(
            Fault(
                re.compile(path),
                status,
                times,
                headers or {},
                body if body is not None else {"message": f"fault {status}"},
            )
        )

    def api_requests(self) -> list[Seen]:
        return [s for s in self.log if s.path.startswith("/api/")]

    def counted(self) -> int:
        """Requests that count against the rate limit (304 answers do not)."""
        return sum(1 for s in self.api_requests() if s.status != 304)

    # -- git ---------------------------------------------------------------

    def _git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.repo), *args], capture_output=True, text=True, check=True
        ).stdout

    def _sha(self, rev: str) -> str:
        return self._git("rev-parse", rev).strip()

    def _head(self, pr: FakePR) -> str:
        return self._sha(f"refs/pull/{pr.number}/head")

    def _base(self, pr: FakePR) -> str:
        return self._sha(f"refs/heads/{pr.base_ref}")

    # -- JSON shapes -------------------------------------------------------

    def _api(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def repo_json(self) -> dict[str, Any]:
        full = f"{self.owner}/{self.name}"
        return {
            "id": 1,
            "name": self.name,
            "full_name": full,
            "owner": {"login": self.owner},
            "private": self.private,
            "default_branch": self.default_branch,
            "clone_url": self.clone_url,
            "html_url": f"https://github.example/{full}",
            "url": self._api(f"/repos/{full}"),
        }

    def pr_json(self, pr: FakePR) -> dict[str, Any]:
        full = f"{self.owner}/{self.name}"
        return {
            "url": self._api(f"/repos/{full}/pulls/{pr.number}"),
            "html_url": f"https://github.example/{full}/pull/{pr.number}",
            "number": pr.number,
            "title": pr.title,
            "body": pr.body,
            "state": "closed" if pr.merged else pr.state,
            "merged": pr.merged,
            "merged_at": "2026-01-02T00:00:00Z" if pr.merged else None,
            "merge_commit_sha": pr.merge_commit_sha,
            "user": {"login": "someone"},
            "head": {
                "ref": pr.head_ref,
                "sha": self._head(pr),
                "label": f"{self.owner}:{pr.head_ref}",
                "repo": self.repo_json(),
            },
            "base": {
                "ref": pr.base_ref,
                "sha": self._base(pr),
                "label": f"{self.owner}:{pr.base_ref}",
                "repo": self.repo_json(),
            },
        }

    # -- serving -----------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        seen = Seen("GET", h.path, {k.lower(): v for k, v in h.headers.items()})
        with self._lock:
            self.log.append(seen)
        status, headers, body = self._answer(seen)
        seen.status = status
        data = (
            body
            if isinstance(body, bytes)
            else (b"" if body is None else json.dumps(body).encode())
        )
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _limits(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.rate_limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_at),
            "X-RateLimit-Resource": "core",
        }

    def _answer(self, seen: Seen) -> tuple[int, dict[str, str], Any]:
        url = urlsplit(seen.path)
        for fault in self.faults:
            if fault.times > 0 and fault.path.search(url.path):
                fault.times -= 1
                return (
                    fault.status,
                    {"Content-Type": "application/json", **fault.headers},
                    fault.body,
                )
        auth = seen.headers.get("authorization", "")
        given = auth.split(" ", 1)[1] if " " in auth else None
        if given is not None and given != self.token:
            return 401, {"Content-Type": "application/json"}, {"message": "Bad credentials"}
        if self.private and given is None:
            return 404, {"Content-Type": "application/json"}, {"message": "Not Found"}
        if self.remaining <= 0:
            return (
                403,
                {"Content-Type": "application/json", **self._limits()},
                {
                    "message": "API rate limit exceeded for 127.0.0.1. (But here's the good news: "
                    "Authenticated requests get a higher rate limit.)"
                },
            )
        status, headers, body = self._route(url.path, parse_qs(url.query), seen.headers)
        if status != 304:
            self.remaining -= 1
        return status, {**headers, **self._limits()}, body

    def _route(
        self, path: str, query: dict[str, list[str]], req: dict[str, str]
    ) -> tuple[int, dict[str, str], Any]:
        prefix = f"/api/v3/repos/{self.owner}/{self.name}"
        json_ct = {"Content-Type": "application/json; charset=utf-8"}
        not_found = (404, json_ct, {"message": "Not Found"})
        if not path.startswith(prefix):
            return not_found
        rest = path[len(prefix) :]
        accept = req.get("accept", "")
        if rest == "":
            return self._etagged(self.repo_json(), req)
        if rest == "/pulls":
            return self._pulls_list(query)
        m = re.fullmatch(r"/pulls/(\d+)(/commits|/files)?", rest)
        if m:
            pr = self.prs.get(int(m.group(1)))
            if pr is None:
                return not_found
            if m.group(2) == "/commits":
                return self._paged(self._commits(pr)[:250], query, rest)
            if m.group(2) == "/files":
                return self._paged(self._files(pr), query, rest)
            if "diff" in accept:
                return self._diff(self._sha(f"{self._base(pr)}"), self._head(pr), merge_base=True)
            return self._etagged(self.pr_json(pr), req)
        m = re.fullmatch(r"/compare/([^/]+)\.\.\.([^/]+)", rest)
        if m:
            return self._compare(unquote(m.group(1)), unquote(m.group(2)))
        m = re.fullmatch(r"/commits/([0-9a-f]{40})", rest)
        if m and "diff" in accept:
            return self._diff(f"{m.group(1)}^", m.group(1))
        return not_found

    def _compare(self, base: str, head: str) -> tuple[int, dict[str, str], Any]:
        """The compare endpoint's merge base (commits and files left out, as per_page=1 nearly does)."""
        try:
            mb = self._git("merge-base", self._sha(base), self._sha(head)).strip()
        except subprocess.CalledProcessError:
            return 404, {"Content-Type": "application/json"}, {"message": "Not Found"}
        ahead = int(self._git("rev-list", "--count", f"{mb}..{self._sha(head)}"))
        when = self._git("log", "-1", "--format=%cI", mb).strip()
        return 200, {"Content-Type": "application/json; charset=utf-8"}, {
            "status": "ahead", "ahead_by": ahead, "behind_by": 0, "total_commits": ahead,
            "merge_base_commit": {"sha": mb, "commit": {"committer": {"date": when}}},
            "commits": [], "files": [],
        }

    def _etagged(self, body: Any, req: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        data = json.dumps(body, sort_keys=True).encode()
        etag = f'W/"{hashlib.sha1(data).hexdigest()}"'
        if req.get("if-none-match") == etag:
            return 304, {"ETag": etag}, None
        return 200, {"Content-Type": "application/json; charset=utf-8", "ETag": etag}, data

    def _paged(
        self, items: list[Any], query: dict[str, list[str]], rest: str
    ) -> tuple[int, dict[str, str], Any]:
        per_page = min(int(query.get("per_page", ["30"])[0]), self.per_page_cap)
        page = int(query.get("page", ["1"])[0])
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {"Content-Type": "application/json; charset=utf-8"}
        last = max(1, -(-len(items) // per_page))
        extra = "".join(
            f"&{k}={v[0]}" for k, v in sorted(query.items()) if k not in ("page", "per_page")
        )
        base = f"{self.base_url}/repos/{self.owner}/{self.name}{rest}?per_page={per_page}{extra}"
        links = []
        if page < last:
            links.append(f'<{base}&page={page + 1}>; rel="next"')
            links.append(f'<{base}&page={last}>; rel="last"')
        if links:
            headers["Link"] = ", ".join(links)
        return 200, headers, chunk

    def _pulls_list(self, query: dict[str, list[str]]) -> tuple[int, dict[str, str], Any]:
        state = query.get("state", ["open"])[0]
        head = query.get("head", [None])[0]
        items = []
        for pr in sorted(self.prs.values(), key=lambda p: -p.number):
            pr_state = "closed" if pr.merged else pr.state
            if state != "all" and pr_state != state:
                continue
            if head is not None and head != f"{self.owner}:{pr.head_ref}":
                continue
            body = self.pr_json(pr)
            body.pop("merged")
            items.append(body)
        return self._paged(items, query, "/pulls")

    def _commits(self, pr: FakePR) -> list[dict[str, Any]]:
        out = self._git(
            "log", "--reverse", "--format=%H %P%x00%s", f"{self._base(pr)}..{self._head(pr)}"
        )
        commits = []
        for line in out.splitlines():
            shas, _, subject = line.partition("\x00")
            sha, *parents = shas.split()
            commits.append(
                {
                    "sha": sha,
                    "commit": {"message": subject},
                    "parents": [{"sha": p} for p in parents],
                }
            )
        return commits

    def _files(self, pr: FakePR) -> list[dict[str, Any]]:
        base = self._git("merge-base", self._base(pr), self._head(pr)).strip()
        statuses = {}
        for line in self._git("diff", "--name-status", base, self._head(pr)).splitlines():
            code, name = line.split("\t", 1)
            statuses[name] = {"A": "added", "D": "removed"}.get(code, "modified")
        files = []
        for line in self._git("diff", "--numstat", base, self._head(pr)).splitlines():
            add, rem, name = line.split("\t", 2)
            entry: dict[str, Any] = {
                "filename": name,
                "status": statuses[name],
                "additions": int(add),
                "deletions": int(rem),
                "changes": int(add) + int(rem),
            }
            if name not in self.omit_patch:
                diff = self._git("diff", base, self._head(pr), "--", name)
                entry["patch"] = "@@" + diff.split("\n@@", 1)[1].rstrip("\n")
            files.append(entry)
        return files

    def _diff(
        self, base: str, head: str, merge_base: bool = False
    ) -> tuple[int, dict[str, str], Any]:
        if merge_base:
            base = self._git("merge-base", base, head).strip()
        names = self._git("diff", "--name-only", base, head).split()
        if len(names) > self.diff_file_limit:
            return (
                406,
                {"Content-Type": "application/json"},
                {
                    "message": "Sorry, the diff exceeded the maximum number of files (300). "
                    "Consider using "
                    "'List pull requests files' API or locally cloning the repository instead.",
                    "errors": [{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
                },
            )
        return (
            200,
            {"Content-Type": "text/plain; charset=utf-8"},
            self._git("diff", base, head).encode(),
        )


# -- a two-PR stack of 10 commits, and fixtures serving it -------------------------------------

CORE = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12))


def build_stack(repo: Any) -> dict[str, str]:
    """On `repo` (a conftest.GitRepo): main, PR #1 (branch feature-a, 4 commits) and PR #2
    (branch feature-b on top of feature-a, 6 commits), refs/pull/N/head, then main moves on."""
    repo.commit(
        "initial",
        {
            "src/widget/__init__.py": "",
            "src/widget/core.py": CORE,
            "tests/test_core.py": "def test():\n    pass\n",
            "README.md": "w\n",
        },
    )
    repo.branch("feature-a")
    core = CORE
    for i in range(4):
        core = core.replace(f"return x + {i}\n", f"return x + {i} + 1  # fixed {i}\n")
        repo.commit(f"fix f{i}", {"src/widget/core.py": core})
    a = repo.pr_ref(1)
    repo.branch("feature-b")
    for i in range(4, 9):
        core = core.replace(f"return x + {i}\n", f"return x * {i}\n")
        repo.commit(f"scale f{i}", {"src/widget/core.py": core})
    b = repo.commit(
        "add extra",
        {"src/widget/extra.py": "VALUE = 42\n", "tests/test_extra.py": "def test():\n    pass\n"},
    )
    repo.pr_ref(2)
    repo.git("checkout", "--quiet", "main")
    repo.commit("changelog", {"CHANGELOG.md": "0.1\n"})
    repo.git("config", "uploadpack.allowFilter", "true")
    repo.git("config", "uploadpack.allowAnySHA1InWant", "true")
    return {"a": a, "b": b}


def serve_stack(path: Path) -> GitHubServer:
    """A started server for a build_stack repository, PRs #1 and #2 as GitHub would list them."""
    server = GitHubServer(path)
    server.add_pr(1, "feature-a", "main", title="Fix the offsets", body="Fixes #9.")
    server.add_pr(2, "feature-b", "feature-a", title="Scale [bold]and[/] extra", body="")
    return server.start()


def export_tree(repo: Any, rev: str, dest: Path) -> Path:
    """The repository's files at `rev`, written to `dest` (a --tree target)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(repo.path), "archive", rev], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository holding the test stack (PR #1, PR #2 stacked on it), once per module."""
    repo = GitRepo(tmp_path_factory.mktemp("gh") / "upstream")
    build_stack(repo)
    return repo.path


@pytest.fixture
def server(upstream: Path) -> Iterator[GitHubServer]:
    """The GitHub-shaped server for `upstream` on 127.0.0.1, stopped after the test."""
    srv = serve_stack(upstream)
    yield srv
    srv.stop()


@pytest.fixture
def gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[GitHubServer, GitRepo]]:
    """The test stack in a fresh repository, served on 127.0.0.1; no token, no `gh`, a cache of its own."""
    monkeypatch.setenv("PRSTACK_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "PRSTACK_REPO"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no `gh` to ask for a token
    monkeypatch.chdir(tmp_path)
    repo = GitRepo(tmp_path / "upstream")
    build_stack(repo)
    server = serve_stack(repo.path)
    yield server, repo
    server.stop()
