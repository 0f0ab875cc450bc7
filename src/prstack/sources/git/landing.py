"""After a PR merged: where it landed, whether a ref holds it (the landing commit or a cherry-pick of
it in the ref's history, not taken back since), and what upstream's later commits made of each of
its hunks' lines. Each question is one git process for the whole PR, never one per hunk."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from prstack.diff.lineage import diff_path
from prstack.errors import SourceError
from prstack.models import Hunk, Landed
from prstack.sources.git.repo import GitClone
from prstack.sources.git.runner import run_git
from prstack.stack.facts import PRFacts

_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,64})")
_PICKED = re.compile(r"\(cherry picked from commit ([0-9a-f]{7,64})\)")
_SUBJECT_PR = re.compile(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+)\b")
_HOW = {"rebase": "rebase", "squash": "squash", "content": "content"}


def pr_of_subject(subject: str) -> int | None:
    """The PR a default-branch commit came from, as GitHub words it: "Fix x (#123)" (squash) or
    "Merge pull request #123 from ..." (merge commit); None otherwise."""
    m = _SUBJECT_PR.search(subject)
    if m is None:
        return None
    return int(m[1] or m[2])


@dataclass(frozen=True)
class Holding:
    """Whether a ref holds a merged PR, and through which commit."""

    holds: bool
    via: str | None = None
    """The landing commit, or the cherry-pick of it, that the ref contains."""
    reverted_by: str | None = None
    """The ref's commit that took the change back (then `holds` is False)."""
    parts_reverted: Mapping[str, str] = field(default_factory=dict)
    """PR commits whose own change a commit of the ref took back (a revert naming that commit, not
    the landing): PR commit -> the revert. The hunks those commits wrote are judged by their text."""


@dataclass(frozen=True)
class Fate:
    """What upstream made of one hunk's lines between the landing and a ref."""

    path: str
    """Where the hunk's file is at the ref (its new name when a later commit moved it)."""
    rewritten_by: str | None = None
    """The first later commit that removed or changed one of the hunk's added lines."""
    moved_by: str | None = None
    """The later commit that moved the file to `path`."""
    deleted_by: str | None = None
    """The later commit that deleted the file (no new name found)."""
    pr: int | None = None
    """The PR of the commit named (rewrite, move or deletion), where its subject says."""
    rewrite: tuple[str, ...] = ()
    """The rewriting commit's diff lines ("-" and "+") of the hunks that removed the lines."""

    @property
    def commit(self) -> str | None:
        return self.rewritten_by or self.deleted_by or self.moved_by


