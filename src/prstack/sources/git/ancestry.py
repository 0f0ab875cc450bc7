"""A clone's history and ancestry (`GitClone.ancestry`): which commit holds which, merge bases, the
commits of a range, the PR heads' history outside the default branch; git's answers kept by one rule
(see `_Answers`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from prstack.errors import SourceError
from prstack.models import Commit
from prstack.sources.git.history import LOG_FORMAT, History, parse_log
from prstack.sources.git.prrefs import PRRefs
from prstack.sources.git.resolved_merge import merged_as_resolved
from prstack.sources.git.runner import run, run_git

T = TypeVar("T")
_FIXED_RE = re.compile(r"[0-9a-f]{40}(?:\^\d*)?")
"""A commit named by its id (or its parent): what it stands for never changes."""
_HEX_RE = re.compile(r"[0-9a-fA-F]{4,64}")
_VIRTUAL_IDENTITY = {
    "GIT_AUTHOR_NAME": "prstack", "GIT_AUTHOR_EMAIL": "prstack@invalid", "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+00:00",
    "GIT_COMMITTER_NAME": "prstack", "GIT_COMMITTER_EMAIL": "prstack@invalid",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+00:00",
}


class Ancestry:
    """The history questions of the clone at `path`: git run by `run` (stdout as text) in the
    environment `env` gives; `pipe`, `resolve` and `refs` (the clone's) serve the PR heads'
    `History` too."""

    def __init__(self, path: Path, run: Callable[..., str], env: Callable[[], Mapping[str, str]],
                 pipe: Callable[[Sequence[str], str | bytes], bytes], resolve: Callable[[str], str],
                 refs: PRRefs) -> None:
        self.path, self._run, self._env = path, run, env
        self.pipe, self.resolve, self.refs = pipe, resolve, refs
        self._histories: dict[str, History] = {}
        self._answers = _Answers()
        self._commits: dict[str, str] = {}

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        for history in self._histories.values():
            if (known := history.known_ancestry(ancestor, descendant)) is not None:
                return known
        args = ["merge-base", "--is-ancestor", ancestor, descendant]
        return self._answers.of(("is-ancestor", ancestor, descendant),
                                lambda: run(self.path, args, self._env()).returncode == 0)

    def contains(self, commit: str, head: str) -> bool | None:
        """Whether `commit` has `head` in its history; None when `commit` is not in the clone."""
        full = self._commit_of(commit)
        return self.is_ancestor(head, full) if full else None

    def _commit_of(self, commit: str) -> str | None:
        """`commit`'s full id, None when the clone does not hold it; kept when `commit` is a
        (possibly abbreviated) id of the one it resolves to (each PR asks of the same commit)."""
        if (known := self._commits.get(commit)) is not None:
            return known
        try:
            full = self._run("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").strip()
        except SourceError:
            return None
        if full and _HEX_RE.fullmatch(commit) and full.startswith(commit.lower()):
            self._commits[commit] = full
        return full or None

    def patch_contains(self, commit: str, pr_commit: str) -> bool | None:
        """Whether `commit`'s history holds a patch-equal copy of `pr_commit` (git cherry)."""
        try:
            out = self._run("cherry", commit, pr_commit, f"{pr_commit}^")
        except SourceError:
            return None
        return out.strip().startswith("-")

    def merge_base(self, a: str, b: str) -> str | None:
        def ask() -> str | None:
            try:
                return self._run("merge-base", a, b).strip() or None
            except SourceError:
                return None

        return self._answers.of(("merge-base", a, b), ask)

    def merge_bases(self, a: str, b: str) -> list[str]:
        """Every best common ancestor of `a` and `b` (git merge-base --all), newest first by
        committer date, ties by sha: one order for every run (git leaves it unspecified)."""
        def ask() -> list[str]:
            try:
                bases = self._run("merge-base", "--all", a, b).split()
            except SourceError:
                bases = []
            if len(bases) > 1:
                rows = self._run("log", "--no-walk=unsorted", "--format=%ct %H", *bases).split("\n")
                dated = [(int(when), sha) for when, _, sha in (row.partition(" ") for row in rows if row)]
                bases = [sha for _, sha in sorted(dated, key=lambda row: (-row[0], row[1]))]
            return bases

        return list(self._answers.of(("merge-base --all", a, b), ask))

    def commits_outside(self, head: str, default: str) -> tuple[Commit, ...]:
        """The commits `head` reaches and `default` does not (git log head ^default), oldest first."""
        out = self._run("log", "--reverse", "--topo-order", f"--format={LOG_FORMAT}", head, f"^{default}")
        return tuple(parse_log(out))

    def merge_commit_bringing(self, head: str, default: str) -> str | None:
        """The earliest merge commit on the path from `head` to `default` (how a merged PR came in)."""
        def ask() -> str | None:
            out = self._run("rev-list", "--ancestry-path", "--merges", "--reverse", f"{head}..{default}")
            return out.split()[0] if out.split() else None

        return self._answers.of(("bringing", head, default), ask)

    def commits(self, base: str, head: str) -> tuple[Commit, ...]:
        """Commits of base..head, oldest first (from the history detection loaded, when it can)."""
        question = ("commits", base, head)
        kept: tuple[Commit, ...] | None = self._answers.kept(question)
        if kept is not None:
            return kept
        for history in self._histories.values():
            if (known := history.known_range(base, head)) is not None:
                return known
        out = self._run("log", "--reverse", "--topo-order", f"--format={LOG_FORMAT}", f"{base}..{head}")
        return self._answers.of(question, lambda: tuple(parse_log(out)))

    def history(self, default: str) -> History:
        """The PR heads' history outside `default`, loaded as asked and kept (see History)."""
        if default not in self._histories:
            self._histories[default] = History(self, default)
        return self._histories[default]

    def blame_added(
        self, base: str, head: str, path: str, ranges: Iterable[tuple[int, int]], outside: Sequence[str] = ()
    ) -> dict[int, str]:
        """For lines of `path` at `head` in the given (start, count) ranges: line -> commit that
        introduced it within base..head (and not in `outside`'s history: the PR's scope, so git
        walks no default-branch history a merge brought in). Lines older than that are left out."""
        args = ["blame", "--porcelain"]
        spans = [(s, c) for s, c in ranges if c > 0]
        if not spans:
            return {}
        for start, count in spans:
            args += ["-L", f"{start},{start + count - 1}"]
        args += [head, f"^{base}", *(f"^{rev}" for rev in outside), "--", path]
        out = self._run(*args)
        result: dict[int, str] = {}
        boundary: set[str] = set()
        current: tuple[str, int] | None = None
        for line in out.splitlines():
            if line.startswith("\t"):
                continue
            parts = line.split()
            if len(parts) >= 3 and re.fullmatch(r"[0-9a-f]{40}", parts[0]):
                current = (parts[0], int(parts[2]))
                result[current[1]] = current[0]
            elif parts and parts[0] == "boundary" and current:
                boundary.add(current[0])
        return {n: sha for n, sha in result.items() if sha not in boundary}

    def log_touching(self, base: str, head: str, path: str, outside: Sequence[str] = ()) -> list[str]:
        """Commits of base..head (not in `outside`'s history) that touch `path`, oldest first."""
        out = self._run("log", "--reverse", "--format=%H", head, f"^{base}", *(f"^{rev}" for rev in outside),
                        "--", path)
        return out.split()

    # -- stack detection ------------------------------------------------------------

    def merge_base_octopus(self, commits: Sequence[str]) -> str | None:
        """A commit every one of `commits` descends from (git merge-base --octopus), if any."""
        try:
            return self._run("merge-base", "--octopus", *commits).split()[0]
        except (SourceError, IndexError):
            return None

    def commits_touching(self, base: str, head: str, paths: Sequence[str]) -> list[str]:
        """Non-merge commits of base..head touching any of `paths`, oldest first."""
        if not paths:
            return []
        out = self._run("log", "--reverse", "--no-merges", "--format=%H", f"{base}..{head}",
                        "--", *paths)
        return out.split()

    def merged_tree(self, a: str, b: str) -> str | None:
        """The tree of merging `a` and `b` (git merge-tree --write-tree), None on conflict."""
        try:
            out = self._run("merge-tree", "--write-tree", "--no-messages", a, b)
        except SourceError:
            return None  # a conflict (exit 1) or a git older than 2.38
        tree = out.split()[0] if out.split() else ""
        return tree if re.fullmatch(r"[0-9a-f]{40}", tree) else None

    def merged_as_resolved(self, a: str, b: str, resolutions: Sequence[str] = ()) -> str | None:
        """The tree of merging `a` and `b`, a conflicted file as one of the merge commits
        `resolutions` resolved it, else as `a` has it (see prstack.sources.git.resolved_merge);
        None where git cannot merge them."""
        def ask() -> str | None:
            base = self.merge_base(a, b)
            return merged_as_resolved(self.path, self._env(), (a, b, base), resolutions) if base else None

        return self._answers.of(("merged-as-resolved", a, b, *resolutions), ask)

    def merged_tips(self, tips: Sequence[str], resolutions: Sequence[str] = ()) -> str | None:
        """A commit of `tips` merged together (see `merged_as_resolved`; parents the tips, a fixed
        identity, no ref): where the own change of a PR that merged several PRs starts. None when
        git cannot merge them."""
        def ask() -> str | None:
            found = tips[0]
            env = {**self._env(), **_VIRTUAL_IDENTITY}
            for other in tips[1:]:
                tree = self.merged_as_resolved(found, other, resolutions)
                if tree is None:
                    return None
                args = ["commit-tree", "--no-gpg-sign", tree, "-p", found, "-p", other]
                found = run_git(self.path, args, env, b"prstack: the PRs under a PR merged together\n").decode().strip()
            return found

        return self._answers.of(("merged-tips", *tips, "--", *resolutions), ask)

    def merged_bases(self, bases: Sequence[str]) -> str | None:
        """A commit of several merge bases merged together (their trees by `git merge-tree`, a
        commit object with both as parents and a fixed identity, so every run names the same one;
        no ref points at it): where a branch with several merge bases starts. None on a conflict."""
        def ask() -> str | None:
            found: str | None = bases[0] if bases else None
            env = {**self._env(), **_VIRTUAL_IDENTITY}
            for other in bases[1:]:
                tree = self.merged_tree(found, other) if found else None
                if found is None or tree is None:
                    return None
                args = ["commit-tree", "--no-gpg-sign", tree, "-p", found, "-p", other]
                found = run_git(self.path, args, env, b"prstack: merge bases merged together\n").decode().strip()
            return found

        return self._answers.of(("merged-bases", *bases), ask)

    def rev_list(self, *revs: str) -> list[str]:
        """`git rev-list REVS` (e.g. 'base..head', '^other')."""
        return self._run("rev-list", *revs).split()


class _Answers:
    """The one caching rule of a clone's answers: an answer is kept when its question names every
    revision by an object id (a commit id, or its parent `id^N`), which names the same object
    forever; a question naming a ref (which may move) is asked again."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, ...], Any] = {}

    def kept(self, question: tuple[str, ...]) -> Any:
        """The answer kept for `question` (its kind first, then its revisions); None if none is."""
        return self._kept.get(question)

    def of(self, question: tuple[str, ...], ask: Callable[[], T]) -> T:
        """The answer to `question`, asked by `ask` unless kept."""
        if question in self._kept:
            answer: T = self._kept[question]
            return answer
        answer = ask()
        if all(_FIXED_RE.fullmatch(revision) for revision in question[1:]):
            self._kept[question] = answer
        return answer
