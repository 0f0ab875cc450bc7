"""Slow answers: a local server that drip-feeds its answer (a byte every quarter second, so no per-read time-out
ever fires) cannot hold a run: GitHub requests end at their overall deadline, git fetches at their stall limit."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from prstack.cli import main
from prstack.errors import InputError, SourceError
from prstack.placement.forge import RepoId
from prstack.sources.github.access import Access
from prstack.sources.github.api import GitHub
from prstack.sources.github.cache import Cache
from prstack.sources.github.fetch import CacheRepo, auth_env, with_stall_limit

STATUS = b"HTTP/1.1 200 OK\r\n"
BODY_HEAD = b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"


class Drip:
    """Answers every request on 127.0.0.1 slowly: mode 'body' sends the headers, then a byte of the body every
    quarter second; mode 'headers' never finishes the headers; mode 'silent' accepts and says nothing."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.stop = threading.Event()
        self.requests = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.1)
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                self.requests += 1
                if self.mode != "silent":
                    conn.sendall(STATUS + (BODY_HEAD if self.mode == "body" else b"X-Slow: "))
                while not self.stop.wait(0.25):
                    if self.mode != "silent":
                        conn.sendall(b" " if self.mode == "body" else b"a")
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self._sock.close()


@pytest.fixture(params=["body", "headers"])
def drip(request: pytest.FixtureRequest) -> Iterator[Drip]:
    server = Drip(request.param)
    yield server
    server.close()


@pytest.mark.slow
def test_a_drip_fed_github_answer_ends_at_the_deadline(drip: Drip, tmp_path: Path) -> None:
    gh = GitHub(RepoId("acme", "widget"), Cache(tmp_path / "c"),
                Access(api_url=f"{drip.url}/api/v3", timeout=5, deadline=1))
    with pytest.raises(SourceError, match=r"did not finish answering within 1 s while fetching PR #2 .*`offline`"):
        gh.pull(2)
    assert drip.requests == 1


@pytest.mark.slow
def test_the_deadline_holds_through_the_cli(drip: Drip, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PRSTACK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PRSTACK_HTTP_DEADLINE", "1")
    for name in ("GITHUB_TOKEN", "GH_TOKEN"):
        monkeypatch.setenv(name, "")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    code = main(["audit", "2", "--repo", "acme/widget", "--api-url", f"{drip.url}/api/v3", "--tree", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) <= 2, err  # (rich may wrap the one line)
    assert "did not finish answering within 1 s" in err.replace("\n", " ")
    assert "PRSTACK_HTTP_DEADLINE" in err.replace("\n", " ") and "127.0.0.1" in err.replace("\n", " ")


def test_a_stalled_server_is_given_up_on_within_30_s_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from prstack.sources.github.api import _deadline

    monkeypatch.delenv("PRSTACK_HTTP_DEADLINE", raising=False)
    assert _deadline() <= 30


@pytest.mark.slow
def test_a_server_that_never_answers_hits_the_read_timeout(tmp_path: Path) -> None:
    server = Drip("silent")
    try:
        gh = GitHub(RepoId("a", "b"), Cache(tmp_path / "c"),
                    Access(api_url=f"{server.url}/api/v3", timeout=1, deadline=30))
        with pytest.raises(SourceError, match=r"did not answer within 1 s"):
            gh.pull(1)
    finally:
        server.close()


@pytest.mark.parametrize("value", ["soon", "0", "-3", "1e9"])
def test_a_bad_deadline_setting_is_one_line(value: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PRSTACK_HTTP_DEADLINE", value)
    with pytest.raises(InputError, match=r"PRSTACK_HTTP_DEADLINE=.* is not a number of seconds"):
        GitHub(RepoId("a", "b"), Cache(tmp_path / "c"), Access(api_url="http://127.0.0.1:9/api/v3"))


# -- git --------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_drip_fed_git_fetch_ends_at_the_stall_limit(tmp_path: Path) -> None:
    server = Drip("body")
    try:
        store = CacheRepo(tmp_path / "cache.git", f"{server.url}/acme/widget.git", stall=(1000, 1), timeout=120)
        said = r"(?i)cannot fetch from http://127\.0\.0\.1:\d+/acme/widget\.git .*too slow"
        with pytest.raises(SourceError, match=said):
            store.fetch([1], "main")
        assert server.requests >= 1
    finally:
        server.close()


def test_the_stall_limit_goes_after_the_token_header() -> None:
    env = with_stall_limit(auth_env("https://github.com/a/b.git", "tok"), (1000, 30))
    assert env["GIT_CONFIG_COUNT"] == "3"
    assert env["GIT_CONFIG_KEY_0"] == "http.https://github.com/.extraheader"
    assert (env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]) == ("http.lowSpeedLimit", "1000")
    assert (env["GIT_CONFIG_KEY_2"], env["GIT_CONFIG_VALUE_2"]) == ("http.lowSpeedTime", "30")
    assert with_stall_limit({})["GIT_CONFIG_KEY_0"] == "http.lowSpeedLimit"


def test_lazy_blob_fetches_get_the_stall_limit_too(tmp_path: Path) -> None:
    store = CacheRepo(tmp_path / "cache.git", "https://github.com/a/b.git", stall=(5, 7))
    store.ensure()  # (a bare repository, made locally)
    source = store.source("tok")
    env = source.env
    keys = {env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"] for i in range(int(env["GIT_CONFIG_COUNT"]))}
    assert keys["http.lowSpeedLimit"] == "5" and keys["http.lowSpeedTime"] == "7"
