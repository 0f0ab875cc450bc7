"""GitHub's and the network's failures as one-line prstack errors that say what to do next."""

from __future__ import annotations

import datetime as dt
import email.utils
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from prstack.errors import InputError, Option, Part, SourceError

TOKEN_HINT = "set GITHUB_TOKEN (or GH_TOKEN, or `gh auth login`)"
OFFLINE_HINT: tuple[Part, ...] = ("work offline with ", Option("offline"), " (after `prstack fetch`) or ",
                                  Option("git"), " PATH")
CLONE_HINT: tuple[Part, ...] = ("leave out ", Option("repo"), " to read the PRs from the ", Option("git"),
                                " clone alone, or add ", Option("offline"), " to use what the cache holds")


def with_clone(error: SourceError) -> SourceError:
    """The same failure for a run that has its clone and asked GitHub because of the repository given:
    the advice fits it (never "or a clone", which was given)."""
    parts = error.parts
    if Option("git") not in parts or not isinstance(parts[0], str) or "; " not in parts[0]:
        return error
    return SourceError(parts[0].split("; ", 1)[0], "; ", *CLONE_HINT, ".")


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
    headers = {str(k).lower(): str(v) for k, v in headers.items()}
    message = (data if isinstance(data, dict) else {}).get("message")
    message = message.strip()[:300] if isinstance(message, str) else ""
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
        return SourceError(*rate_limit_message(headers, ctx))
    if status == 404:
        hint = "" if ctx.authenticated else f"; if the repository is private, {TOKEN_HINT}"
        return InputError(
            f"{what} of {ctx.repo} not found on {ctx.host} (404): check the number and ",
            Option("repo"), f" OWNER/NAME{hint}."
        )
    if status == 403:
        return SourceError(
            f"GitHub denied access to {what} of {ctx.repo} (403{' ' + message if message else ''}); "
            + ("check the token's scopes." if ctx.authenticated else f"{TOKEN_HINT}.")
        )
    if status >= 500:
        return SourceError(
            f"GitHub failed ({status}) for {what} after {ctx.tries} tries; try again later, or ",
            *OFFLINE_HINT, "."
        )
    return SourceError(f"GitHub answered {status} for {what}: {message or 'no message'}.")


def rate_limit_message(headers: Mapping[str, str], ctx: Asking) -> tuple[Part, ...]:
    """Rate limit exhausted: the quota, when it resets, and how to get more."""
    limit = headers.get("x-ratelimit-limit", "")
    when = _retry_when(headers)
    who = "this token" if ctx.authenticated else "unauthenticated use"
    quota = f" ({limit} requests/hour for {who})" if limit.isdigit() and len(limit) < 10 else f" (for {who})"
    advice = "wait" if ctx.authenticated else f"{TOKEN_HINT} for 5,000/hour"
    return (f"GitHub's API rate limit is exhausted{quota} while fetching {ctx.what}{when}; {advice}, or use ",
            Option("offline"), " with the cache or ", Option("git"), " PATH.")


def _at(seconds: float) -> dt.datetime | None:
    """The moment `seconds` (a Unix time) names, or None when it is not one a clock can show."""
    try:
        return dt.datetime.fromtimestamp(seconds, dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _retry_when(headers: Mapping[str, str]) -> str:
    """When to retry: Retry-After (seconds or an HTTP date) first, as GitHub says, else X-RateLimit-Reset
    (a Unix time); GitHub's advice (a minute) when neither is usable."""
    now = dt.datetime.now(dt.UTC)
    after = headers.get("retry-after", "").strip()
    if after.isdigit() and len(after) < 9:
        return f"; retry after {int(after)} s (at {now + dt.timedelta(seconds=int(after)):%H:%M} UTC)"
    at = None
    if after:
        try:
            at = email.utils.parsedate_to_datetime(after).astimezone(dt.UTC)
        except (TypeError, ValueError, IndexError, OverflowError):
            at = None
    reset = headers.get("x-ratelimit-reset", "").strip()
    if at is None and reset.isdigit() and len(reset) < 12:
        at = _at(int(reset))
    if at is None:
        return "; retry in a minute or more"
    minutes = max(0, round((at - now).total_seconds() / 60))
    return f"; it resets at {at:%H:%M} UTC (in {minutes} min)"


def malformed_error(ctx: Asking, expected: str, detail: str) -> SourceError:
    """An answer that is not what GitHub sends (github_payload.BadPayload)."""
    return SourceError(
        f"GitHub's answer for {ctx.what} of {ctx.repo} is not {expected}: {detail}; check ", Option("api_url"), f" "
        f"(is {ctx.api_url} GitHub's API?), or try again later."
    )


def unreadable_error(ctx: Asking, exc: BaseException) -> SourceError:
    """An answer PyGithub could not read (a redirect elsewhere or in a loop, a header that is no number)."""
    reason = str(exc).splitlines()[0][:200] if str(exc) else ""
    if isinstance(exc, RuntimeError) and "redirected" in reason:
        reason = "it redirects to another host, protocol or to itself"
    elif isinstance(exc, RecursionError):
        reason = "it redirects in a loop, or nests without end"
    return SourceError(
        f"GitHub's answer for {ctx.what} of {ctx.repo} could not be read ({type(exc).__name__}"
        + (f": {reason}" if reason else "") + "); check ", Option("api_url"), f" (is {ctx.api_url} GitHub's API?)."
    )


def overdue_error(ctx: Asking, seconds: float) -> SourceError:
    """An answer still arriving when the request's deadline passed (a drip-fed or stalled answer)."""
    host = urlsplit(ctx.api_url).netloc or ctx.api_url
    return SourceError(
        f"GitHub ({ctx.api_url}) did not finish answering within {seconds:g} s while fetching {ctx.what} "
        f"(the server at {host} stalled); try again later, set PRSTACK_HTTP_DEADLINE=SECONDS to allow "
        "longer, or ", *OFFLINE_HINT, "."
    )


def network_error(ctx: Asking, timeout: float | None) -> SourceError:
    """No answer at all: unreachable (timeout None) or too slow."""
    if timeout is None:
        return SourceError(
            f"cannot reach GitHub at {ctx.api_url} (no network?) while fetching {ctx.what}; "
            "check the connection, or ", *OFFLINE_HINT, " with a local clone."
        )
    return SourceError(
        f"GitHub ({ctx.api_url}) did not answer within {timeout:g} s while fetching "
        f"{ctx.what}; try again, or ", *OFFLINE_HINT, "."
    )
