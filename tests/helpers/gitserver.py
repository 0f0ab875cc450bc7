"""A big generated repository served over smart HTTP (`git http-backend`) beside the GitHub-shaped
API, on one 127.0.0.1 server that counts every request and every byte it sends (tests and bench).

The repository: main with BIG_COMMITS commits over BIG_FILES files, written by one `git fast-import`;
PR #1 (feature-a) forks from main BIG_AFTER commits before its tip, PR #2 (feature-b) stacks on it.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import pytest

from helpers.ghserver import GitHubServer, Seen

BIG_COMMITS = 20_000
BIG_FILES = 2_000
BIG_AFTER = 40
"""Commits main gained after the stack forked."""
DIRS = 40
START = 1_767_225_600
GIT_ENV = {
    "GIT_AUTHOR_NAME": "gen", "GIT_AUTHOR_EMAIL": "gen@example.invalid",
    "GIT_COMMITTER_NAME": "gen", "GIT_COMMITTER_EMAIL": "gen@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent",
}
PR1_FILES = ("pkg/d00/mod_0000.py", "pkg/d01/mod_0001.py")
PR2_FILES = ("pkg/d02/mod_0002.py", "pkg/d03/mod_0003.py")
PR2_NEW = "pkg/extra.py"


def file_path(i: int) -> str:
    return f"pkg/d{i % DIRS:02d}/mod_{i:04d}.py"


def file_text(i: int, rev: int = 0) -> bytes:
    lines = [f'"""Module {i}."""', ""]
    for j in range(10):
        lines += [f"def f{j}(x):", f"    return x + {j}  # m{i}", "", ""]
    if rev:
        lines.append(f"REVISION = {rev}")
    return ("\n".join(lines) + "\n").encode()


def _git(repo: Path, *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True,
                          env={**os.environ, **GIT_ENV}, check=False)
    if done.returncode:
        raise RuntimeError(f"git {args[:2]}: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode()


@dataclass
class BigRepo:
    path: Path
    heads: dict[int, str]
    fork: str
    """The merge base of the stack with main."""
    main: str


def _commit(out: list[bytes], ref: str, mark: int, when: int, msg: str, parent: int | None,
            files: dict[str, bytes]) -> None:
    out.append(f"commit {ref}\nmark :{mark}\ncommitter gen <gen@example.invalid> {when} +0000\n".encode())
    data = msg.encode() + b"\n"
    out.append(b"data %d\n%s" % (len(data), data))
    if parent is not None:
        out.append(f"from :{parent}\n".encode())
    for path, text in files.items():
        out.append(f"M 100644 inline {path}\ndata {len(text)}\n".encode() + text + b"\n")


def build_big(path: Path, commits: int = BIG_COMMITS, files: int = BIG_FILES) -> BigRepo:
    """The generated repository (one fast-import): main, refs/pull/1/head, refs/pull/2/head."""
    path.mkdir(parents=True)
    _git(path, "init", "--quiet", "--bare", "--initial-branch=main")
    out: list[bytes] = []
    _commit(out, "refs/heads/main", 1, START, "initial", None,
            {file_path(i): file_text(i) for i in range(files)})
    fork_mark = commits - BIG_AFTER
    for n in range(2, commits + 1):  # each commit edits one file (never one the stack touches)
        i = 4 + (n * 7919) % (files - 4)
        _commit(out, "refs/heads/main", n, START + n, f"edit {file_path(i)} ({n})", n - 1,
                {file_path(i): file_text(i, n)})
    when, mark = START + commits + 100, commits
    parent = fork_mark
    texts = {p: file_text(int(p[-7:-3])) for p in PR1_FILES + PR2_FILES}
    for ref, paths, numbers in (("refs/heads/feature-a", PR1_FILES, range(3)),
                                ("refs/heads/feature-b", PR2_FILES, range(3, 6))):
        for k in numbers:
            mark, when = mark + 1, when + 1
            p = paths[k % 2]
            texts[p] = texts[p].replace(f"return x + {k} ".encode(), f"return x + {k} + 1 ".encode())
            changed = {p: texts[p]}
            if k == 5:
                changed[PR2_NEW] = b"VALUE = 42\n"
            _commit(out, ref, mark, when, f"stack change {k}", parent, changed)
            parent = mark
        ref_pr = "refs/pull/1/head" if ref.endswith("-a") else "refs/pull/2/head"
        out.append(f"reset {ref_pr}\nfrom :{mark}\n\n".encode())
    _git(path, "fast-import", "--quiet", data=b"".join(out))
    for key, value in (("uploadpack.allowFilter", "true"), ("uploadpack.allowAnySHA1InWant", "true"),
                       ("http.receivepack", "false"), ("gc.auto", "0")):
        _git(path, "config", key, value)
    heads = {n: _git(path, "rev-parse", f"refs/pull/{n}/head").strip() for n in (1, 2)}
    fork = _git(path, "merge-base", "refs/heads/main", heads[1]).strip()
    return BigRepo(path, heads, fork, _git(path, "rev-parse", "refs/heads/main").strip())


@dataclass
class Hit:
    method: str
    path: str
    status: int
    sent: int
    """Bytes written to the socket for this request (headers and body)."""


class _Counting:
    def __init__(self, raw: BinaryIO, hit: list[int]) -> None:
        self.raw, self.hit = raw, hit

    def write(self, data: bytes) -> int:
        self.hit[0] += len(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()

    def close(self) -> None:
        self.raw.close()

    @property
    def closed(self) -> bool:
        return bool(self.raw.closed)


@dataclass
class GitHttpServer(GitHubServer):
    """The GitHub-shaped API plus smart HTTP git at /git/OWNER/NAME.git, counting what it sends."""

    hits: list[Hit] = field(default_factory=list)

    def start(self) -> GitHttpServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                self.sent = [0]
                self.wfile = _Counting(self.wfile, self.sent)  # type: ignore[assignment]

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def _serve(self, method: str) -> None:
                self.sent[0] = 0
                if self.path.startswith("/git/"):
                    status = server._git_backend(self, method)
                else:
                    server._handle(self)
                    status = server.log[-1].status
                self.wfile.flush()
                with server._lock:
                    server.hits.append(Hit(method, self.path, status, self.sent[0]))

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    @property
    def clone_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/git/{self.owner}/{self.name}.git"

    def reset(self) -> None:
        with self._lock:
            self.hits.clear()
            self.log.clear()

    def totals(self) -> tuple[int, int]:
        """(requests, bytes sent) since the last reset."""
        return len(self.hits), sum(h.sent for h in self.hits)

    def _git_backend(self, h: BaseHTTPRequestHandler, method: str) -> int:
        url = urlsplit(h.path)
        rest = url.path[len(f"/git/{self.owner}/{self.name}.git"):]
        if not url.path.startswith(f"/git/{self.owner}/{self.name}.git/"):
            h.send_response(404)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return 404
        body = _read_body(h)
        env = {
            **os.environ, "GIT_PROJECT_ROOT": str(self.repo), "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": rest, "QUERY_STRING": url.query, "REQUEST_METHOD": method,
            "CONTENT_TYPE": h.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1", "GIT_PROTOCOL": h.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": h.headers.get("Content-Encoding", ""),
        }
        with self._lock:
            self.log.append(Seen(method, h.path, {}, 0))
        done = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=env, check=False)
        head, _, data = done.stdout.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        h.send_response(status)
        for name, value in headers:
            h.send_header(name, value)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        return status


def _read_body(h: BaseHTTPRequestHandler) -> bytes:
    if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int(h.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                h.rfile.readline()
                return b"".join(parts)
            parts.append(h.rfile.read(size))
            h.rfile.readline()
    return h.rfile.read(int(h.headers.get("Content-Length") or 0))


def serve_big(big: BigRepo) -> GitHttpServer:
    """A started server for the big repository: PR #1 on main, PR #2 on PR #1's branch."""
    server = GitHttpServer(big.path)
    server.add_pr(1, "feature-a", "main", title="Fix the offsets", body="First of two.")
    server.add_pr(2, "feature-b", "feature-a", title="Scale and extra", body="Depends on #1.")
    return server.start()


@pytest.fixture(scope="session")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> BigRepo:
    """The generated big repository, built once per session."""
    return build_big(tmp_path_factory.mktemp("big") / "widget.git")


@pytest.fixture
def big_server(big_repo: BigRepo) -> Iterator[GitHttpServer]:
    srv = serve_big(big_repo)
    yield srv
    srv.stop()
