"""Two commits merged, each conflicted file as the branch's own merge commit resolved it where one
merged exactly these two versions, else holding both sides' lines (`git merge-file --union`): the
start of a branch's own change when it merged the default branch and that merge conflicted with its
parent's lines, so the branch's later edits of either side's lines are its own change."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from prstack.sources.git.runner import run

__all__ = ["merged_keeping_both"]


def merged_keeping_both(repo: Path, env: Mapping[str, str], sides: tuple[str, str, str],
                        resolutions: Sequence[str] = ()) -> str | None:
    """The tree of `sides` (a, b, their merge base) merged, a conflicted file as one of the merge
    commits `resolutions` left it where that commit merged the file's very versions at `a` and `b`,
    else holding both sides' lines; None when git leaves a conflict no text merge resolves (a file deleted on one side,
    a binary file, a rename on both) or cannot merge at all."""
    a, b, base = sides
    done = run(repo, ["merge-tree", "--write-tree", "--name-only", "--no-messages", a, b], env)
    rows = done.stdout.decode(errors="surrogateescape").splitlines()
    if done.returncode not in (0, 1) or not rows:
        return None
    tree, conflicted = rows[0], list(dict.fromkeys(row for row in rows[1:] if row))
    if done.returncode == 0:
        return tree
    with tempfile.TemporaryDirectory(prefix="prstack-merge-") as scratch:
        index = {**env, "GIT_INDEX_FILE": os.path.join(scratch, "index")}
        if run(repo, ["read-tree", tree], index).returncode != 0:
            return None
        for path in conflicted:
            blob = (_resolved(repo, env, (a, b, path), resolutions)
                    or _union(repo, env, Path(scratch), (f"{a}:{path}", f"{base}:{path}", f"{b}:{path}")))
            mode = run(repo, ["ls-tree", "--format=%(objectmode)", a, "--", path], env).stdout.decode().strip()
            if blob is None or mode not in ("100644", "100755"):
                return None
            if run(repo, ["update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}"], index).returncode != 0:
                return None
        written = run(repo, ["write-tree"], index)
    return written.stdout.decode().strip() or None if written.returncode == 0 else None


def _resolved(repo: Path, env: Mapping[str, str], where: tuple[str, str, str],
              resolutions: Sequence[str]) -> str | None:
    """The blob of `path` at the first merge commit of `resolutions` whose two parents hold it as
    `a` and `b` do (in either order): that merge's resolution of this very conflict."""
    a, b, path = where
    for merge in resolutions:
        specs = [f"{a}:{path}", f"{b}:{path}", f"{merge}^1:{path}", f"{merge}^2:{path}", f"{merge}:{path}"]
        shown = run(repo, ["rev-parse", *specs], env)
        ids = shown.stdout.decode().split()
        if shown.returncode == 0 and len(ids) == len(specs) and {ids[2], ids[3]} == {ids[0], ids[1]}:
            return ids[4]
    return None


def _union(repo: Path, env: Mapping[str, str], scratch: Path, sides: tuple[str, str, str]) -> str | None:
    """The blob of the three versions (ours, base, theirs) merged keeping both sides' lines."""
    files = []
    for i, spec in enumerate(sides):
        shown = run(repo, ["cat-file", "blob", spec], env)
        if shown.returncode != 0 or b"\0" in shown.stdout[:8000]:
            return None
        files.append(scratch / f"side{i}")
        files[-1].write_bytes(shown.stdout)
    merged = run(repo, ["merge-file", "-p", "--union", *map(str, files)], env)
    if merged.returncode < 0:
        return None
    written = run(repo, ["hash-object", "-w", "--stdin"], env, merged.stdout)
    return written.stdout.decode().strip() or None if written.returncode == 0 else None
