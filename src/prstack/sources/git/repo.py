"""A local git clone (work tree or bare): opened once, its default branch, and the collaborators that
answer by job: PR refs, history and ancestry, files and diffs, patch ids (the stack's evidence)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

from prstack.errors import InputError, Option, SourceError
from prstack.sources.git.ancestry import Ancestry
from prstack.sources.git.missing import NO_LAZY_FETCH, HistoryWalk, MissingBlobs, settle_missing
from prstack.sources.git.objects import Objects
from prstack.sources.git.patchids import Patches
from prstack.sources.git.prrefs import PRRefs
from prstack.sources.git.runner import failed, run, run_git
from prstack.sources.github.repo_id import remote_urls

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


class GitEnv:
    """The variables set for every git this clone runs, on top of the process environment."""

    def __init__(self) -> None:
        self._set: dict[str, str] = {}

    def environment(self) -> dict[str, str]:
        return self._set

    def update_environment(self, **values: str | None) -> None:
        """Set these variables (None: unset one)."""
        for name, value in values.items():
            if value is None:
                self._set.pop(name, None)
            else:
                self._set[name] = value


class GitClone:
    """Reads everything prstack needs from one local repository, through git itself. Its
    collaborators: `refs` (the PR refs), `ancestry` (history, merge bases, ranges), `objects` (files
    at revisions, trees, diffs) and `patches` (patch ids and changed paths, the stack's evidence)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        if not self.path.exists():
            raise InputError(Option("git"), f" {self.path}: no such directory; give the path of a local clone.")
        self.bare = _opened_bare(self.path)
        self.git = GitEnv()
        self.patches = Patches(self._pipe)
        also = [ref for ref in DEFAULT_BRANCH_CANDIDATES if not ref.startswith("refs/remotes/")]
        self.refs = PRRefs(self.path, self._run, self.pipe, also)
        self.objects = Objects(self.path, self.git.environment)
        self.ancestry = Ancestry(self.path, self._run, self.git.environment, self.pipe, self.resolve, self.refs)

    def lacking_blobs(self, heads: Sequence[str], starts: Sequence[str] = (),
                      known: MissingBlobs | None = None) -> MissingBlobs | None:
        """The blobs of `heads`' history past their fork points from the default branch (one walk),
        or, `starts` given, of each head's history past its own start (the heads of one start walked
        together, each start apart: one range's start may hide the commits of another), and of the
        starts' trees, that the clone lacks after one batch fetch from its promisor remote (None:
        none), with those `known` to be lacking already. Every later diff leaves the files that held
        them out (git would stop on them); the caller judges those files as not read."""
        default = self.default_ref
        if starts:
            by_start: dict[str, list[str]] = {}
            for head, start in zip(heads, starts, strict=True):
                by_start.setdefault(start, []).append(head)
            walks = [HistoryWalk(tuple(dict.fromkeys(hs)), (start,)) for start, hs in by_start.items()]
        else:
            walks = [HistoryWalk(tuple(heads), tuple(self.fork_points(heads)))]
        asks = known is None or known.remote_answered  # (a remote that did not answer is not asked again)
        missing = settle_missing(self.path, self.env, walks, default, fetch=asks)
        if missing is None or known is None:
            missing = missing or known
        else:
            missing = known.joined(missing)
        if missing is not None:
            self.objects.unread = self.patches.unread = missing.paths
            if not missing.remote_answered:  # no git of the audit tries that remote again for a blob
                self.git.update_environment(**NO_LAZY_FETCH)
        return missing

    def fork_points(self, heads: Sequence[str]) -> list[str]:
        """Each head's merge base with the default branch (where it has one), from the heads' history
        outside it (read in one git log, which stack detection reads anyway) when it enters the
        default branch at one commit."""
        history = self.ancestry.history(self.default_ref)
        history.ensure(heads)
        return [fork for head in heads if (fork := history.merge_base(head))]

    def _run(self, *args: str) -> str:
        """git's stdout as text (its last newline off); a failure is a SourceError."""
        return self._run_bytes(*args).decode("utf-8", "surrogateescape").removesuffix("\n")

    def _run_bytes(self, *args: str) -> bytes:
        return run_git(self.path, args, self.git.environment())

    # -- refs -----------------------------------------------------------------

    @cached_property
    def remote_urls(self) -> dict[str, str]:
        """remote.NAME.url -> URL of the clone's remotes, read once (opening the clone and naming
        its repository both ask)."""
        return remote_urls(self.path)

    @cached_property
    def shallow(self) -> bool:
        """Whether the clone is shallow (`git clone --depth`): its history stops at some commits."""
        return self._run("rev-parse", "--is-shallow-repository") == "true"

    @cached_property
    def default_ref(self) -> str:
        """The default branch's ref: upstream's HEAD, main or master (the project, when origin is a
        fork), else origin/HEAD, else main, else master."""
        present = self.refs.present(DEFAULT_BRANCH_CANDIDATES)
        for candidate in DEFAULT_BRANCH_CANDIDATES:
            if candidate in present:
                return candidate
        if self.bare:
            head = run(self.path, ["symbolic-ref", "--quiet", "HEAD"])
            if head.returncode == 0:
                return head.stdout.decode("utf-8", "surrogateescape").strip()
        raise SourceError(
            f"cannot find the default branch in {self.path} (no origin/HEAD, main or master); "
            "give the fork point with ", Option("base"), " REF."
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

def _opened_bare(path: Path) -> bool:
    """Whether the repository at `path` (the top of a work tree, or a git folder) is bare: its git
    folder given, or its config says so. A folder inside a work tree, or outside any repository,
    is no clone (InputError); git's own refusal (an unsafe owner) is a SourceError."""
    done = run(path, ["rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-cdup"])
    lines = done.stdout.decode("utf-8", "surrogateescape").splitlines()
    if done.returncode == 0 and len(lines) >= 2:
        git_dir = Path(lines[1])
        if git_dir == path.resolve() or (len(lines) > 2 and lines[2] == ""):
            return lines[0] == "true" or _is_git_dir(path)
    elif done.returncode != 0 and path.is_dir() and b"not a git repository" not in done.stderr:
        raise failed(["rev-parse"], f"in {path}", done.stderr)
    raise InputError(
        Option("git"), f" {path} is not a git repository; give the path of a clone "
        "(git clone URL, then git fetch origin '+refs/pull/*/head:refs/pull/*/head')."
    )


def _is_git_dir(path: Path) -> bool:
    """Whether `path` is itself a repository's git folder (a bare repository), config or not."""
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()
