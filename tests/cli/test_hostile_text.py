"""Hostile text from outside: titles through the test GitHub server, commit subjects, file names git
quotes in a diff, and the one escaping function every renderer uses; layouts that once raised."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from conftest import GitRepo
from helpers.ghserver import GitHubServer, build_stack, export_tree
from prstack.cli import main
from prstack.diff.hunks import parse_diff
from prstack.diff.quoting import unquote_git
from prstack.placement.paths import PathMap
from prstack.render.text import clean, safe

HOSTILE = {
    "ansi": ("red \x1b[31mX\x1b[0m", "\x1b", "\\x1b[31mX"),
    "csi-c1": ("c1 \u009b31mX", "\u009b", "\\x9b31mX"),
    "osc-c1": ("osc \u009d8;;http://evil\u009c", "\u009d", "\\x9d8;;"),
    "bidi": ("admin\u202e\u2066 gnp.exe", "\u202e", "\\u202e"),
    "zero-width": ("pay\u200bpal\ufeff", "\u200b", "\\u200b"),
    "emoji": ("ship it :thumbs_up: :rocket:", "\U0001f680", ":rocket:"),
    "markup": ("[bold red]pwned[/] [link=http://evil]x[/link]", None, "[bold red]pwned[/]"),
    "bell-cr": ("ok\a\rfake", "\a", "ok\\x07\\x0dfake"),
    "newline": ("two\nlines", "\n", "two\\x0alines"),
    "surrogate": ("bad \udcff byte", "\udcff", "bad \\xff byte"),
}


def _rendered(text: str) -> str:
    """What a terminal would receive when a renderer prints `text` the ways prstack does."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="truecolor", width=200)
    console.print(safe(text))
    console.print(clean(text), markup=False, highlight=False)
    return out.getvalue()


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_one_escaping_function_neutralises(case: str) -> None:
    text, forbidden, shown = HOSTILE[case]
    escaped = clean(text)
    assert shown in escaped.replace("\u200b", "")  # (the emoji codes' defusing zero-width space)
    out = _rendered(text)
    if forbidden is not None:
        assert forbidden not in escaped
        assert forbidden == "\n" or forbidden not in out
    assert shown.replace("\u200b", "") in out.replace("\u200b", "")
    assert all(ch not in out for ch in "\u009b\u009d\u202e\u2066")
    # whatever the text, the output has only the renderer's own escapes (SGR), and encodes
    out.encode("utf-8")


@given(st.text())
@settings(max_examples=300)
def test_clean_output_is_inert(text: str) -> None:
    escaped = clean(text)
    escaped.encode("utf-8")  # never a lone surrogate
    assert not any(ch < " " and ch != "\t" for ch in escaped)
    assert not any("\x7f" <= ch <= "\x9f" for ch in escaped)
    assert not any(ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f" for ch in escaped)
    assert clean(escaped) == escaped or ":" in escaped  # idempotent but for the emoji defusing


# -- titles through the test GitHub server ----------------------------------------------------------

@pytest.fixture
def hostile_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[GitHubServer, GitRepo]]:
    monkeypatch.setenv("PRSTACK_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "PRSTACK_REPO"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(tmp_path)
    repo = GitRepo(tmp_path / "upstream")
    build_stack(repo)
    server = GitHubServer(repo.path)
    server.add_pr(1, "feature-a", "main", title="".join(t for t, _, _ in HOSTILE.values()), body="[b]x[/b] :skull:")
    server.add_pr(2, "feature-b", "feature-a", title="\u009b2J:rocket: [blink]wipe[/blink] \u202eevil")
    server.start()
    yield server, repo
    server.stop()


@pytest.mark.parametrize("command", ["fetch", "audit-table", "audit-markdown"])
@pytest.mark.slow
def test_hostile_titles_reach_no_renderer_raw(hostile_server: tuple[GitHubServer, GitRepo], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str], command: str) -> None:
    server, repo = hostile_server
    args = ["--repo", "acme/widget", "--api-url", server.base_url]
    if command == "fetch":
        code = main(["fetch", "2", *args])
    else:
        tree = export_tree(repo, "refs/pull/2/head", tmp_path / "tree")
        fmt = command.removeprefix("audit-")
        code = main(["audit", "2", *args, "--tree", str(tree), "--format", fmt, "--verbose"])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    for forbidden in ("\x1b[31mX", "\u009b", "\u009d", "\u202e", "\u2066", "\U0001f680", "\U0001f480", "\a"):
        assert forbidden not in out.out, (forbidden, out.out)
    assert "\\x9b2J" in out.out  # the title is there, escaped
    if command != "audit-markdown":
        assert "[blink]wipe[/blink]" in out.out  # markup shown as typed, never interpreted


