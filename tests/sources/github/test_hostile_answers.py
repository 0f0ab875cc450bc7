"""Hostile GitHub answers from the local server (tests/helpers/ghserver.py): fields of the wrong JSON type, invalid or
deeply nested JSON, list answers of the wrong shape, rate limits of every shape, redirects, odd --api-url values
and clone URLs with credentials: each one line on stderr and exit 2, naming the field or what to do."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.ghserver import GitHubServer, serve_stack
from prstack.cli import main
from prstack.errors import InputError, SourceError
from prstack.placement.forge import RepoId
from prstack.sources.github import payload
from prstack.sources.github.access import Access, Backoff
from prstack.sources.github.api import GitHub
from prstack.sources.github.cache import Cache
from prstack.sources.github.urls import api_root, clone_url_problem, scrub

FAST = Backoff(retries=1, factor=0)
PULL_2 = r"/pulls/2$"
PULLS = r"/pulls$"


@pytest.fixture
def srv(upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHubServer]:
    """The server for the test stack, a fresh cache, no token and no `gh` to ask for one."""
    monkeypatch.setenv("PRSTACK_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "PRSTACK_REPO", "PRSTACK_HTTP_DEADLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(tmp_path)
    server = serve_stack(upstream)
    yield server
    server.stop()


def one_line(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    """Run the CLI; it must exit 2 with one line on stderr (rich may wrap it: joined) and nothing on stdout."""
    code = main(args)
    out = capsys.readouterr()
    err = out.err.replace("\n", " ").strip()
    assert code == 2, (code, out.err)
    assert err.startswith("prstack: error: ") and err.count("prstack:") == 1, out.err
    assert "Traceback" not in out.err and "internal error" not in err, out.err
    assert out.out == ""
    return err


def audit_args(server: GitHubServer | None, tmp_path: Path, *extra: str) -> list[str]:
    api = ["--api-url", server.base_url] if server is not None else []
    return ["audit", "2", "--repo", "acme/widget", *api, "--tree", str(tmp_path), *extra]


# -- a pull request's fields of the wrong JSON type --------------------------------------------------------


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(pr: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = pr
        for part in parents:
            node = node[part]
        if value is KeyError:
            del node[last]
        else:
            node[last] = value

    return mutate


WRONG_FIELDS = [
    ("body", 5, "body is a number, not a string"),
    ("title", ["a"], "title is a list, not a string"),
    ("title", {"a": 1}, "title is an object, not a string"),
    ("number", "2", "number is a string, not a PR number"),
    ("number", True, "number is true, not a PR number"),
    ("number", -2, "number is a number, not a PR number"),
    ("head", KeyError, "head is missing, not an object"),
    ("head", "feature-b", "head is a string, not an object"),
    ("head.sha", 12, "head.sha is a number, not a commit sha"),
    ("head.sha", "--upload-pack=touch x", "head.sha is '--upload-pack=touch x', not a commit sha"),
    ("head.ref", None, "head.ref is null, not a non-empty string"),
    ("head.repo", [], "head.repo is a list, not an object"),
    ("base.sha", KeyError, "base.sha is missing, not a commit sha"),
    ("base.repo", None, "base.repo is null, not an object"),
    ("base.repo.default_branch", 0, "base.repo.default_branch is a number"),
    ("base.repo.clone_url", "http://[::1", "base.repo.clone_url is not a URL"),
    ("base.repo.clone_url", "ext::sh", "base.repo.clone_url is not an https, http, ssh"),
    ("base.repo.clone_url", "-uevil", "base.repo.clone_url is not a URL"),
    ("merged", "yes", "merged is a string, not true or false"),
    ("state", "weird", "state is 'weird', not open or closed"),
    ("merge_commit_sha", 7, "merge_commit_sha is a number, not a commit sha"),
    ("html_url", 3.5, "html_url is a number, not a string"),
]


@pytest.mark.parametrize(("path", "value", "named"), WRONG_FIELDS, ids=[f"{p}={v!r}" for p, v, _ in WRONG_FIELDS])
@pytest.mark.slow
def test_a_field_of_the_wrong_type_is_one_line_naming_it(
    srv: GitHubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, value: Any, named: str
) -> None:
    pr = srv.pr_json(srv.prs[2])
    _set(path, value)(pr)
    srv.fail(PULL_2, 200, times=5, body=pr)
    err = one_line(capsys, audit_args(srv, tmp_path))
    assert "GitHub's answer for PR #2 of acme/widget is not a pull request: " in err
    assert named in err and "check --api-url" in err
    assert not list((tmp_path / "cache").rglob("pulls/2.json"))  # nothing of it cached


def test_the_answer_for_another_pr_is_refused(srv: GitHubServer, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    srv.fail(PULL_2, 200, body=srv.pr_json(srv.prs[1]))
    assert "GitHub answered PR #1 when asked for PR #2" in one_line(capsys, audit_args(srv, tmp_path))


def _valid_pr() -> dict[str, Any]:
    repo = {"full_name": "acme/widget", "default_branch": "main", "clone_url": "https://github.com/acme/widget.git"}
    return {
        "url": "https://api.github.com/repos/acme/widget/pulls/2", "html_url": "https://github.com/acme/widget/pull/2",
        "number": 2, "title": "t", "body": None, "state": "open", "merged": False, "merged_at": None,
        "merge_commit_sha": None, "head": {"ref": "b", "sha": "a" * 40, "repo": repo},
        "base": {"ref": "main", "sha": "b" * 40, "repo": dict(repo)},
    }


_FIELDS = ["number", "title", "body", "state", "merged", "merged_at", "merge_commit_sha", "html_url", "url", "head",
           "base", "head.ref", "head.sha", "head.repo", "head.repo.full_name", "base.ref", "base.sha", "base.repo",
           "base.repo.default_branch", "base.repo.clone_url"]
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(_FIELDS), _JSON | st.just(KeyError)), min_size=1, max_size=3))
@pytest.mark.slow
def test_any_json_in_any_field_parses_or_names_the_field(changes: list[tuple[str, Any]]) -> None:
    pr = _valid_pr()
    for path, value in changes:
        try:
            _set(path, value)(pr)
        except (KeyError, TypeError):
            continue  # a parent an earlier change removed or replaced
    try:
        fields = payload.pull_fields(copy.deepcopy(pr))
    except payload.BadPayload as exc:
        assert exc.expected == "a pull request"
        assert any(exc.detail.startswith(f) for f in ("the answer", *_FIELDS)), exc.detail
        return
    assert isinstance(fields["number"], int) and isinstance(fields["title"], str)
    assert all(isinstance(fields[k], str) and fields[k] for k in ("head_sha", "base_sha", "base_ref", "clone_url"))
    json.dumps(fields)  # what the cache stores of it is plain JSON


# -- invalid and deeply nested JSON, list answers of the wrong shape ----------------------------------------

BAD_BODIES = {
    "invalid": (b'{"number":', "is not valid JSON: Expecting value"),
    "deep-array": (b"[" * 100_000, "is not valid JSON: it is nested too deeply"),
    "deep-object": (b'{"a":' * 100_000, "is not valid JSON: it is nested too deeply"),
    "empty": (b"", "is not valid JSON: the answer is empty"),
    "not-json": (b"<html>hello</html>", "is not valid JSON"),
    "huge-int": (b"1" * 5000, "is not valid JSON: Exceeds the limit"),
    "null": (b"null", "is not a pull request: the answer is null, not an object"),
    "a-list": (b"[1, 2]", "is not a pull request: the answer is a list, not an object"),
}


@pytest.mark.parametrize("case", sorted(BAD_BODIES))
@pytest.mark.slow
def test_invalid_or_deep_json_is_one_line(srv: GitHubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          case: str) -> None:
    body, said = BAD_BODIES[case]
    srv.fail(PULL_2, 200, times=5, body=body)
    err = one_line(capsys, audit_args(srv, tmp_path))
    assert "GitHub's answer for PR #2 of acme/widget " in err and said in err


BAD_LISTS = {
    "an-object": ({"items": []}, "is not a list of pull requests: the answer is an object, not a list"),
    "numbers": ([1, 2], "entry 0: it is a number, not an object"),
    "number-as-text": ("number", "entry 0: number is a string, not a PR number"),
    "no-state": ("state", "entry 0: state is missing, not open or closed"),
    "deep": (b"[" * 50_000, "is not valid JSON: it is nested too deeply"),
    "invalid": (b"[{]", "is not valid JSON"),
}


@pytest.mark.parametrize("case", sorted(BAD_LISTS))
@pytest.mark.slow
def test_a_pull_list_of_the_wrong_shape_is_one_line(srv: GitHubServer, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str], case: str) -> None:
    body, said = BAD_LISTS[case]
    if body == "number":
        body = [{**srv.pr_json(srv.prs[1]), "number": "1"}]
    elif body == "state":
        body = [{k: v for k, v in srv.pr_json(srv.prs[1]).items() if k != "state"}]
    srv.fail(PULLS, 200, body=body)  # (PR #2's base branch is PR #1's head: the list is asked for it)
    err = one_line(capsys, audit_args(srv, tmp_path))
    assert "GitHub's answer for the PR of branch 'feature-a' of acme/widget " in err and said in err


def test_pages_on_to_another_host_or_without_end(srv: GitHubServer, tmp_path: Path) -> None:
    gh = GitHub(RepoId("acme", "widget"), Cache(tmp_path / "c1"), Access(api_url=srv.base_url, backoff=FAST))
    srv.fail(PULLS, 200, headers={"Link": '<https://evil.example/api/v3/x?page=2>; rel="next"'}, body=[])
    with pytest.raises(SourceError, match=r"pages on to another host \('evil.example'\); check `api_url`"):
        gh.pull_of_branch("feature-a")
    srv.log.clear()
    again = f'<{srv.base_url}/repos/acme/widget/pulls?state=all&page=2>; rel="next"'
    srv.fail(PULLS, 200, times=1000, headers={"Link": again}, body=[])  # a next page, always
    assert GitHub(RepoId("acme", "widget"), Cache(tmp_path / "c2"), Access(api_url=srv.base_url,
                  backoff=FAST)).pull_of_branch("feature-a") is None
    assert len(srv.api_requests()) == 10  # bounded, not endless


# -- rate limits of every shape ------------------------------------------------------------------------------

RATE_LIMITS = {
    "403-remaining-0": (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1999999999"}, None, "resets at"),
    "403-reset-huge": (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "9" * 20}, None,
                       "retry in a minute or more"),
    "403-reset-before-now": (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "5"}, None, "(in 0 min)"),
    "429-bare": (429, {}, b"", "retry in a minute or more"),
    "429-retry-after": (429, {"Retry-After": "60"}, None, "retry after 60 s (at "),
    "429-retry-after-date": (429, {"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}, None, "resets at 07:28 UTC"),
    "429-retry-after-garbage": (429, {"Retry-After": "9" * 40}, None, "retry in a minute or more"),
    "403-secondary": (403, {"Retry-After": "120"},
                      {"message": "You have exceeded a secondary rate limit. Please wait."}, "retry after 120 s"),
    "403-no-headers": (403, {}, None, "retry in a minute or more"),
}


@pytest.mark.parametrize("case", sorted(RATE_LIMITS))
@pytest.mark.parametrize("where", [PULL_2, PULLS])
@pytest.mark.slow
def test_a_rate_limit_is_one_line_naming_when_to_retry(srv: GitHubServer, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str], case: str,
                                                       where: str) -> None:
    status, headers, body, when = RATE_LIMITS[case]
    srv.fail(where, status, times=5, headers=headers,
             body=body if body is not None else {"message": "API rate limit exceeded for 127.0.0.1."})
    err = one_line(capsys, audit_args(srv, tmp_path))
    assert "rate limit is exhausted" in err and when in err, err
    assert ("PR #2" if where == PULL_2 else "the PR of branch 'feature-a'") in err
    assert "\x1b" not in err


@pytest.mark.parametrize("headers", [{"X-RateLimit-Reset": "soon\x1b[2J"},
                                     {"X-RateLimit-Remaining": "0", "X-RateLimit-Limit": "lots"}])
def test_rate_limit_headers_pygithub_cannot_read_are_one_line(srv: GitHubServer, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str],
                                                             headers: dict[str, str]) -> None:
    # PyGithub reads these headers itself (int(float(...))) before prstack sees the status: the line says so
    srv.fail(PULL_2, 403, headers=headers, body={"message": "API rate limit exceeded"})
    err = one_line(capsys, audit_args(srv, tmp_path))
    assert "GitHub's answer for PR #2 of acme/widget could not be read (ValueError: " in err and "\x1b" not in err


@pytest.mark.slow
def test_error_bodies_of_any_shape(srv: GitHubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for status, body, said in [(403, [1], "denied access to PR #2 of acme/widget (403);"),
                               (403, {"message": ["rate limit"]}, "(403);"),
                               (404, b"{" * 100_000, "PR #2 of acme/widget not found"),
                               (500, b"[" * 100_000, "GitHub failed (500) for PR #2")]:
        srv.fail(PULL_2, status, times=5, body=body)
        assert said in one_line(capsys, audit_args(srv, tmp_path))
        srv.faults.clear()


# -- redirects, and nothing but the one line on stderr ----------------------------------------------------

def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The installed CLI, as a user runs it."""
    exe = Path(sys.executable).with_name("prstack")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=120)


