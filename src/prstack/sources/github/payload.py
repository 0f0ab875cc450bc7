"""GitHub's JSON answers checked at the boundary: every field prstack uses has the type it must have, or
BadPayload names the field; pure (values in, values out), so hostile answers are tested with literals."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from prstack.sources.github.urls import clone_url_problem

T = TypeVar("T")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_STATES = ("open", "closed")
_NEXT = re.compile(r'<([^<>\s]+)>\s*;\s*rel="?next"?')
_HEADER_VALUE = re.compile(r"[\x20-\x7e]{1,512}")
MISSING: Any = object()
"""What `_at` gives for a field the answer lacks (distinct from JSON null)."""


class BadPayload(ValueError):
    """An answer that is not what GitHub sends: `expected` says what it should be, the message which
    field is wrong and how ("head.sha is a number, not a commit sha")."""

    def __init__(self, expected: str, detail: str) -> None:
        super().__init__(detail)
        self.expected = expected
        self.detail = detail


def kind(value: Any) -> str:
    """A JSON value's type in words, for messages."""
    if value is MISSING:
        return "missing"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "an empty string" if not value else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def parse_json(text: str | bytes | None) -> Any:
    """The JSON value of an answer's body; BadPayload when it is none (invalid, or nested so deeply
    that decoding it would exhaust the stack)."""
    if text is None or text in ("", b""):
        raise BadPayload("valid JSON", "the answer is empty")
    try:
        return json.loads(text)
    except RecursionError:
        raise BadPayload("valid JSON", "it is nested too deeply to read") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an integer of 5,000 digits
        raise BadPayload("valid JSON", str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__) from None


def error_data(text: str | None) -> dict[str, Any]:
    """An error answer's body as GitHub's {"message": ...} object; {} when it is anything else."""
    try:
        data = parse_json(text)
    except BadPayload:
        return {}
    if not isinstance(data, dict):
        return {}
    message = data.get("message")
    return {"message": message} if isinstance(message, str) else {}


def header(headers: Mapping[str, Any], name: str) -> str | None:
    """A response header prstack stores and sends back (ETag, Last-Modified), when it is plain ASCII."""
    value = headers.get(name)
    return value if isinstance(value, str) and _HEADER_VALUE.fullmatch(value) else None


def next_link(value: Any) -> str | None:
    """The rel="next" URL of a Link header, or None."""
    if not isinstance(value, str):
        return None
    found = _NEXT.search(value)
    return found.group(1) if found else None


# -- fields ---------------------------------------------------------------------------------------


def _at(obj: Mapping[str, Any], path: str) -> Any:
    value: Any = obj
    for part in path.split("."):
        value = value.get(part, MISSING) if isinstance(value, dict) else MISSING
    return value


def _fail(expected: str, where: str, value: Any, want: str) -> BadPayload:
    return BadPayload(expected, f"{where} is {kind(value)}, not {want}")


def _object(value: Any, expected: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(expected, where, value, "an object")
    return value


def _str(obj: dict[str, Any], path: str, expected: str, *, null: bool = False, empty: bool = False) -> Any:
    value = _at(obj, path)
    if null and value in (None, MISSING):
        return None
    if not isinstance(value, str) or (not value and not empty):
        raise _fail(expected, path, value, "a string" if empty or null else "a non-empty string")
    return value


def _number(obj: dict[str, Any], path: str, expected: str) -> int:
    value = _at(obj, path)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise _fail(expected, path, value, "a PR number")
    return value


def _sha(obj: dict[str, Any], path: str, expected: str, *, null: bool = False) -> Any:
    value = _at(obj, path)
    if null and value in (None, MISSING):
        return None
    if not isinstance(value, str):
        raise _fail(expected, path, value, "a commit sha")
    if not _SHA.fullmatch(value):
        raise BadPayload(expected, f"{path} is {value[:50]!r}, not a commit sha")
    return value


def _state(obj: dict[str, Any], expected: str) -> str:
    value = _at(obj, "state")
    if value not in _STATES:
        raise BadPayload(expected, f"state is {value!r}, not open or closed" if isinstance(value, str)
                         else f"state is {kind(value)}, not open or closed")
    return str(value)


def _flag(obj: dict[str, Any], path: str, expected: str) -> bool:
    value = _at(obj, path)
    if value in (None, MISSING):
        return False
    if not isinstance(value, bool):
        raise _fail(expected, path, value, "true or false")
    return value


# -- answers --------------------------------------------------------------------------------------

PULL = "a pull request"


def pull_fields(raw: Any) -> dict[str, Any]:
    """The fields of a PRMeta from a pull request's JSON (GitHub's answer, or the cache's slim copy)."""
    pr = _object(raw, PULL, "the answer")
    number = _number(pr, "number", PULL)
    for side in ("base", "head"):
        _object(_at(pr, side), PULL, side)
    _object(_at(pr, "base.repo"), PULL, "base.repo")
    head_repo = _at(pr, "head.repo")
    if head_repo not in (None, MISSING):
        _object(head_repo, PULL, "head.repo")
    clone_url = _str(pr, "base.repo.clone_url", PULL)
    problem = clone_url_problem(clone_url)
    if problem:
        raise BadPayload(PULL, f"base.repo.clone_url is {problem}")
    merged = _flag(pr, "merged", PULL) or _str(pr, "merged_at", PULL, null=True) is not None
    state = _state(pr, PULL)
    for optional in ("url", "html_url"):
        _str(pr, optional, PULL, null=True, empty=True)
    return {
        "number": number,
        "title": _str(pr, "title", PULL, null=True, empty=True) or "",
        "body": _str(pr, "body", PULL, null=True, empty=True) or "",
        "state": "merged" if merged else state,
        "merged": merged,
        "merge_commit_sha": _sha(pr, "merge_commit_sha", PULL, null=True),
        "base_ref": _str(pr, "base.ref", PULL),
        "base_sha": _sha(pr, "base.sha", PULL),
        "head_ref": _str(pr, "head.ref", PULL),
        "head_sha": _sha(pr, "head.sha", PULL),
        "head_repo": _str(pr, "head.repo.full_name", PULL, null=True),
        "default_branch": _str(pr, "base.repo.default_branch", PULL),
        "clone_url": clone_url,
        "html_url": _str(pr, "html_url", PULL, null=True, empty=True) or "",
    }


def listed_pull(item: Any) -> tuple[int, str]:
    """(number, state) of one entry of the pull list."""
    pr = _object(item, "a list of pull requests", "it")
    return _number(pr, "number", "a list of pull requests"), _state(pr, "a list of pull requests")


def page(data: Any, expected: str, item: Callable[[Any], T]) -> list[T]:
    """One page of a list answer, each entry checked by `item` (the field named with its index)."""
    if not isinstance(data, list):
        raise BadPayload(expected, f"the answer is {kind(data)}, not a list")
    out = []
    for index, entry in enumerate(data):
        try:
            out.append(item(entry))
        except BadPayload as exc:
            raise BadPayload(exc.expected, f"entry {index}: {exc.detail}") from None
    return out