class AfterMerge:
    """The lineage questions of merged PRs, asked of one clone (answers kept for the run). Reverts
    and cherry-picks are read once for every PR: the commits whose message names a revert or a
    pick, in the history of the tags and the default branch (one `git log --grep`)."""

    def __init__(self, git: GitClone, default_ref: str) -> None:
        self.git, self.default_ref = git, default_ref
        self._subjects: dict[str, str] = {}
        self._bodies: dict[str, str] = {}
        self._marked_log: list[tuple[str, str]] | None = None
        self._offside: dict[int, list[str]] = {}
        self._tags: set[str] | None = None
        self._contains: dict[str, set[str]] = {}
        self.line_position: dict[str, int] = {}
        """Commits `naming` found, by their place in the default branch's first-parent line (oldest 0)."""

    @cached_property
    def _default(self) -> str:
        return self.git.resolve(self.default_ref)

    def _out(self, *args: str) -> str:
        return run_git(self.git.path, args, self.git.env).decode("utf-8", "surrogateescape")

    def landed(self, facts: PRFacts) -> Landed | None:
        """Where the PR entered the default branch: the merge commit bringing its head, the head
        itself (fast-forward), the squash or rebased copy, or the commit whose tree first held it;
        None when only GitHub says it merged."""
        how, commit = facts.merged, facts.landed
        if how is None or commit is None:
            return None
        if how == "ancestry":
            merge = self.git.ancestry.merge_commit_bringing(facts.head, self._default)
            return Landed(merge, "merge") if merge is not None else Landed(facts.head, "rebase")
        commit = self._before_reverts(commit)
        if how == "rebase" and len(facts.own) == 1 and pr_of_subject(self._subject(commit)) == facts.number:
            return Landed(commit, "squash")  # one commit: a squash says "(#N)", a rebase keeps its subject
        return Landed(commit, _HOW.get(how, how))

    def naming(self, numbers: Sequence[int]) -> dict[int, list[str]]:
        """Per PR number, the default branch's commits whose subject names it as GitHub words a
        landing ("... (#N)", "Merge pull request #N ..."), oldest first; one git log for all. Also
        reads, for the same numbers, the tags' commits outside the default branch that name them
        (backports: see `holding`)."""
        if not numbers:
            return {}
        alternatives = "|".join(str(n) for n in sorted(set(numbers)))
        greps = [f"--grep=\\(#({alternatives})\\)$", f"--grep=^Merge pull request #({alternatives})([^0-9]|$)"]
        out = self._out("log", "--first-parent", "--reverse", "--format=%H%x00%s", "-E", *greps, self.default_ref)
        found: dict[int, list[str]] = {}
        for line in out.splitlines():
            sha, _, subject = line.partition("\0")
            if (n := pr_of_subject(subject)) is not None and n in numbers:
                found.setdefault(n, []).append(sha)
                self._subjects[sha] = subject
                self.line_position[sha] = len(self.line_position)
        out = self._out("log", "--reverse", "--format=%H%x00%s", "-E", *greps, "--tags", "--not", self.default_ref)
        for line in out.splitlines():
            sha, _, subject = line.partition("\0")
            if (n := pr_of_subject(subject)) is not None and n in numbers:
                self._offside.setdefault(n, []).append(sha)
        return found

    def _marked(self) -> list[tuple[str, str]]:
        """(sha, message) of every commit of the tags' and the default branch's history whose message
        names a reverted or cherry-picked commit, oldest first (one git log)."""
        if self._marked_log is None:
            out = self._out("log", "--reverse", "--format=%H%x00%B%x01", "--grep=This reverts commit",
                            "--grep=cherry picked from commit", "--tags", self.default_ref)
            self._marked_log = [(sha, body) for entry in out.split("\x01")
                                for sha, _, body in [entry.strip().partition("\0")] if sha]
        return self._marked_log

    def _body(self, commit: str) -> str:
        if commit not in self._bodies:
            self._bodies[commit] = self._out("log", "-1", "--format=%B", commit)
        return self._bodies[commit]

    def _before_reverts(self, commit: str) -> str:
        """The first landing of a change that a revert of its revert brought back: the copy the
        clone found may be that re-revert, whose patch is the change's own."""
        if not any(sha == commit for sha, _ in self._marked()):
            return commit
        for _ in range(8):
            reverted = _REVERTS.findall(self._body(commit))
            if not reverted:
                return commit
            again = _REVERTS.findall(self._body(reverted[0]))
            if not again:
                return commit
            commit = self.git.resolve(again[0])
        return commit

    def holding(self, landed: Landed, number: int, pr_commits: Sequence[str], ref: str) -> Holding:
        """Whether `ref` holds the PR: it contains the landing commit (or a cherry-pick of it or of
        the PR's commits, as `git cherry-pick -x` or a backport's "(#N)" names them), and none of its
        later commits took it back (a revert naming it, not itself reverted again)."""
        via = landed.commit if self._is_ancestor(landed.commit, ref) else None
        if via is None:
            via = self._picked(landed, number, pr_commits, ref)
        if via is None:
            return Holding(False)
        by = self._reverted(via, [landed.commit], ref)
        if by is not None:
            return Holding(False, via, by)
        parts = {c: r for c in pr_commits if (r := self._reverted(via, [c], ref)) is not None}
        return Holding(True, via, None, parts)

    def _is_ancestor(self, commit: str, ref: str) -> bool:
        if ref in self._all_tags() and commit in self._contains:
            return ref in self._contains[commit]
        return self.git.ancestry.is_ancestor(commit, ref)

    def _picks(self, landed: Landed, number: int, pr_commits: Sequence[str]) -> list[str]:
        """Commits outside the landing's history that name the landing or a PR commit as
        cherry-picked, or (on the tags' history off the default branch) whose subject ends in
        "(#number)": backports, from what `naming` and `_marked` read."""
        named = {landed.commit, *pr_commits}
        found = [sha for sha, body in self._marked() if any(_names(p, named) for p in _PICKED.findall(body))]
        return list(dict.fromkeys([*found, *self._offside.get(number, [])]))

    def _picked(self, landed: Landed, number: int, pr_commits: Sequence[str], ref: str) -> str | None:
        """The oldest backport of the PR (see `_picks`) in `ref`'s history."""
        return next((sha for sha in self._picks(landed, number, pr_commits) if self._is_ancestor(sha, ref)), None)

    def _reverted(self, via: str, named: Sequence[str], ref: str) -> str | None:
        """The commit of via..ref that took the change back and stayed (None: none did): a revert
        naming one of `named`, undone again by a revert of that revert."""
        live = {via, *named}
        if not any(_names(t, live) for _, body in self._marked() for t in _REVERTS.findall(body)):
            return None
        out = self._out("log", "--reverse", "--format=%H%x00%B%x01", "--grep=This reverts commit", f"{via}..{ref}")
        reverts: set[str] = set()
        by: str | None = None
        for entry in out.split("\x01"):
            sha, _, body = entry.strip().partition("\0")
            if not sha:
                continue
            targets = _REVERTS.findall(body)
            if by is None and any(_names(t, live) for t in targets):
                by = sha
                reverts.add(sha)
            elif by is not None and any(_names(t, reverts) for t in targets):
                by = None
        return by

    def fates(self, since: str, ref: str, hunks: Sequence[Hunk]) -> list[Fate]:
        """What the commits of since..ref (the ref's first-parent line) made of each hunk's added
        lines, in order: the first commit removing one of them, a move of the file (with the commit
        that moved it) or its deletion; one `git log` for every hunk, one tree diff for the moves."""
        paths = sorted({h.path for h in hunks})
        if not paths:
            return []
        log = run_git(self.git.path, ["--literal-pathspecs", "log", "--first-parent", "--reverse", "--no-color",
                                      "-M", "-U0", "-p", "--format=%x01%H%x00%s", f"{since}..{ref}", "--", *paths],
                      self.git.env)
        commits = _parse_log(log)
        self._subjects.update({sha: subject for sha, subject, _ in commits})
        moves = self._moves(since, ref, {p for p in paths})
        return [self._fate(h, commits, moves) for h in hunks]

    def _fate(self, hunk: Hunk, commits: Sequence[tuple[str, str, list[_FileChange]]],
              moves: Mapping[str, tuple[str, str | None]]) -> Fate:
        wanted = {line.strip() for line in hunk.added if line.strip()}
        path = hunk.path
        rewritten: str | None = None
        rewrite: tuple[str, ...] = ()
        for sha, _, files in commits:
            for change in files:
                if change.old != path:
                    continue
                if rewritten is None and wanted & change.removed:
                    rewritten = sha
                    rewrite = tuple(line for h in change.hunks if wanted & {x[1:].strip() for x in h if x[:1] == "-"}
                                    for line in h)
                if change.new is None:
                    moved = moves.get(path)
                    if moved is not None:
                        return self._named(Fate(moved[0], rewritten, moved[1] or sha, rewrite=rewrite))
                    return self._named(Fate(path, rewritten, deleted_by=sha, rewrite=rewrite))
                if change.new != path:
                    return self._named(Fate(change.new, rewritten, sha, rewrite=rewrite))
        return self._named(Fate(path, rewritten, rewrite=rewrite))

    def _named(self, fate: Fate) -> Fate:
        commit = fate.commit
        if commit is None:
            return fate
        pr = pr_of_subject(self._subjects.get(commit) or self._subject(commit))
        return replace(fate, pr=pr)

    def _subject(self, commit: str) -> str:
        try:
            return self._out("log", "-1", "--format=%s", commit).strip()
        except SourceError:
            return ""

    def _moves(self, since: str, ref: str, paths: set[str]) -> dict[str, tuple[str, str | None]]:
        """Of `paths`, those that since..ref renamed: path -> (its name at ref, None: the commit
        that moved it is the one the log shows deleting it). One tree diff with rename detection,
        within the paths' top-level folders."""
        tops = sorted({p.split("/", 1)[0] for p in paths})
        out = run_git(self.git.path, ["--literal-pathspecs", "diff", "--name-status", "-z", "-M", since, ref, "--",
                                      *tops], self.git.env)
        fields = out.split(b"\0")
        found: dict[str, tuple[str, str | None]] = {}
        i = 0
        while i < len(fields):
            status = fields[i].decode("ascii", "replace")
            if status.startswith(("R", "C")) and i + 2 < len(fields):
                old = fields[i + 1].decode("utf-8", "surrogateescape")
                new = fields[i + 2].decode("utf-8", "surrogateescape")
                if status.startswith("R") and old in paths:
                    found[old] = (new, None)
                i += 3
            else:
                i += 2
        return found

    def in_releases(self, landed: Landed, number: int, pr_commits: Sequence[str],
                    releases: Sequence[tuple[str, str]]) -> list[bool | None]:
        """Per release of `releases` ((name, commit), oldest first): True where it holds the PR (see
        `holding`), False where it has the landing or a backport and took it back, None where it has
        neither (a release before it, or of another line). The releases containing the landing or a
        backport come from one `git for-each-ref --contains` each; a release is looked at on its own
        only where a revert names the PR."""
        commits = [c for _, c in releases]
        holding = set(self.containing(landed.commit, commits))
        for pick in self._picks(landed, number, pr_commits):
            holding |= set(self.containing(pick, commits))
        out: list[bool | None] = []
        for commit in commits:
            via = None
            if commit in holding:
                via = landed.commit if self._is_ancestor(landed.commit, commit) else \
                    self._picked(landed, number, pr_commits, commit)
            out.append(None if via is None else self._reverted(via, [landed.commit], commit) is None)
        return out

    def _all_tags(self) -> set[str]:
        """The commits (and tag objects) the tags point to."""
        if self._tags is None:
            self._tags = set(self._out("for-each-ref", "--format=%(objectname) %(*objectname)", "refs/tags").split())
        return self._tags

    def containing(self, commit: str, refs: Iterable[str]) -> list[str]:
        """Those of `refs` (commits) whose history holds `commit`: the tags' commits from one
        `git for-each-ref --contains` (kept), any other commit asked on its own."""
        wanted = list(dict.fromkeys(refs))
        if not wanted:
            return []
        if commit not in self._contains:
            fmt = "--format=%(objectname) %(*objectname)"
            self._contains[commit] = set(self._out("for-each-ref", f"--contains={commit}", fmt, "refs/tags").split())
        held, tags = self._contains[commit], self._all_tags()
        return [r for r in wanted if r in held or (r not in tags and self.git.ancestry.is_ancestor(commit, r))]


