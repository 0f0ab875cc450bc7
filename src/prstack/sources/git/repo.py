"""A local git clone (work tree or bare): opened once, its default branch, and the collaborators that
answer by job: PR refs, history and ancestry, files and diffs, patch ids (the stack's evidence)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import git

from prstack.errors import InputError, SourceError
from prstack.sources.git.ancestry import Ancestry
from prstack.sources.git.missing import MissingBlobs, settle_missing
from prstack.sources.git.objects import Objects
from prstack.sources.git.patchids import Patches
from prstack.sources.git.prrefs import PRRefs
from prstack.sources.git.runner import run_git

DEFAULT_BRANCH_CANDIDATES = (
    "refs/remotes/upstream/HEAD",
    "refs/remotes/upstream/main",
    "refs/remotes/upstream/master",
    "refs/remotes/origin/HEAD",
    "refs/remotes/origin/main",
    "refs/heads/main",
    "refs/remotes/origin/master",
    "refs/heads/master",
)
"""Where the default branch is, first found first: an `upstream` remote is the project where `origin`
is a fork, whose main may be far behind (forks are rarely synced), so upstream's branches come first."""


class GitClone:
    """Reads everything prstack needs from one local repository; the only GitPython user. Its
    collaborators: `refs` (the PR refs), `ancestry` (history, merge bases, ranges), `objects` (files
    at revisions, trees, diffs) and `patches` (patch ids and changed paths, the stack's evidence)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        if not self.path.exists():
            raise InputError(f"--git {self.path}: no such directory; give the path of a local clone.")
        try:
            self.repo = git.Repo(self.path, search_parent_directories=False)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise InputError(
                f"--git {self.path} is not a git repository; give the path of a clone "
                "(git clone URL, then git fetch origin '+refs/pull/*/head:refs/pull/*/head')."
            ) from None
        self.bare = self.repo.bare or _is_git_dir(self.path)
        # a bare repository without a `config` file looks like a work tree to GitPython (which then
        # runs git in the folder above it); git itself opens it, so run git in it
        self.git = git.Git(self.path) if self.bare and not self.repo.bare else self.repo.git
        self.patches = Patches(self._pipe)
        self.refs = PRRefs(self.path, self._run, self.pipe)
        self.objects = Objects(self.path, self.git.environment)
        self.ancestry = Ancestry(self.path, self._run, self.git.environment, self.pipe, self.resolve, self.refs)

    def lacking_blobs(self, heads: Sequence[str]) -> MissingBlobs | None:
        """The blobs of `heads`' history outside the default branch, and of their fork points'
        trees, that the clone lacks after one batch fetch from its promisor remote (None: none).
        Every later diff leaves the files that held them out (git would stop on them); the caller
        judges those files as not read."""
        default = self.default_ref
        forks = [fork for head in heads if (fork := self.ancestry.merge_base(head, default))]
        missing = settle_missing(self.path, self.env, heads, default, forks)
        if missing is not None:
            self.objects.unread = self.patches.unread = missing.paths
        return missing

    def _run(self, *args: str) -> str:
        """git's stdout as text (its last newline off); a failure is a SourceError."""
        return self._run_bytes(*args).decode("utf-8", "surrogateescape").removesuffix("\n")

    def _run_bytes(self, *args: str) -> bytes:
        return run_git(self.path, args, self.git.environment())

    # -- refs -----------------------------------------------------------------

    @cached_property
    def shallow(self) -> bool:
        """Whether the clone is shallow (`git clone --depth`): its history stops at some commits."""
        return self._run("rev-parse", "--is-shallow-repository") == "true"

    @cached_property
    def default_ref(self) -> str:
        """The default branch's ref: upstream's HEAD, main or master (the project, when origin is a
        fork), else origin/HEAD, else main, else master."""
        out = self._run("for-each-ref", "--format=%(refname)", *DEFAULT_BRANCH_CANDIDATES)
        present = set(out.split())
        for candidate in DEFAULT_BRANCH_CANDIDATES:
            if candidate in present:
                return candidate
        if self.bare:
            try:
                return self.repo.head.ref.path
            except TypeError:
                pass
        raise SourceError(
            f"cannot find the default branch in {self.path} (no origin/HEAD, main or master); "
            "give the fork point with --base REF."
        )

    def resolve(self, rev: str) -> str:
        """A revision (ref, tag, sha) to its full commit sha."""
        try:
            return self._run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
        except SourceError:
            raise InputError(
                f"{rev!r} is not a commit or ref in {self.path}; give a branch, tag or sha it holds "
                f"(`git -C {self.path} branch -a` and `git tag` list them), or fetch it there first."
            ) from None

    # -- history --------------------------------------------------------------

    @property
    def env(self) -> dict[str, str]:
        """Variables set for git on top of the process environment (auth, offline guards)."""
        return dict(self.git.environment())

    def pipe(self, args: Sequence[str], data: str | bytes) -> bytes:
        """Run git with `data` on stdin; its stdout."""
        return self._pipe(args, data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)

    def _pipe(self, args: Sequence[str], data: bytes) -> bytes:
        """Run git with `data` on stdin, in the environment the caller set (auth for lazy blobs,
        offline); its stdout."""
        return run_git(self.path, args, self.git.environment(), data)

def _is_git_dir(path: Path) -> bool:
    """Whether `path` is itself a repository's git folder (a bare repository), config or not."""
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()
