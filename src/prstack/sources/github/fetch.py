"""The git transport: a managed bare, blobless repository per GitHub repository, fed PR heads."""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from prstack import progress
from prstack.errors import InputError, Option, SourceError
from prstack.sources.git.repo import GitClone
from prstack.sources.git.runner import run
from prstack.sources.github.urls import scrub

_NO_NETWORK = (
    "could not resolve host",
    "unable to access",
    "connection refused",
    "could not read from remote",
    "network is unreachable",
    "does not appear to be a git repository",
    "failed to connect",
    "timed out",
    "operation too slow",
)
STALL = (1000, 30)
"""git's HTTP transfers end when slower than 1,000 bytes/s for 30 s (http.lowSpeedLimit/-Time)."""


def auth_env(url: str, token: str | None) -> dict[str, str]:
    """Environment giving git the token as an HTTP header for `url` (never on a command line)."""
    parts = urlsplit(url)
    if not token or parts.scheme != "https":
        return {}
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"http.https://{parts.netloc}/.extraheader",
        "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}",
    }


def with_stall_limit(env: Mapping[str, str], stall: tuple[int, int] = STALL) -> dict[str, str]:
    """`env` plus git configuration (after any GIT_CONFIG_* entries it holds) that ends a fetch
    stalled below `stall` = (bytes/s, seconds): a drip-fed remote cannot hold the run."""
    out = dict(env)
    n = int(out.get("GIT_CONFIG_COUNT", "0"))
    for key, value in (("http.lowSpeedLimit", stall[0]), ("http.lowSpeedTime", stall[1])):
        out[f"GIT_CONFIG_KEY_{n}"], out[f"GIT_CONFIG_VALUE_{n}"] = key, str(value)
        n += 1
    out["GIT_CONFIG_COUNT"] = str(n)
    return out