@pytest.mark.parametrize(("faults", "said"), [
    ([(301, "http://evil.example/api/v3/x")], "it redirects to another host, protocol or to itself"),
    ([(301, "{api}/repos/acme/widget/pulls/3"), (301, "{api}/repos/acme/widget/pulls/2")],
     "it redirects in a loop"),
    ([(302, "https://evil.example/x")], "with a redirect (302 to https://evil.example/x)"),
    ([(200, "")], "is not a pull request: the answer is a list"),
])
@pytest.mark.slow
def test_hostile_answers_leave_one_line_on_stderr_of_the_installed_cli(
    srv: GitHubServer, tmp_path: Path, faults: list[tuple[int, str]], said: str
) -> None:
    for status, location in faults:
        if status == 200:
            srv.fail(PULL_2, 200, times=10, body=[{"message": "x"}])
            continue
        path = PULL_2 if location.endswith("/3") or "evil" in location else r"/pulls/3$"
        srv.fail(path, status, times=5000, headers={"Location": location.format(api=srv.base_url)}, body=b"")
    env = {"PRSTACK_CACHE_DIR": str(tmp_path / "cache"), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
           "PYTHONWARNINGS": "always", "GITHUB_TOKEN": "", "GH_TOKEN": ""}
    done = _run(*audit_args(srv, tmp_path), env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr  # no library log line, warning or usage panel beside it
    assert said in done.stderr and "Traceback" not in done.stderr


# -- odd --api-url values, credentials in URLs ----------------------------------------------------------------

ODD_API_URLS = {
    "http://[::1": "is not a URL",
    "https://user:pw@[::1": "is not a URL",
    "http://127.0.0.1:99999/api": "is not a URL",
    "http://a b/api/v3": "is not a URL",
    "ftp://x": "is not an https:// (or http://) URL",
    "": "is not an https:// (or http://) URL",
    "ghe.example/api/v3": "is not an https:// (or http://) URL",
    "https://": "names no host",
    "http:///api/v3": "names no host",
    "https://tok:x-oauth@ghe.example/api/v3": "holds credentials; remove them and set GITHUB_TOKEN",
    "https://ghe.example/api/v3?x=1": "has a query or fragment",
}


@pytest.mark.parametrize("url", sorted(ODD_API_URLS))
@pytest.mark.slow
def test_an_odd_api_url_is_one_line(srv: GitHubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    url: str) -> None:
    err = one_line(capsys, [*audit_args(None, tmp_path), "--api-url", url])
    assert "the GitHub API URL " in err and ODD_API_URLS[url] in err
    assert "pw" not in err and "x-oauth" not in err
    assert srv.log == []  # refused before any request


def test_api_root_keeps_what_is_fine() -> None:
    assert api_root("https://ghe.example/api/v3/") == "https://ghe.example/api/v3"
    assert api_root("http://127.0.0.1:8080/api/v3") == "http://127.0.0.1:8080/api/v3"
    with pytest.raises(InputError):
        GitHub(RepoId("a", "b"), Cache(Path("/nonexistent")), Access(api_url="ftp://x"))


@pytest.mark.parametrize(("text", "shown"), [
    ("fetch from https://user:pw@github.com/a/b.git (x)", "fetch from https://***@github.com/a/b.git (x)"),
    ("https://ghp_abc123@ghe.corp/x and git://u:p@h/y", "https://***@ghe.corp/x and git://***@h/y"),
    ("ssh://git@github.com/a/b", "ssh://***@github.com/a/b"),
    ("mail me@example.com, see https://h/p@q", "mail me@example.com, see https://h/p@q"),
])
def test_scrub_removes_every_urls_credentials(text: str, shown: str) -> None:
    assert scrub(text) == shown


def test_a_clone_url_with_credentials_is_never_shown(srv: GitHubServer, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    pr = srv.pr_json(srv.prs[2])
    pr["base"]["repo"]["clone_url"] = "https://user:s3cret@127.0.0.1:1/acme/widget.git"
    srv.fail(PULL_2, 200, body=pr)
    err = one_line(capsys, audit_args(srv, tmp_path))
    assert "cannot fetch from https://***@127.0.0.1:1/acme/widget.git" in err
    assert "s3cret" not in err and "user:" not in err


@pytest.mark.parametrize(("url", "problem"), [
    ("https://github.com/a/b.git", None), ("file:///tmp/x", None), ("ssh://git@github.com/a/b", None),
    ("ext::sh -c x", "not a URL"), ("fd::3", "not an https, http, ssh, git or file URL"), ("-oProxy", "not a URL"),
    ("https:///a", "a URL without a host"), ("http://[::1", "not a URL"), ("https://h/a\nb", "not a URL"),
])
def test_clone_urls_git_may_fetch_from(url: str, problem: str | None) -> None:
    assert clone_url_problem(url) == problem


def test_the_compare_answer_goes_through_the_same_checks(srv: GitHubServer, tmp_path: Path) -> None:
    gh = GitHub(RepoId("acme", "widget"), Cache(tmp_path / "c"), Access(api_url=srv.base_url, backoff=FAST))
    srv.fail(r"/compare/", 200, body=b"[" * 100_000)
    with pytest.raises(SourceError, match=r"answer for the merge base of a{12} .* is not valid JSON: it is nested"):
        gh.fork_point("b" * 40, "a" * 40)
    srv.fail(r"/compare/", 200, body={"merge_base_commit": {"sha": 5}})
    assert gh.fork_point("b" * 40, "a" * 40) is None  # (a malformed merge base: the whole history is fetched)
