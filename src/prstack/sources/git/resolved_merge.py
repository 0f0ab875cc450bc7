"""Two commits merged, each conflicted file as the branch's own merge of the default branch resolved
it (that merge's file, less the branch's own edits made before it), else as the first side has it:
the start of a branch's own change when it merged the default branch and that merge conflicted
with its parent's lines, so the branch's later edits of the lines the default branch brought in
are its own change."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from prstack.sources.git.runner import run

__all__ = ["merged_as_resolved"]


def merged_as_resolved(repo: Path, env: Mapping[str, str], sides: tuple[str, str, str],
                        resolutions: Sequence[str] = ()) -> str | None:
    """The tree of `sides` (a, b, their merge base) merged, a conflicted file as one of the merge
    commits `resolutions` resolved it (see `_resolved`), else as `a` has it; None when git cannot
    merge them or a conflicted file is not a regular file at `a`."""
    a, b, _ = sides
    done = run(repo, ["merge-tree", "--write-tree", "--name-only", "--no-messages", a, b], env)
    rows = done.stdout.decode(errors="surrogateescape").splitlines()
    if done.returncode not in (0, 1) or not rows:
        return _merged_by_paths(repo, env, sides, resolutions)
    tree, conflicted = rows[0], list(dict.fromkeys(row for row in rows[1:] if row))
    if done.returncode == 0:
        return tree
    rows = []
    for path in conflicted:
        ours = run(repo, ["rev-parse", "--verify", "--quiet", f"{a}:{path}"], env).stdout.decode().strip()
        blob = _resolved(repo, env, (a, b, path), resolutions) or ours
        mode = run(repo, ["ls-tree", "--format=%(objectmode)", a, "--", path], env).stdout.decode().strip()
        if not blob or mode not in ("100644", "100755"):
            return None
        rows.append(f"{mode} {blob}\t{path}\n")
    return _tree_with(repo, env, tree, rows)


def _merged_by_paths(repo: Path, env: Mapping[str, str], sides: tuple[str, str, str],
                     resolutions: Sequence[str]) -> str | None:
    """The tree of `sides` merged path by path, no file's text read (where `git merge-tree` cannot
    run: a clone lacking blobs of a file both sides changed): `a`'s tree with each path only `b`
    changed as `b` has it, and each path both changed as a merge commit of `resolutions` took
    one side's version or the other's, else as `a` has it. None when git cannot list the trees."""
    a, b, base = sides
    mine = run(repo, ["diff-tree", "-r", "--no-renames", "--name-only", "-z", base, a], env)
    theirs = run(repo, ["diff-tree", "-r", "--no-renames", "-z", base, b], env)
    if mine.returncode != 0 or theirs.returncode != 0:
        return None
    changed_in_a = set(mine.stdout.decode(errors="surrogateescape").split("\0"))
    fields = theirs.stdout.decode(errors="surrogateescape").split("\0")
    rows = []
    for meta, path in zip(fields[0:-1:2], fields[1::2], strict=True):
        _, mode, _, blob, _ = meta.lstrip(":").split(" ")
        if path in changed_in_a:
            taken = _resolved(repo, env, (a, b, path), resolutions)
            if taken is None:
                continue
            mode, blob = (mode if int(mode, 8) else "100644"), taken
        rows.append(f"{mode} {blob}\t{path}\n" if int(mode, 8) else f"0 {'0' * len(blob)}\t{path}\n")
    return _tree_with(repo, env, a, rows)


def _tree_with(repo: Path, env: Mapping[str, str], start: str, rows: Sequence[str]) -> str | None:
    """The tree of `start` with `rows` ("MODE BLOB\tPATH" lines of `git update-index --index-info`;
    mode 0 removes the path) written over it, in an index of its own; None when git refuses. Blobs the
    clone lacks are no hindrance: only their ids are written."""
    with tempfile.TemporaryDirectory(prefix="prstack-merge-") as scratch:
        index = {**env, "GIT_INDEX_FILE": os.path.join(scratch, "index")}
        if run(repo, ["read-tree", start], index).returncode != 0:
            return None
        if rows and run(repo, ["update-index", "--index-info"], index, "".join(rows).encode()).returncode != 0:
            return None
        written = run(repo, ["write-tree", "--missing-ok"], index)
    return written.stdout.decode().strip() or None if written.returncode == 0 else None


def _resolved(repo: Path, env: Mapping[str, str], where: tuple[str, str, str],
              resolutions: Sequence[str]) -> str | None:
    """The blob of `path` as the first merge commit of `resolutions` that merged `b`'s version of
    it resolved the conflict: that commit's file where its other parent held `a`'s version, else
    that file with the branch's own edits since `a` (its first parent's against `a`'s) taken out
    again, where they come out cleanly."""
    a, b, path = where
    for merge in resolutions:
        specs = [f"{a}:{path}", f"{b}:{path}", f"{merge}^1:{path}", f"{merge}^2:{path}", f"{merge}:{path}"]
        shown = run(repo, ["rev-parse", *specs], env)
        ids = shown.stdout.decode().split()
        if shown.returncode != 0 or len(ids) != len(specs):
            continue
        ours, theirs, first, second, resolution = ids
        if {first, second} == {ours, theirs}:
            return resolution
        if second == theirs and (undone := _three_way(repo, env, (resolution, first, ours))):
            return undone
    return None


def _three_way(repo: Path, env: Mapping[str, str], blobs: tuple[str, str, str]) -> str | None:
    """The blob of the three versions (current, base, other) merged (`git merge-file`): `current`
    with the change from `base` to `other`; None where they conflict or one is binary."""
    with tempfile.TemporaryDirectory(prefix="prstack-merge-") as scratch:
        files = []
        for i, blob in enumerate(blobs):
            shown = run(repo, ["cat-file", "blob", blob], env)
            if shown.returncode != 0 or b"\0" in shown.stdout[:8000]:
                return None
            files.append(Path(scratch) / f"side{i}")
            files[-1].write_bytes(shown.stdout)
        merged = run(repo, ["merge-file", "-p", *map(str, files)], env)
    if merged.returncode != 0:
        return None
    written = run(repo, ["hash-object", "-w", "--stdin"], env, merged.stdout)
    return written.stdout.decode().strip() or None if written.returncode == 0 else None
