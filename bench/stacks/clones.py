"""Clones of a bare snapshot in the shapes users have them, for `run.py --clone SHAPE` (what --git reads).

- bare: the snapshot itself (refs/heads/main, refs/pull/N/head).
- path-origin: `git clone SNAPSHOT` (origin is a local path, a work tree checked out), the PR refs as
  `+refs/pull/*/head:refs/remotes/origin/pr/*` fetches them (no refs/pull/N/head).
- no-remote: `git init`, no remote at all: refs/heads/main and refs/pull/N/head.
- fork-origin: origin is a fork, someone/NAME (its main FORK_BEHIND first-parent commits behind upstream's,
  plus a branch for every other stack's top), upstream the project with its branches and the PR refs as
  `+refs/pull/*/head:refs/remotes/upstream/pr/*`; both remotes have GitHub URLs that `url.*.insteadOf`
  sends to the local copies (prstack runs --offline and fetches nothing).
- shallow: `git clone --depth SHALLOW_DEPTH file://SNAPSHOT`, then the PR refs fetched with the same depth
  into refs/remotes/origin/pr/N (every PR's: their histories together reach far back into main's).
- partial: `git clone --bare --filter=blob:none file://SNAPSHOT` with the PR refs fetched the same way:
  commits and trees only, every blob the audit reads comes from the promisor remote (the snapshot, served
  as GitHub serves it: filters and wants by id allowed, `remote.origin.uploadpack`).
- shallow-prs: the same clone with only the PRs of the stacks being run fetched so (a user fetching the
  PRs of interest): a stack forked from main more than SHALLOW_DEPTH commits back has no merge base there.

Objects are shared with the snapshot through objects/info/alternates (`git clone --shared`), and the
refs a remote's fetch refspecs give are written as `git fetch` would write them: the snapshots lack some
large blobs, on which `git fetch` and `git upload-pack` stop. The shallow clone is made by git itself
(commits and trees fetched with `--depth`, blobs left out, then shared), so its `.git/shallow` is git's.
A checkout that meets a blob the snapshot lacks leaves the work tree partial; prstack does not read it.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

SHAPES = ("bare", "path-origin", "no-remote", "fork-origin", "shallow", "shallow-prs", "partial")
SHALLOW_DEPTH = 50
FORK_BEHIND = 100
DEFAULT = "main"
_UPLOAD_PACK = "git -c uploadpack.allowFilter=true upload-pack"  # the snapshots do not allow --filter
_SERVE_BLOBS = "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"


class HasTop(Protocol):
    top: int
    top_head: str
    parents: tuple[int, ...]


def make_clone(shape: str, repo: str, m: Path, root: Path, stacks: Sequence[HasTop]) -> Path:
    """A clone of the snapshot `m` (of GitHub's `repo`, owner/name) in `shape`, built under `root`; its path."""
    root.mkdir(parents=True, exist_ok=True)
    owner, name = repo.split("/")
    d = root / name
    if shape == "path-origin":
        return _path_origin(m, d)
    if shape == "no-remote":
        return _no_remote(m, d)
    if shape == "fork-origin":
        return _fork_origin(m, owner, name, root, stacks)
    if shape == "shallow":
        return _shallow(m, d, ["+refs/pull/*/head:refs/remotes/origin/pr/*"])
    if shape == "partial":
        return _partial(m, d)
    if shape == "shallow-prs":
        prs = sorted({n for s in stacks for n in (s.top, *s.parents)})
        return _shallow(m, d, [f"+refs/pull/{n}/head:refs/remotes/origin/pr/{n}" for n in prs])
    raise ValueError(f"no clone shape {shape!r}; known: {', '.join(SHAPES)}")


def git(d: Path, *args: str, stdin: str | None = None, check: bool = True) -> str:
    return subprocess.run(["git", "-C", str(d), *args], input=stdin, check=check, capture_output=True,
                          text=True, errors="replace").stdout


def mapped(m: Path, src: str, dst: str) -> dict[str, str]:
    """The refs of `m` matching the refspec side `src` (one `*`), renamed by `dst`: what
    `git fetch m +SRC:DST` writes."""
    pattern = re.compile(re.escape(src).replace(r"\*", "(.+)") + "$")
    out = {}
    for line in git(m, "for-each-ref", "--format=%(objectname) %(refname)", src.split("*")[0].rstrip("/")).splitlines():
        sha, ref = line.split()
        if mm := pattern.match(ref):
            out[dst.replace("*", mm.group(1)) if "*" in src else dst] = sha
    return out


def write_refs(d: Path, refs: dict[str, str]) -> None:
    git(d, "update-ref", "--stdin", stdin="".join(f"update {ref} {sha}\n" for ref, sha in refs.items()))


def share_objects(gitdir: Path, m: Path) -> None:
    info = gitdir / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(f"{(m / 'objects').resolve()}\n")


def check_out(d: Path) -> None:
    """Fill the work tree from HEAD; a blob the snapshot lacks leaves it partial."""
    git(d, "reset", "-q", "--hard", "HEAD", check=False)


def _path_origin(m: Path, d: Path) -> Path:
    git(d.parent, "clone", "-q", "--shared", "--no-checkout", str(m), str(d))
    git(d, "config", "--add", "remote.origin.fetch", "+refs/pull/*/head:refs/remotes/origin/pr/*")
    write_refs(d, mapped(m, "refs/pull/*/head", "refs/remotes/origin/pr/*"))
    check_out(d)
    return d


def _no_remote(m: Path, d: Path) -> Path:
    git(d.parent, "init", "-q", "-b", DEFAULT, str(d))
    share_objects(d / ".git", m)
    write_refs(d, mapped(m, f"refs/heads/{DEFAULT}", f"refs/heads/{DEFAULT}")
               | mapped(m, "refs/pull/*/head", "refs/pull/*/head"))
    check_out(d)
    return d


def _fork_origin(m: Path, owner: str, name: str, root: Path, stacks: Sequence[HasTop]) -> Path:
    fork = root / "someone" / name
    git(root, "init", "-q", "--bare", "-b", DEFAULT, str(fork))
    share_objects(fork, m)
    stale = git(m, "rev-parse", f"{DEFAULT}~{FORK_BEHIND}").strip()
    write_refs(fork, {f"refs/heads/{DEFAULT}": stale} | {f"refs/heads/stack-{s.top}": s.top_head for s in stacks[1::2]})
    d = root / name
    git(root, "init", "-q", "-b", DEFAULT, str(d))
    share_objects(d / ".git", m)
    for remote, url, local in (("origin", f"https://github.com/someone/{name}.git", fork),
                               ("upstream", f"https://github.com/{owner}/{name}.git", m)):
        git(d, "remote", "add", remote, url)
        git(d, "config", f"url.{local.resolve()}.insteadOf", url)
    git(d, "config", "--add", "remote.upstream.fetch", "+refs/pull/*/head:refs/remotes/upstream/pr/*")
    git(d, "config", f"branch.{DEFAULT}.remote", "origin")
    git(d, "config", f"branch.{DEFAULT}.merge", f"refs/heads/{DEFAULT}")
    write_refs(d, mapped(fork, "refs/heads/*", "refs/remotes/origin/*")
               | mapped(m, "refs/heads/*", "refs/remotes/upstream/*")
               | mapped(m, "refs/pull/*/head", "refs/remotes/upstream/pr/*")  # wins over a branch named pr/N
               | {f"refs/heads/{DEFAULT}": stale})
    git(d, "symbolic-ref", "refs/remotes/origin/HEAD", f"refs/remotes/origin/{DEFAULT}")  # as `git clone` sets
    check_out(d)
    return d


def _shallow(m: Path, d: Path, pr_refspecs: list[str]) -> Path:
    depth = f"--depth={SHALLOW_DEPTH}"
    git(d.parent, "clone", "-q", depth, "--filter=blob:none", "--no-checkout", "--branch", DEFAULT,
        "--upload-pack", _UPLOAD_PACK, f"file://{m.resolve()}", str(d))
    if len(pr_refspecs) == 1:  # every PR: the remote's fetch refspec, as users set it
        git(d, "config", "--add", "remote.origin.fetch", pr_refspecs[0])
    git(d, "fetch", "-q", depth, "--filter=blob:none", "--upload-pack", _UPLOAD_PACK, "origin",
        f"+refs/heads/{DEFAULT}:refs/remotes/origin/{DEFAULT}", *pr_refspecs)
    share_objects(d / ".git", m)  # the blobs, from the snapshot: no partial clone left
    for key in ("remote.origin.promisor", "remote.origin.partialclonefilter"):
        git(d, "config", "--unset", key, check=False)
    check_out(d)
    return d


def _partial(m: Path, d: Path) -> Path:
    git(d.parent, "clone", "-q", "--bare", "--filter=blob:none", "--upload-pack", _SERVE_BLOBS, f"file://{m.resolve()}",
        str(d))
    git(d, "config", "remote.origin.uploadpack", _SERVE_BLOBS)
    git(d, "fetch", "-q", "--filter=blob:none", "origin", "+refs/pull/*/head:refs/pull/*/head")
    return d
