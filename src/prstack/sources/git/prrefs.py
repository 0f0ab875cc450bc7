"""A clone's PR refs (refs/pull/N/head, refs/remotes/R/pr/N): which PRs there are and where their heads are."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import cache, cached_property
from pathlib import Path

from prstack.errors import InputError

CLOCK_SKEW = 86400
"""Seconds a commit's date may run ahead of its descendants' (git name-rev's slop)."""
_REFS_PER_CALL = 1000
_PR_REF_RE = re.compile(r"^refs/(?:pull/(\d+)/head|remotes/[^/]+/(?:pr/(\d+)|pull/(\d+)/head))$")


@cache  # asked for every PR ref, several times a run, among thousands of refs
def pr_number_of_ref(refname: str) -> int | None:
    """The PR number a ref name stands for (refs/pull/N/head, refs/remotes/R/pr/N), else None."""
    m = _PR_REF_RE.match(refname)
    if not m:
        return None
    return int(next(g for g in m.groups() if g))


class PRRefs:
    """A clone's PR refs (`GitClone.refs`): which PRs there are and where their heads are. The refs
    are read once per clone opened: a run's one view of them."""

    def __init__(self, path: Path, run: Callable[..., str],
                 pipe: Callable[[Sequence[str], str | bytes], bytes], also: Sequence[str] = ()) -> None:
        self.path = path
        self._run, self.pipe = run, pipe
        self._also = also
        """Refs outside refs/pull/ and refs/remotes/ listed with the PR refs (the default branch's
        candidates), for `present`."""

    def pr_head(self, number: int) -> tuple[str, str]:
        """(ref name, head sha) of a PR, from refs/pull/N/head or refs/remotes/*/pr/N."""
        row = self._pr_ref_table.get(number)
        if row is None:
            raise InputError(
                f"PR #{number} is not in the clone {self.path} (no refs/pull/{number}/head); "
                f"fetch it with: {self.fetch_command(number)}"
            )
        return row

    def fetch_command(self, number: int) -> str:
        """The command that fetches PR `number`'s head into this clone, from `pr_remote`."""
        return f"git -C {self.path} fetch {self.pr_remote} '+refs/pull/{number}/head:refs/pull/{number}/head'"

    @cached_property
    def pr_remote(self) -> str:
        """Where the PR refs come from: the remote most of the clone's refs/remotes/R/pr/N are
        under, else `upstream` (the project, where origin is a fork that has no PR refs), else
        `origin`, else the only remote; a clone without remotes gets the project's URL to fill in."""
        remotes = self._run("remote").split()
        under = Counter(ref.split("/")[2] for ref, _ in self._all_pr_ref_rows if ref.startswith("refs/remotes/"))
        for name, _ in under.most_common():
            if name in remotes:
                return name
        for name in ("upstream", "origin"):
            if name in remotes:
                return name
        return remotes[0] if len(remotes) == 1 else "https://github.com/OWNER/NAME.git"

    def pr_ref_rows(self, *filters: str) -> list[tuple[str, str]]:
        """(ref name, head sha) of every PR ref in for-each-ref's order, filtered by for-each-ref
        options (unfiltered: read once)."""
        return self._read_pr_ref_rows(*filters) if filters else self._all_pr_ref_rows

    def present(self, names: Iterable[str]) -> set[str]:
        """Which of these refs (under refs/remotes/, or given as `also`) the clone has."""
        listed = {ref for ref, _ in self._listing}
        return {name for name in names if name in listed}

    @cached_property
    def _listing(self) -> list[tuple[str, str]]:
        """(ref name, object id) of every ref under refs/pull/ and refs/remotes/ and of the refs
        `also` names, in one git call (a run's one view of them)."""
        return self._rows(self._run("for-each-ref", "--format=%(refname) %(objectname)",
                                    "refs/pull/", "refs/remotes/", *self._also))

    @cached_property
    def _all_pr_ref_rows(self) -> list[tuple[str, str]]:
        return [(ref, sha) for ref, sha in self._listing if pr_number_of_ref(ref) is not None]

    def _read_pr_ref_rows(self, *filters: str) -> list[tuple[str, str]]:
        out = self._run("for-each-ref", "--format=%(refname) %(objectname)", *filters,
                        "refs/pull/", "refs/remotes/")
        return [(ref, sha) for ref, sha in self._rows(out) if pr_number_of_ref(ref) is not None]

    @staticmethod
    def _rows(out: str) -> list[tuple[str, str]]:
        return [(ref, sha) for ref, _, sha in (line.partition(" ") for line in out.splitlines())]

    def pr_ref_rows_holding(self, shas: Sequence[str], oldest: int) -> list[tuple[str, str]]:
        """(ref name, head sha) of the PR refs whose head holds one of `shas`, the oldest of which
        was committed at `oldest` (unix seconds; 0 when unknown), in for-each-ref's order.

        A head committed more than a day (git's own slop for clock skew) before a commit cannot
        hold it, so git's --contains is asked only of the heads committed since: without a
        commit-graph it walks from every ref it is given, and the old ones cost most (0.70 s among
        fastapi's 6,474 PR refs for a recent PR's first commit; 0.10 s with the dates read first)."""
        contains = [f"--contains={s}" for s in shas]
        recent = self._heads_since(oldest)
        if len(recent) == len(self._pr_ref_heads):
            return self.pr_ref_rows(*contains)
        rows: list[tuple[str, str]] = []
        for at in range(0, len(recent), _REFS_PER_CALL):  # git matches every ref to every name given
            out = self._run("for-each-ref", "--format=%(refname) %(objectname)", *contains,
                            *recent[at : at + _REFS_PER_CALL])
            rows += ((ref, sha) for ref, _, sha in (line.partition(" ") for line in out.splitlines()))
        return [(ref, sha) for ref, sha in rows if pr_number_of_ref(ref) is not None]

    def _heads_since(self, oldest: int) -> list[str]:
        """The PR refs whose head can hold a commit of time `oldest` (unix seconds; 0: every PR
        ref): committed at most CLOCK_SKEW before it, or with no commit date (a tag object)."""
        since = oldest - CLOCK_SKEW if oldest > 0 else 0
        return [ref for ref, when, _, _ in self._pr_ref_heads if not since or not when or when >= since]

    @cached_property
    def _pr_ref_heads(self) -> list[tuple[str, int, str, str]]:
        """Of every PR ref's head commit, in one git call (it reads each head once): (ref name,
        committer date, subject, commit-id and Change-Id trailer values joined by commas)."""
        out = self._run(
            "for-each-ref",
            "--format=%(refname)%00%(committerdate:unix)%00%(subject)%00"
            "%(trailers:key=commit-id,key=Change-Id,valueonly,separator=%x2C)",
            "refs/pull/", "refs/remotes/",
        )
        heads = []
        for line in out.splitlines():
            ref, when, subject, trailers = (*line.split("\0", 3), "", "", "")[:4]
            if pr_number_of_ref(ref) is not None:
                heads.append((ref, int(when) if when.isdigit() else 0, subject, trailers))
        return heads

    @staticmethod
    def pick_pr_refs(rows: Iterable[tuple[str, str]]) -> dict[int, str]:
        """PR number -> head sha of PR ref rows; where a PR has several refs, refs/pull/N/head wins."""
        return {n: sha for n, (_, sha) in _pick(rows).items()}

    def _pr_ref_rows(self, *filters: str) -> dict[int, tuple[str, str]]:
        """PR refs (filtered by for-each-ref options): number -> (ref name, head sha); where a PR
        has several refs, refs/pull/N/head wins."""
        return _pick(self.pr_ref_rows(*filters))

    def _pr_refs(self, *filters: str) -> dict[int, str]:
        return {n: sha for n, (_, sha) in self._pr_ref_rows(*filters).items()}

    @cached_property
    def _pr_ref_table(self) -> dict[int, tuple[str, str]]:
        """Every PR ref of the clone, read once."""
        return self._pr_ref_rows()

    @cached_property
    def pr_refs(self) -> dict[int, str]:
        """Every PR ref of the clone: number -> head sha (read once)."""
        return {n: sha for n, (_, sha) in self._pr_ref_table.items()}

    def prs_pointing_at(self, sha: str) -> dict[int, str]:
        """PRs whose head is exactly `sha`."""
        return {n: head for n, head in self.pr_refs.items() if head == sha}

    def prs_containing(self, sha: str, *, not_containing: str | None = None) -> dict[int, str]:
        """PRs whose head has `sha` in its history (and not `not_containing`): number -> head."""
        extra = (f"--no-contains={not_containing}",) if not_containing else ()
        return self._pr_refs(f"--contains={sha}", *extra)

    def pr_head_hints(self) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
        """Of every PR ref's head commit: subject -> PRs, and commit-id / Change-Id trailer value
        -> PRs (spr and Gerrit-style stacks keep these across rebases)."""
        subjects: dict[str, list[int]] = {}
        ids: dict[str, list[int]] = {}
        for ref, _, subject, trailers in self._pr_ref_heads:
            number = pr_number_of_ref(ref)
            keys = [(subjects, subject)] + [(ids, t.strip()) for t in trailers.split(",")]
            for index, key in keys:
                if key and number is not None and number not in index.get(key, []):
                    index.setdefault(key, []).append(number)
        return subjects, ids

    def pr_commit_subjects(self, default: str, authored: int = 0) -> dict[str, list[int]]:
        """Subject of every commit not in `default` of the PR refs that can hold a commit
        authored at `authored` (unix seconds; 0: every PR ref) -> PRs that reach it (one git call;
        each commit is named under the first PR ref that reached it).

        A head committed more than a day before `authored` cannot hold such a commit (a commit is
        committed after it is authored, a descendant after its parent, within git's day of slop),
        so the older heads are not walked: among fastapi's 6,474 PR refs that walk is most of it."""
        refs = self._heads_since(authored)
        out = self.pipe(["log", "--source", "--format=%S%x00%s", "--stdin"],
                        "".join(f"{ref}\n" for ref in refs) + f"^{default}\n").decode("utf-8", "surrogateescape")
        index: dict[str, list[int]] = {}
        for line in out.splitlines():
            ref, _, subject = line.partition("\0")
            number = pr_number_of_ref(ref)
            if number is not None and number not in index.get(subject, []):
                index.setdefault(subject, []).append(number)
        return index


def _pick(rows: Iterable[tuple[str, str]]) -> dict[int, tuple[str, str]]:
    """PR number -> (ref name, head sha); where a PR has several refs, refs/pull/N/head wins."""
    found: dict[int, tuple[str, str]] = {}
    for ref, sha in rows:
        number = pr_number_of_ref(ref)
        if number is not None and (number not in found or ref.startswith("refs/pull/")):
            found[number] = (ref, sha)
    return found
