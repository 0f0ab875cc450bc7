"""The README and docs/ stay true: the README is short and links every page, links resolve, and every
prstack command shown parses against prstack's own command line (the ones that run offline are run)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from prstack.cli.app import _command, main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FRESH_MACHINE = ["pip install -e . && prstack demo", "pip install -e '.[test]' && pytest -n 2"]
_START = re.compile(r"(?:^|&&|\|\||;|\||\$|\brun:|\bRUN\b|\buvx\b)\s*((?:python -m )?prstack(?=\s|$).*)")
_STOP = frozenset({"&&", "||", ";", "|", ">", ">>", "<", "2>", "&"})
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def code_lines(text: str) -> list[str]:
    """The lines of a page's code blocks (indented by four spaces, or fenced), continuations joined."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            if out and out[-1].endswith("\\"):
                out[-1] = out[-1][:-1] + " " + line.strip()
            else:
                out.append(line.strip())
    return out


def commands(text: str) -> list[list[str]]:
    """Each prstack command of a page's code blocks, as the words after `prstack` (up to a shell
    operator, comments dropped)."""
    found = []
    for line in code_lines(text):
        for part in re.split(r"(?<=\s)(?=&&|\|\||;\s|\|\s)", line):
            m = _START.search(part)
            if m is None:
                continue
            words = shlex.split(m.group(1), comments=True)
            words = words[words.index("prstack") + 1:]
            found.append(words[: next((i for i, w in enumerate(words) if w in _STOP), len(words))])
    return found


def every_command() -> list[tuple[str, list[str]]]:
    return [(page.name, words) for page in PAGES for words in commands(page.read_text())]


def test_the_readme_is_short_starts_with_the_fresh_machine_commands_and_links_every_page() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    assert code_lines(text)[:2] == FRESH_MACHINE
    for page in PAGES[1:]:
        assert f"(docs/{page.name})" in text, page.name
    assert "prstack audit 40898 --installed" in code_lines(text)


def _anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    heads = re.findall(r"^#+ (.+)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def test_every_relative_link_and_anchor_resolves() -> None:
    for page in PAGES:
        for target in _LINK.findall(page.read_text()):
            if target.startswith(("http://", "https://")):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            assert dest.exists(), f"{page.name}: {target}"
            if anchor:
                assert anchor in _anchors(dest.read_text()), f"{page.name}: {target}"


def test_the_pages_show_the_main_commands() -> None:
    shown = {words[0] for _, words in every_command() if words and not words[0].startswith("-")}
    assert {"audit", "graph", "hunks", "plan", "upkeep", "fetch", "demo", "cache"} <= shown


@pytest.mark.parametrize(("page", "words"), every_command(), ids=lambda v: v if isinstance(v, str) else " ".join(v))
@pytest.mark.slow
def test_each_command_shown_parses(page: str, words: list[str]) -> None:
    """Its command and subcommand exist; its options exist and take the values shown (formats, paths)."""
    if words and words[0].startswith("-"):
        assert words[0] in ("--version", "--help", "-h", "--install-completion"), words
        return
    group = _command()
    command, name, rest = group, "prstack", list(words)
    while hasattr(command, "commands") and rest and not rest[0].startswith("-"):
        name = rest.pop(0)
        assert name in command.commands, f"{page}: no command {name!r} in {words}"
        command = command.commands[name]
    command.make_context(name, rest)  # raises on an unknown option or a value the option refuses


OFFLINE = [["--version"], ["demo"], ["cache", "info"], ["cache", "clear"]]
"""The commands shown that run with no network, no clone and no environment of the user's."""


@pytest.mark.slow
def test_the_commands_that_run_offline_are_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PRSTACK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    shown = [words for _, words in every_command()]
    for words in OFFLINE:
        assert words in shown, words
        code = main(list(words))
        out = capsys.readouterr()
        assert code == (1 if words == ["demo"] else 0), (words, out.err)
        assert out.err == "" or words == ["demo"]
    assert "prstack demo" in " ".join(FRESH_MACHINE)
    done = subprocess.run([sys.executable, "-m", "prstack", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("prstack ")


def test_a_command_with_a_wrong_option_would_fail_the_check() -> None:
    """The check itself: an option prstack does not have, or a format it does not write, is refused."""
    with pytest.raises(Exception, match="--no-such-option"):
        test_each_command_shown_parses("x", ["audit", "1", "--installed", "--no-such-option"])
    with pytest.raises(Exception, match="mermaid"):
        test_each_command_shown_parses("x", ["audit", "1", "--installed", "--format", "mermaid"])
    assert commands("    curl -sL URL | prstack audit --patch - --tree t  # why\n") == [
        ["audit", "--patch", "-", "--tree", "t"]]
