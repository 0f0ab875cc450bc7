"""Flags are the command line's words: the library names its inputs, the CLI words them as flags."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from prstack.cli.app import _command
from prstack.cli.support import as_flag
from prstack.errors import InputError, Option
from prstack.targets.wheel import WheelTarget

SRC = Path(__file__).resolve().parents[2] / "src" / "prstack"
OUTPUT_TEXT = ("render", "demo")
"""Parts whose strings are report or demo text a reader runs, not messages of errors."""


def _flags() -> set[str]:
    found: set[str] = set()
    todo = [_command()]
    while todo:
        command = todo.pop()
        found |= {o for p in command.params for o in p.opts if o.startswith("--")}
        todo += list(getattr(command, "commands", {}).values())
    return found


def _strings(tree: ast.AST) -> Iterator[ast.Constant]:
    """Every string constant of `tree` that is not a docstring (a string standing as a statement)."""
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node


def _library_modules() -> Iterator[Path]:
    for path in sorted(SRC.rglob("*.py")):
        if path.relative_to(SRC).parts[0] not in ("cli", *OUTPUT_TEXT):
            yield path


@pytest.mark.slow
def test_no_message_outside_the_cli_names_a_flag() -> None:
    """A sentence (a string with a space that is not a git command line) naming one of prstack's
    flags is a message about the command line, and belongs to cli/."""
    flags = _flags()
    assert {"--wheel", "--git", "--repo"} <= flags
    naming = []
    for path in _library_modules():
        for node in _strings(ast.parse(path.read_text())):
            text = node.value
            if " " not in text.strip() or text.startswith(("git ", "diff --git", "-")):
                continue
            if found := [f for f in re.findall(r"(?<![\w-])--[a-z][a-z-]*", text) if f in flags]:
                naming.append(f"{path.relative_to(SRC)}:{node.lineno}: {found}")
    assert naming == []


@pytest.mark.slow
def test_every_input_a_message_names_is_a_flag_of_the_cli() -> None:
    flags = _flags()
    named = {node.args[0].value for path in _library_modules() for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Option"
             and node.args and isinstance(node.args[0], ast.Constant)}
    assert len(named) > 10
    assert sorted(n for n in named if as_flag(Option(n)) not in flags) == []


def test_a_python_caller_is_told_the_input_and_the_cli_its_flag(tmp_path: Path) -> None:
    with pytest.raises(InputError) as raised:
        WheelTarget(tmp_path / "gone-1.0-py3-none-any.whl")
    assert "--wheel" not in str(raised.value) and str(raised.value).startswith("`wheel` ")
    assert raised.value.worded(as_flag).startswith(f"--wheel {tmp_path}")
