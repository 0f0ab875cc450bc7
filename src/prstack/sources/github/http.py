"""GitHub's REST API as raw answers: one GET within an overall deadline, list answers page by page, and
every failure (an error status, a redirect, no answer, a malformed answer) as a one-line prstack error."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests
import urllib3
from github import GithubException
from github.Requester import Requester

from prstack.errors import Option, SourceError
from prstack.sources.github import payload
from prstack.sources.github.deadline import Overdue, within
from prstack.sources.github.errors import (
    Asking,
    http_error,
    malformed_error,
    network_error,
    overdue_error,
    unreadable_error,
)

T = TypeVar("T")


class RestApi:
    """GETs through PyGithub's requester (auth, retries of 5xx, per-read time-out) under a deadline."""

    def __init__(self, requester: Requester, asking: Asking, timeout: float, deadline: float) -> None:
        self._requester = requester
        self._asking = asking
        """Who asks (repository, host, API root, token or not); `what` is filled in per request."""
        self.timeout = timeout
        self.deadline = deadline

    def get(
        self,
        url: str,
        what: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        ok: tuple[int, ...] = (),
    ) -> tuple[int, dict[str, Any], str | None]:
        """One GET (a path under the API root, or a URL on its host) within the deadline: (status,
        headers, body); an error status, a redirect or no answer as one-line errors. Statuses in
        `ok` come back with a body of None; a 304 only answers a conditional request."""
        ctx = replace(self._asking, what=what)
        with self.errors(what):
            status, got, body = within(
                self.deadline,
                lambda: self._requester.requestJson("GET", url, dict(params or {}), dict(headers or {})),
            )
        if status in ok:
            return status, got, None
        if status >= 400:
            raise http_error(status, got, payload.error_data(body), ctx)
        if 300 <= status < 400 and not (status == 304 and headers):
            where = got.get("location")
            raise SourceError(
                f"GitHub at {ctx.api_url} answered {what} with a redirect ({status}"
                + (f" to {str(where)[:200]}" if where else "") + "); check ", Option("api_url"), "."
            )
        return status, got, body

    def pages(
        self,
        url: str,
        what: str,
        params: Mapping[str, Any],
        items: tuple[str, Callable[[Any], T]],
        max_pages: int,
    ) -> list[T]:
        """A list answer, page by page along the Link header's rel="next" (on the API's host only, at
        most `max_pages`), each entry checked by items = (what the list is, the entry's check)."""
        expected, check = items
        found: list[T] = []
        query: Mapping[str, Any] | None = {**params, "per_page": 100}
        for _ in range(max_pages):
            _, headers, body = self.get(url, what, params=query)
            with self.errors(what):
                found += payload.page(payload.parse_json(body), expected, check)
            link = payload.next_link(headers.get("link"))
            if link is None:
                break
            if not _same_host(link, self._asking.api_url):
                raise SourceError(
                    f"GitHub's answer for {what} of {self._asking.repo} pages on to another host "
                    f"({urlsplit(link).netloc[:100]!r}); check ", Option("api_url"), "."
                )
            url, query = link, None
        return found

    @contextmanager
    def errors(self, what: str) -> Iterator[None]:
        """GitHub's and the network's failures as one-line prstack errors saying what to do."""
        ctx = replace(self._asking, what=what)
        try:
            yield
        except GithubException as exc:
            raise http_error(exc.status, exc.headers or {}, exc.data, ctx) from None
        except requests.RequestException as exc:
            raise network_error(ctx, self.timeout if _timed_out(exc) else None) from None
        except Overdue as exc:
            raise overdue_error(ctx, exc.seconds) from None
        except payload.BadPayload as exc:
            raise malformed_error(ctx, exc.expected, exc.detail) from None
        except (ValueError, RecursionError, RuntimeError, AssertionError, OverflowError) as exc:
            # PyGithub's own reading of a malformed answer: a JSON error, a redirect loop, a
            # redirect elsewhere (RuntimeError), a rate-limit header that is no number
            raise unreadable_error(ctx, exc) from None


def _same_host(url: str, api_url: str) -> bool:
    """True when `url` (a server's next-page link) is on the API root's scheme, host and port."""
    try:
        a, b = urlsplit(url), urlsplit(api_url)
        return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)
    except ValueError:
        return False


def _timed_out(exc: requests.RequestException) -> bool:
    """True when a request failed by a timeout (requests wraps urllib3's in ConnectionError)."""
    if isinstance(exc, requests.Timeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    if isinstance(reason, urllib3.exceptions.NewConnectionError):  # a ConnectTimeoutError subclass
        return False
    return isinstance(reason, urllib3.exceptions.TimeoutError)
