"""GitHub's and the network's failures as one-line prstack errors that say what to do next."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prstack.errors import InputError, SourceError

TOKEN_HINT = "set GITHUB_TOKEN (or GH_TOKEN, or `gh auth login`)"
OFFLINE_HINT = "work offline with --offline (after `prstack fetch`) or --git PATH"


@dataclass(frozen=True)
class Asking:
    """Who asked GitHub what: the context every message needs."""

    what: str
    """What was being fetched, e.g. 'PR #12'."""
    repo: str
    host: str
    api_url: str
    authenticated: bool
    tries: int


def http_error(
    status: int, headers: Mapping[str, Any], data: Any, ctx: Asking
) -> SourceError | InputError:
    """The error for an HTTP answer GitHub gave (after any retries)."""
    headers = {k.lower(): str(v) for k, v in headers.items()}
    message = str((data if isinstance(data, dict) else {}).get("message") or "").strip()
    what = ctx.what
    if status == 401:
        return SourceError(
            f"GitHub refused the token (401 {message or 'bad credentials'}); it is wrong or "
            "expired: fix GITHUB_TOKEN / GH_TOKEN, or run `gh auth login`."
        )
    if status == 429 or (
        status == 403
        and (headers.get("x-ratelimit-remaining") == "0" or "rate limit" in message.lower())
    ):
        return SourceError(rate_limit_message(headers, ctx))
    if status == 404:
        hint = "" if ctx.authenticated else f"; if the repository is private, {TOKEN_HINT}"
        return InputError(
            f"{what} of {ctx.repo} not found on {ctx.host} (404): check the number and "
            f"--repo OWNER/NAME{hint}."
        )
    if status == 403:
        return SourceError(
            f"GitHub denied access to {what} of {ctx.repo} (403 {message}); "
            + ("check the token's scopes." if ctx.authenticated else f"{TOKEN_HINT}.")
        )
    if status >= 500:
        return SourceError(
            f"GitHub failed ({status}) for {what} after {ctx.tries} tries; try again later, "
            f"or {OFFLINE_HINT}."
        )
    return SourceError(f"GitHub answered {status} for {what}: {message or 'no message'}.")


def rate_limit_message(headers: Mapping[str, str], ctx: Asking) -> str:
    """Rate limit exhausted: the quota, when it resets, and how to get more."""
    limit = headers.get("x-ratelimit-limit")
    reset = headers.get("x-ratelimit-reset")
    when = ""
    if reset and reset.isdigit():
        at = dt.datetime.fromtimestamp(int(reset), dt.UTC)
        minutes = max(0, round((at - dt.datetime.now(dt.UTC)).total_seconds() / 60))
        when = f"; it resets at {at:%H:%M} UTC (in {minutes} min)"
    elif headers.get("retry-after"):
        when = f"; retry after {headers['retry-after']} s"
    who = "this token" if ctx.authenticated else "unauthenticated use"
    quota = f" ({limit} requests/hour for {who})" if limit else f" (for {who})"
    advice = (
        "wait, or use --offline with the cache or --git PATH."
        if ctx.authenticated
        else f"{TOKEN_HINT} for 5,000/hour, or use --offline with the cache or --git PATH."
    )
    return f"GitHub's API rate limit is exhausted{quota} while fetching {ctx.what}{when}; {advice}"


def network_error(ctx: Asking, timeout: float | None) -> SourceError:
    """No answer at all: unreachable (timeout None) or too slow."""
    if timeout is None:
        return SourceError(
            f"cannot reach GitHub at {ctx.api_url} (no network?) while fetching {ctx.what}; "
            f"check the connection, or {OFFLINE_HINT} with a local clone."
        )
    return SourceError(
        f"GitHub ({ctx.api_url}) did not answer within {timeout:g} s while fetching "
        f"{ctx.what}; try again, or {OFFLINE_HINT}."
    )