class CacheRepo:
    """A bare repository under the cache holding refs/pull/N/head and origin's default branch."""

    def __init__(self, path: Path, url: str, *, timeout: float = 600.0, stall: tuple[int, int] = STALL) -> None:
        self.path = path
        self.url = url
        self.shown = scrub(url)
        """The URL as messages show it (without credentials)."""
        self.timeout = timeout
        self.stall = stall

    @property
    def exists(self) -> bool:
        return (self.path / "HEAD").is_file()

    @property
    def shallow(self) -> bool:
        """True when the history stops at fork points (a bounded fetch, see coldfetch)."""
        return (self.path / "shallow").is_file()

    def _spawn(self, args: Sequence[str], env: Mapping[str, str], doing: str,
               stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run git in the cache repository, never prompting, within the time limit, its HTTP transfers
        under the stall limit (every fetch, coldfetch's too)."""
        full_env = with_stall_limit({**os.environ, "GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never", **env},
                                    self.stall)
        try:
            data = stdin.encode("utf-8", "surrogateescape") if stdin is not None else None
            done = run(self.path, args, full_env, data, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise SourceError(
                f"{doing} from {self.shown} took longer than {self.timeout:g} s; try again, "
                "or give a local clone with ", Option("git"), " PATH."
            ) from None
        return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode("utf-8", "surrogateescape"),
                                           done.stderr.decode("utf-8", "replace"))

    def _git(self, *args: str, env: Mapping[str, str] | None = None, check: bool = True) -> str:
        done = self._spawn(args, env or {}, f"git {args[0]}")
        if check and done.returncode != 0:
            raise SourceError(
                f"git {' '.join(args[:2])} failed in the cache repository {self.path}: "
                f"{_last_line(done.stderr)}; run `prstack cache clear` and try again."
            )
        return done.stdout

    def ensure(self) -> None:
        """Create the bare repository (once): a partial clone of `url`, blobs fetched lazily."""
        if not self.exists:
            self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._git("init", "--bare", "--quiet", "--shared=0600")  # (only the user reads what was fetched)
            self._git("config", "core.repositoryformatversion", "1")
            self._git("config", "extensions.partialClone", "origin")
            self._git("config", "remote.origin.promisor", "true")
            self._git("config", "remote.origin.partialclonefilter", "blob:none")
            self._git("config", "gc.auto", "0")
        self._git("config", "remote.origin.url", self.url)

    def head_of(self, number: int) -> str | None:
        """The sha refs/pull/N/head holds here, or None."""
        if not self.exists:
            return None
        out = self._git("rev-parse", "--verify", "--quiet", f"refs/pull/{number}/head", check=False)
        return out.strip() or None

    def fetch(self, numbers: Iterable[int], default_branch: str, token: str | None = None) -> None:
        """Fetch each PR's head to refs/pull/N/head and the default branch to origin/<default>
        (blobless: blobs come later, lazily, only for the files the audit reads)."""
        self.ensure()
        numbers = sorted(set(numbers))
        progress.step(f"fetching {len(numbers)} PR head(s) from GitHub")
        specs = [f"+refs/pull/{n}/head:refs/pull/{n}/head" for n in numbers]
        specs.append(f"+refs/heads/{default_branch}:refs/remotes/origin/{default_branch}")
        unshallow = ["--unshallow"] if self.shallow else []  # a whole history after a bounded one
        done = self._spawn(
            ["fetch", "--quiet", "--no-tags", "--filter=blob:none", *unshallow, "origin", *specs],
            auth_env(self.url, token),
            f"fetching PRs {', '.join(f'#{n}' for n in numbers)}",
        )
        if done.returncode != 0:
            raise self._fetch_error(done.stderr, numbers)
        self.set_default(default_branch)

    def set_default(self, default_branch: str) -> None:
        """Point origin/HEAD at the fetched default branch (what GitClone reads as the default)."""
        self._git("symbolic-ref", "refs/remotes/origin/HEAD", f"refs/remotes/origin/{default_branch}")

    def run(self, args: Sequence[str], env: Mapping[str, str], doing: str,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run git in the repository (for coldfetch's bounded fetches); the caller checks the result."""
        return self._spawn(args, env, doing, stdin)

    def fetch_error(self, stderr: str, numbers: list[int]) -> PrstackErrorT:
        """The one-line error a failed fetch of PRs `numbers` stands for."""
        return self._fetch_error(stderr, numbers)

    def _fetch_error(self, stderr: str, numbers: list[int]) -> PrstackErrorT:
        low = stderr.lower()
        if "couldn't find remote ref" in low:
            missing = [n for n in numbers if f"refs/pull/{n}/head" in stderr] or numbers
            return InputError(
                f"{self.shown} has no refs/pull/N/head for PR "
                f"{', '.join(f'#{n}' for n in missing)}; check the PR numbers and ", Option("repo"), "."
            )
        if any(s in low for s in _NO_NETWORK):
            return SourceError(
                f"cannot fetch from {self.shown} ({scrub(_last_line(stderr))}); check the network, "
                "or work offline with ", Option("offline"), " (after `prstack fetch`) or ", Option("git"), " PATH."
            )
        return SourceError(f"git fetch from {self.shown} failed: {scrub(_last_line(stderr))}.")

    def source(self, token: str | None = None, offline: bool = False) -> GitClone:
        """The repository as a git source, read exactly as a --git clone would be. Blobs it lacks
        are fetched lazily (with the token's header); `offline` forbids that: git may not use
        any transport, so a missing blob is an error, never a network access."""
        source = GitClone(self.path)
        env = with_stall_limit({"GIT_TERMINAL_PROMPT": "0", **auth_env(self.url, None if offline else token)},
                               self.stall)
        if offline:
            env["GIT_ALLOW_PROTOCOL"] = "prstack-offline"
        source.git.update_environment(**env)
        return source


PrstackErrorT = InputError | SourceError


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no message"
