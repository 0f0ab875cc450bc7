"""A clone's release tags in version order, and the blob of each file at any of its commits from one
`git cat-file --batch-check` stream (trees are read, never checked out)."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from packaging.version import InvalidVersion, Version

from prstack.sources.git.repo import GitClone
from prstack.sources.git.runner import run_git


def version_tags(git: GitClone, pattern: str | None = None) -> list[tuple[str, str]]:
    """(name, commit) of the clone's releases, oldest first: tags matching `pattern` (a glob, as
    `git tag --list` takes), else the tags that parse as versions; in version order (tags that are
    no version, which only a pattern lets in, by their date, after the versions)."""
    out = run_git(git.path, ["for-each-ref", "--format=%(refname:short)%00%(objectname)%00%(*objectname)"
                             "%00%(*objecttype)%00%(objecttype)%00%(creatordate:unix)", "refs/tags"],
                  git.env).decode("utf-8", "surrogateescape")
    rows: list[tuple[tuple[int, Version | None, int], tuple[str, str]]] = []
    for line in out.splitlines():
        fields = line.split("\0")
        if len(fields) != 6:
            continue
        name, obj, peeled, peeled_type, obj_type, date = fields
        commit = peeled if peeled and peeled_type == "commit" else obj if obj_type == "commit" else None
        if commit is None or (pattern is not None and not fnmatch.fnmatchcase(name, pattern)):
            continue
        try:
            version: Version | None = Version(name)
        except InvalidVersion:
            if pattern is None:
                continue
            version = None
        when = int(date) if date.isdigit() else 0
        rows.append(((0, version, when) if version is not None else (1, None, when), (name, commit)))
    versioned = sorted((key, r) for key, r in rows if key[1] is not None)
    others = sorted(((key[2], r[0]), r) for key, r in rows if key[1] is None)
    return [r for _, r in versioned] + [r for _, r in others]


def blobs_at(git: GitClone, names: Sequence[tuple[str, str]]) -> list[str | None]:
    """The blob id of each (commit, path), in order, from one `git cat-file --batch-check`; None
    where the path is no file there (absent, a folder, a submodule)."""
    wanted = [(rev, path) for rev, path in names if "\n" not in path]
    if not wanted:
        return [None] * len(names)
    data = "".join(f"{rev}:{path}\n" for rev, path in wanted).encode("utf-8", "surrogateescape")
    out = run_git(git.path, ["cat-file", "--batch-check=%(objectname) %(objecttype)"], git.env, data)
    answers = out.decode("utf-8", "surrogateescape").split("\n")
    found: dict[tuple[str, str], str | None] = {}
    for key, answer in zip(wanted, answers, strict=False):
        parts = answer.split(" ")
        found[key] = parts[0] if len(parts) == 2 and parts[1] == "blob" else None
    return [found.get(key) for key in names]