@pytest.mark.slow
def test_hostile_titles_are_kept_raw_in_json(hostile_server: tuple[GitHubServer, GitRepo], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    server, repo = hostile_server
    tree = export_tree(repo, "refs/pull/2/head", tmp_path / "tree")
    main(["audit", "2", "--repo", "acme/widget", "--api-url", server.base_url, "--tree", str(tree), "--format",
          "json"])
    data = json.loads(capsys.readouterr().out)
    assert [p["title"] for p in data["prs"]][1] == "\u009b2J:rocket: [blink]wipe[/blink] \u202eevil"


# -- file names git quotes in a diff ----------------------------------------------------------------

NAMES = ["we\tird.py", 'quo"te.py', "back\\slash.py", "new\nline.py", "esc\x1b[31m.py", "caf\u00e9 \u202e.py",
         "sp ace.py", "del\x7f.py"]


@pytest.mark.slow
def test_quoted_file_names_are_audited_and_shown_escaped(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": "", **{f"pkg/{n}": "x = 1\n" for n in NAMES}})
    repo.branch("feature")
    repo.commit("change every odd name", {f"pkg/{n}": "x = 2\n" for n in NAMES})
    repo.pr_ref(7)
    repo.git("checkout", "--quiet", "main")
    tree = export_tree(repo, "refs/pull/7/head", tmp_path / "tree")
    diff = subprocess.run(["git", "-C", str(repo.path), "diff", "main", "refs/pull/7/head"], capture_output=True,
                          check=True).stdout
    assert b'"b/pkg/we\\tird.py"' in diff  # git really quotes them
    assert sorted(h.path for h in parse_diff(diff, 7)) == sorted(f"pkg/{n}" for n in NAMES)
    done = subprocess.run([sys.executable, "-m", "prstack", "audit", "7", "--git", str(repo.path), "--tree",
                           str(tree), "--format", "json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    hunks = json.loads(done.stdout)["hunks"]
    assert sorted((h["path"], h["status"]) for h in hunks) == sorted((f"pkg/{n}", "applied") for n in NAMES)
    text = subprocess.run([sys.executable, "-m", "prstack", "audit", "7", "--git", str(repo.path), "--tree",
                           str(tree), "--verbose"], capture_output=True, text=True, env={"COLUMNS": "300",
                                                                                        "PATH": "/usr/bin:/bin"})
    assert text.returncode == 0, text.stderr
    assert "pkg/new\\x0aline.py" in text.stdout and "\x1b[31m.py" not in text.stdout
    assert "\u202e" not in text.stdout and "\\u202e" in text.stdout


@pytest.mark.parametrize(("quoted", "name"), [
    ('"a/we\\tird.py"', "a/we\tird.py"),
    ('"a/caf\\303\\251.py"', "a/café.py"),
    ('"a/q\\"b\\\\c"', 'a/q"b\\c'),
    ("a/plain.py", "a/plain.py"),
    ('"a/bad\\377"', "a/bad\udcff"),
])
def test_unquote_git(quoted: str, name: str) -> None:
    assert unquote_git(quoted) == name


def test_paths_leaving_the_repository_still_refused() -> None:
    from prstack.errors import InputError

    for bad in ('"a/../../etc/passwd"', '"b/\\000x"'):
        diff = f"diff --git {bad} {bad}\n--- {bad}\n+++ {bad}\n@@ -1 +1 @@\n-a\n+b\n"
        with pytest.raises(InputError, match="leaves the repository"):
            parse_diff(diff, 1)


# -- layouts (the IndexError found by generating them) ---------------------------------------------

_SEG = st.sampled_from(["", ".", "a", "src", "__init__.py", "x.py", "a.so", "k.cu", "b"])
_PATH = st.lists(_SEG, max_size=4).map("/".join)


@given(st.lists(_PATH, max_size=6), st.lists(_PATH, max_size=6), _PATH)
@settings(max_examples=400)
@pytest.mark.slow
def test_any_layout_maps_without_raising(installed: list[str], repo: list[str], query: str) -> None:
    paths = PathMap(installed, repo)
    location = paths.locate(query)
    assert location.installed_path is None or location.installed_path in paths.installed or \
        location.placement.value == "file-missing"
    assert paths.binary_for(query) is None or paths.binary_for(query) in paths.installed


def test_empty_paths_once_raised_index_error() -> None:
    assert PathMap([], []).binary_for("") is None
    assert PathMap(["", "."], ["", "./"]).locate("").placement.value == "not-shipped"