def _names(abbrev: str, full: Iterable[str]) -> bool:
    """Whether the (possibly abbreviated) commit id names one of `full`."""
    return any(f.startswith(abbrev) for f in full if f)


@dataclass(frozen=True)
class _FileChange:
    """One file of one commit of a `git log -p -U0`: its paths and its hunks' lines."""

    old: str | None
    new: str | None
    hunks: tuple[tuple[str, ...], ...]
    """Each hunk's lines with their "-" or "+" (no context: -U0)."""

    @property
    def removed(self) -> set[str]:
        return {line[1:].strip() for hunk in self.hunks for line in hunk if line[:1] == "-"}


def _parse_log(out: bytes) -> list[tuple[str, str, list[_FileChange]]]:
    """(sha, subject, its file changes) per commit of a `git log -p -U0` written with the format
    %x01%H%x00%s."""
    commits = []
    for entry in out.split(b"\x01")[1:]:
        head, _, diff = entry.partition(b"\n")
        sha, _, subject = head.partition(b"\0")
        commits.append((sha.decode(), subject.decode("utf-8", "surrogateescape"), _file_changes(diff)))
    return commits


def _file_changes(diff: bytes) -> list[_FileChange]:
    files: list[_FileChange] = []
    old: str | None = None
    new: str | None = None
    hunks: list[list[str]] = []
    started = False

    def close() -> None:
        if started and (old is not None or new is not None):
            files.append(_FileChange(old, new, tuple(tuple(h) for h in hunks)))

    for raw in diff.splitlines():
        if raw.startswith(b"diff --git "):
            close()
            old = new = None
            hunks, started = [], True
        elif raw.startswith(b"--- ") and not hunks:
            old = diff_path(raw[4:], b"a/")
        elif raw.startswith(b"+++ ") and not hunks:
            new = diff_path(raw[4:], b"b/")
        elif raw.startswith(b"rename from ") and not hunks:
            old = diff_path(raw[12:], b"")
        elif raw.startswith(b"rename to ") and not hunks:
            new = diff_path(raw[10:], b"")
        elif raw.startswith(b"@@ "):
            hunks.append([])
        elif hunks and raw[:1] in (b"+", b"-"):
            hunks[-1].append(raw.decode("utf-8", "surrogateescape"))
    close()
    return files
