"""The carried set a project declares: `[tool.prstack]` in pyproject.toml, or prstack.toml (the same
keys at its top level), read with tomllib.

    [tool.prstack]
    repository = "vllm-project/vllm"     # upstream (OWNER/NAME)
    distribution = "vllm"                # the distribution it ships
    git = "../vllm"                      # a clone of it (relative to this file); --git overrides
    releases = "v*"                      # which tags are releases (default: tags that are versions)

    [[tool.prstack.carry]]
    pr = 40727
    note = "drop once upstream ships it"

    [[tool.prstack.carry]]
    patch = "patches/0002-fix-rope.patch"   # relative to this file
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prstack.errors import InputError, Option

MANIFEST_NAMES = ("prstack.toml", "pyproject.toml")


@dataclass(frozen=True)
class Manifest:
    """What a manifest says; paths made absolute from the manifest's folder."""

    path: Path
    repository: str | None = None
    distribution: str | None = None
    git: Path | None = None
    releases: str | None = None
    numbers: tuple[int, ...] = ()
    patches: tuple[str, ...] = ()
    notes: dict[str, str] = field(default_factory=dict)
    """"#N" or the patch's path as given to the patch reader -> the note."""


def find_manifest(folder: Path) -> Path:
    """prstack.toml in `folder`, else its pyproject.toml when that has a [tool.prstack] table."""
    for name in MANIFEST_NAMES:
        path = folder / name
        if path.is_file() and (name == "prstack.toml" or "prstack" in _table(path, _load(path)).get("_found", {})):
            return path
    raise InputError("no carried set: give PR numbers or ", Option("patch"),
                     f" FILE, or declare them in {folder / 'prstack.toml'} "
                     "or under [tool.prstack] in pyproject.toml (see docs/upkeep.md).")


def read_manifest(path: Path) -> Manifest:
    """The manifest at `path` (prstack.toml, or pyproject.toml's [tool.prstack])."""
    table = _table(path, _load(path))
    if "_found" in table:
        table = table["_found"]["prstack"]
    where = f"{path}"
    known = {"repository", "distribution", "git", "releases", "carry"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}; the keys are {', '.join(sorted(known))}.")
    folder = path.parent
    carry = table.get("carry", [])
    if not isinstance(carry, list) or not all(isinstance(c, dict) for c in carry):
        raise InputError(f"{where}: `carry` must be an array of tables ([[tool.prstack.carry]] with pr or patch).")
    numbers: list[int] = []
    patches: list[str] = []
    notes: dict[str, str] = {}
    for at, entry in enumerate(carry, 1):
        pr, patch, note = entry.get("pr"), entry.get("patch"), entry.get("note")
        extra = sorted(set(entry) - {"pr", "patch", "note"})
        if extra or (pr is None) == (patch is None):
            raise InputError(f"{where}: carried item {at} needs exactly one of `pr` (a number) or `patch` (a "
                             f"path), and may have a `note`{'; unknown: ' + ', '.join(extra) if extra else ''}.")
        if note is not None and not isinstance(note, str):
            raise InputError(f"{where}: carried item {at}'s note must be a string.")
        if pr is not None:
            if isinstance(pr, bool) or not isinstance(pr, int) or pr < 1:
                raise InputError(f"{where}: carried item {at}'s pr must be a positive number, not {pr!r}.")
            numbers.append(pr)
            key = f"#{pr}"
        else:
            if not isinstance(patch, str) or not patch:
                raise InputError(f"{where}: carried item {at}'s patch must be a path.")
            key = str(folder / patch)
            patches.append(key)
        if note:
            notes[key] = note
    return Manifest(path, _text(table, "repository", where), _text(table, "distribution", where),
                    folder / g if (g := _text(table, "git", where)) else None, _text(table, "releases", where),
                    tuple(numbers), tuple(patches), notes)


def _load(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}.") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path} is not valid TOML ({exc}); fix it.") from None


def _table(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """prstack.toml's top level; pyproject.toml's [tool] (under `_found`) when it has `prstack`."""
    if path.name != "pyproject.toml":
        return data
    tool = data.get("tool", {})
    if not isinstance(tool, dict) or not isinstance(tool.get("prstack"), dict):
        return {}
    return {"_found": tool}


def _text(table: dict[str, Any], name: str, where: str) -> str | None:
    value = table.get(name)
    if value is not None and not isinstance(value, str):
        raise InputError(f"{where}: `{name}` must be a string.")
    return value
