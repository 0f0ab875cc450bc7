"""How GitHub's API is reached: its root, the token, whether the network may be used, retries and time-outs."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Backoff:
    """How hard to retry 5xx answers: `retries` more tries, sleeping factor * 2**n seconds."""

    retries: int = 3
    factor: float = 0.5


@dataclass(frozen=True)
class Access:
    """How GitHub's API is reached."""

    api_url: str | None = None
    """The API root (GitHub Enterprise's, e.g. https://ghe.example/api/v3); None: api.github.com."""
    token: str | None = field(default=None, repr=False)
    """Kept in memory only: never printed, logged or cached."""
    offline: bool = False
    """Never touch the network: only what the cache holds."""
    backoff: Backoff = Backoff()
    timeout: float = 15.0
    """Seconds to connect, and between two reads of an answer."""
    deadline: float | None = None
    """Seconds one request may take in all (None: PRSTACK_HTTP_DEADLINE, else the default)."""


DEFAULT_ACCESS = Access()
"""api.github.com, online, with the token found in the environment."""
