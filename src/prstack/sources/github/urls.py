"""URLs from outside (--api-url, clone URLs GitHub names): checked before use, shown without credentials."""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

from prstack.errors import InputError, Option, Part

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")
_CLONE_SCHEMES = frozenset({"https", "http", "ssh", "git", "file"})
_EXAMPLE: tuple[Part, ...] = ("give the API root, e.g. ", Option("api_url"), " https://ghe.example/api/v3.")


def scrub(text: str) -> str:
    """`text` with the user and password of every URL in it replaced: https://***@host/... ."""
    return _USERINFO.sub(r"\1***@", text) if "@" in text else text


def _split(url: str) -> SplitResult | None:
    """urlsplit, and the port read (urlsplit defers its ValueError to .port); None when malformed."""
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return None
    return parts


def _odd_characters(url: str) -> bool:
    return any(ch.isspace() or ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in url)


def api_root(url: str) -> str:
    """The GitHub API root `url` names (no trailing slash); InputError, one line, when it cannot be one:
    not http(s), no host, a bad port or IPv6 literal, credentials, spaces, a query."""
    shown = repr(scrub(url))
    parts = _split(url)
    if parts is None or _odd_characters(url):
        raise InputError(f"the GitHub API URL {shown} is not a URL; ", *_EXAMPLE)
    if parts.scheme.lower() not in ("https", "http"):
        raise InputError(f"the GitHub API URL {shown} is not an https:// (or http://) URL; ", *_EXAMPLE)
    if not parts.hostname:
        raise InputError(f"the GitHub API URL {shown} names no host; ", *_EXAMPLE)
    if parts.username is not None or parts.password is not None:
        raise InputError(
            f"the GitHub API URL {shown} holds credentials; remove them and set GITHUB_TOKEN (or GH_TOKEN) instead."
        )
    if parts.query or parts.fragment:
        raise InputError(f"the GitHub API URL {shown} has a query or fragment; ", *_EXAMPLE)
    return url.rstrip("/")


def clone_url_problem(url: str) -> str | None:
    """Why `url` (a repository's clone_url in GitHub's answer) is not one git should fetch from, or None.
    Only http(s), ssh, git and file URLs: never git's ext:: or fd:: transports, never an option (-...)."""
    parts = _split(url)
    if not url or url.startswith("-") or parts is None or _odd_characters(url):
        return "not a URL"
    if parts.scheme.lower() not in _CLONE_SCHEMES:
        return "not an https, http, ssh, git or file URL"
    if parts.scheme.lower() != "file" and not parts.hostname:
        return "a URL without a host"
    return None
