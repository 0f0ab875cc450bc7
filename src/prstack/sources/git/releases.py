"""A clone's release tags in version order, and the blob of each file at any of its commits from one
`git cat-file --batch` stream of trees (trees are read, never checked out; no blob is read)."""

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
    """The blob id of each (commit, path), in order, as the tree of the path's folder at the commit
    lists it (one `git cat-file --batch` of those trees: no blob is read, so a clone lacking blobs
    answers without fetching any); None where the path is no file there (absent, a folder, a
    submodule)."""
    wanted = [(rev, path) for rev, path in names if "\n" not in path]
    if not wanted:
        return [None] * len(names)
    folders = list(dict.fromkeys((rev, path.rpartition("/")[0]) for rev, path in wanted))
    # ("REV:FOLDER/" names a folder only: where FOLDER is a file there, git says it is missing
    # without reading that file's blob)
    data = "".join(f"{rev}:{folder}/\n" if folder else f"{rev}:\n" for rev, folder in folders)
    out = run_git(git.path, ["cat-file", "--batch"], git.env, data.encode("utf-8", "surrogateescape"))
    listed = dict(zip(folders, _trees(out), strict=False))
    found: dict[tuple[str, str], str | None] = {}
    for rev, path in wanted:
        folder, _, name = path.rpartition("/")
        found[(rev, path)] = listed.get((rev, folder), {}).get(name.encode("utf-8", "surrogateescape"))
    return [found.get(key) for key in names]


_FILE_MODES = (b"100644", b"100755", b"120000")
"""Tree entry modes of files (a symbolic link's target is a blob too): not folders nor submodules."""


def _trees(out: bytes) -> list[dict[bytes, str]]:
    """For each object `git cat-file --batch` wrote, in order: the files its tree lists (name -> blob
    id); nothing for a name that is no tree (missing, a file)."""
    trees: list[dict[bytes, str]] = []
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        header = out[at:end].split(b" ")
        at = end + 1
        if len(header) != 3 or not header[2].isdigit():  # "NAME missing" (or ambiguous)
            trees.append({})
            continue
        body, at = out[at:at + int(header[2])], at + int(header[2]) + 1
        trees.append(_files(body, len(header[0]) // 2) if header[1] == b"tree" else {})
    return trees


def _files(tree: bytes, oid_bytes: int) -> dict[bytes, str]:
    """name -> blob id of the files a raw tree object lists (entries "MODE NAME\\0" + the binary id)."""
    files = {}
    at = 0
    while at < len(tree):
        nul = tree.index(b"\0", at)
        mode, _, name = tree[at:nul].partition(b" ")
        if mode in _FILE_MODES:
            files[name] = tree[nul + 1:nul + 1 + oid_bytes].hex()
        at = nul + 1 + oid_bytes
    return files
