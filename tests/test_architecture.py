"""The shape of the code: which part may import which, and names and signatures that stay small."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "prstack"

FLOORS: dict[str, int] = {
    # values every part shares
    "errors": 1, "models": 1, "progress": 1, "schemas": 1, "files": 1,
    # pure knowledge: the PR graph, diff text, where a repository path lands and which repository it is
    "stack": 2, "diff": 2, "placement": 2,
    # what is installed, and what its build's metadata says
    "targets": 3,
    # judging hunks against target text, and the report it makes
    "match": 5,
    # where PRs come from
    "sources": 6,
    # the audit: a PR source against a target
    "audit": 7,
    # what is built on the audit
    "plan": 8, "upkeep": 8, "demo": 8,
    # output formats
    "render": 9,
    # the command line
    "cli": 10, "__main__": 12, "__init__": 12,
}
"""Each part of src/prstack (a module or a package) and its floor: a part imports only from its
own floor or below."""


def _part(module: str) -> str:
    """prstack.sources.git.repo -> sources"""
    return module.split(".")[1] if module.count(".") else "__init__"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        out[name] = path
    return out


def _imports(name: str, path: Path) -> set[str]:
    """Every prstack module `name` imports, at the top, inside functions or for type checking."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("prstack.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module == "prstack" or module.startswith("prstack."):
                found.add(module)
    return found


def test_every_part_has_a_floor() -> None:
    assert {_part(name) for name in _modules()} <= set(FLOORS)


@pytest.mark.slow
def test_no_part_imports_from_a_floor_above_its_own() -> None:
    upward = sorted(f"{name} -> {imported}" for name, path in _modules().items() for imported in _imports(name, path)
                    if imported != "prstack" and FLOORS[_part(imported)] > FLOORS[_part(name)])
    assert upward == []


@pytest.mark.slow
def test_parts_import_each_other_without_a_cycle() -> None:
    edges: defaultdict[str, set[str]] = defaultdict(set)
    for name, path in _modules().items():
        for imported in _imports(name, path):
            if imported != "prstack" and _part(imported) != _part(name):
                edges[_part(name)].add(_part(imported))
    done: set[str] = set()

    def cycle_from(part: str, trail: tuple[str, ...]) -> tuple[str, ...] | None:
        if part in trail:
            return (*trail, part)
        if part in done:
            return None
        for nxt in sorted(edges[part]):
            if (found := cycle_from(nxt, (*trail, part))) is not None:
                return found
        done.add(part)
        return None

    assert [c for part in sorted(edges) if (c := cycle_from(part, ())) is not None] == []


MAX_PARAMETERS = 6
"""Past this many, a function's parameters are asking to be a named value."""


@pytest.mark.slow
def test_no_function_takes_more_than_six_parameters() -> None:
    """Counted without self, cls and `*`; the CLI's command functions, whose parameters are its
    options, aside."""
    many = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            args = node.args
            names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
            names = [n for n in names if n not in ("self", "cls")]
            command = name.startswith("prstack.cli.") and any(
                isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "command"
                for d in node.decorator_list)
            if len(names) > MAX_PARAMETERS and not command:
                many.append(f"{name}.{node.name}: {len(names)}")
    assert sorted(many) == []
@pytest.mark.slow
def test_no_class_name_is_defined_twice() -> None:
    where: defaultdict[str, list[str]] = defaultdict(list)
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(name)
    assert {cls: places for cls, places in where.items() if len(places) > 1} == {}


MAX_LINES = 400
"""Past this, a module holds more than one idea."""


def test_no_module_is_longer_than_four_hundred_lines() -> None:
    long = {name: n for name, path in _modules().items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_the_top_of_the_package_holds_only_its_face_and_the_shared_ground() -> None:
    """Everything else lives in a package of its own (audit/, cli/, diff/, match/, ...)."""
    top = sorted(p.stem for p in SRC.glob("*.py"))
    assert top == ["__init__", "__main__", "errors", "files", "models", "progress"]
