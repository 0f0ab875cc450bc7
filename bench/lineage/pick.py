"""Choose the lineage bench's cases from the snapshots alone (deterministic): merged PRs and three releases each.

    PRSTACK_REALWORLD_MIRRORS=/work/.mirror python bench/lineage/pick.py [--per-repo 16] > bench/lineage/cases.tsv

A case is a PR of a project's default branch that landed as a merge commit ("Merge pull request #N from
…", its second parent the snapshot's refs/pull/N/head) or as a squash (one parent, subject ending in
"(#N)", refs/pull/N/head not on the branch), whose own diff (merge base of the head with the landing's
first parent .. head) adds lines to a shipped file (`Project.shipped`) and touches no shipped file the
landing does not, that no commit of the branch reverts (a message naming its landing commit, or a
"revert" line naming #N), with at most MAX_LINES changed shipped lines. Its releases (tags of
`lineage.releases`, those with a PyPI wheel):
- tag_first: the oldest version whose tag holds the landing (`git tag --contains`);
- tag_newest: the newest release; it must hold the landing too;
- tag_before: the newest release below tag_first's version on the default branch's history (a
  maintenance branch may hold the change as a cherry-pick) that holds neither the landing, nor the PR's
  head, nor any commit whose subject ends in "(#N)".
Every case is checked against the oracle as it is written: `git merge-base --is-ancestor LANDING TAG`
exits 0 for tag_first and tag_newest, 1 for tag_before.

The PRs are spread over each project's history: the time from its oldest release with a wheel to its
newest release is cut in --per-repo equal slices, and each slice gives the valid PR landed nearest its
middle; then up to --merges more that landed as merge commits, evenly over the valid ones. Rows are
sorted by project, then PR number.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lineage import COLUMNS, PROJECTS, Project, git, is_ancestor, releases

MAX_LINES = 1500  # changed lines in shipped files: the larger rewrites make the run long and say little more
MERGE = re.compile(r"^Merge pull request #(\d+) from ")
SQUASH = re.compile(r"\(#(\d+)\)\s*$")
REVERTS_COMMIT = re.compile(r"reverts? commit ([0-9a-f]{7,40})", re.IGNORECASE)


@dataclass(frozen=True)
class Landing:
    commit: str
    parents: tuple[str, ...]
    time: int
    pr: int
    how: str  # merge | squash


class History:
    """A project's default branch as the picker reads it: landings, PR heads, reverts, releases."""

    def __init__(self, p: Project) -> None:
        self.p = p
        self.m = p.mirror()
        self.pulls = {int(ref.split("/")[2]): sha for sha, ref in
                      (line.split() for line in git(self.m, "for-each-ref", "--format=%(objectname) %(refname)",
                                                    "refs/pull/*/head").splitlines())}
        self.landings = self._landings()
        self.reverted_prs, self.reverted_commits = self._reverts()
        self.releases = releases(p)
        self.rank = {t: i for i, t in enumerate(self.releases)}  # by version
        on_default = set(git(self.m, "tag", "--merged", p.default).split())
        self.mainline = [t for t in self.releases if t in on_default]

    def _landings(self) -> list[Landing]:
        out = []
        for line in git(self.m, "log", "--first-parent", "--format=%H%x00%P%x00%ct%x00%s", self.p.default).splitlines():
            commit, parents, ct, subject = line.split("\0")
            ps = tuple(parents.split())
            if len(ps) == 2 and (mm := MERGE.match(subject)):
                out.append(Landing(commit, ps, int(ct), int(mm.group(1)), "merge"))
            elif len(ps) == 1 and not subject.lower().startswith("revert") and (sm := SQUASH.search(subject)):
                out.append(Landing(commit, ps, int(ct), int(sm.group(1)), "squash"))
        return sorted(out, key=lambda x: (x.time, x.commit))

    def _reverts(self) -> tuple[set[int], set[str]]:
        """PR numbers named on a line that says "revert", and commits a message says it reverts."""
        prs: set[int] = set()
        commits: set[str] = set()
        for msg in git(self.m, "log", "--format=%B%x1e", self.p.default).split("\x1e"):
            for line in msg.splitlines():
                if "revert" in line.lower():
                    prs.update(int(n) for n in re.findall(r"#(\d+)", line))
                    commits.update(REVERTS_COMMIT.findall(line))
        return prs, commits

    def case(self, x: Landing) -> dict[str, str] | None:
        """The landing as a case, or None when it fails a rule of the module's docstring."""
        head = x.parents[1] if x.how == "merge" else self.pulls.get(x.pr)
        if head is None or (x.how == "merge" and self.pulls.get(x.pr) != head):
            return None
        if x.pr in self.reverted_prs or any(x.commit.startswith(c) for c in self.reverted_commits):
            return None
        if x.how == "squash" and is_ancestor(self.m, head, x.commit):
            return None  # fast-forwarded or rebased: not a squash
        base = git(self.m, "merge-base", x.parents[0], head, check=False).strip()
        if not base or not self.ships_additions(base, head, x):
            return None
        tags = self._tags(x, head)
        if tags is None:
            return None
        first, newest, before = tags
        return {"repo": self.p.repo, "pr": str(x.pr), "head": head, "base": base, "landing": x.commit,
                "how": x.how, "tag_first": first, "tag_newest": newest, "tag_before": before}

    def ships_additions(self, base: str, head: str, x: Landing) -> bool:
        landed = set(git(self.m, "diff", "--no-renames", "--name-only", x.parents[0], x.commit).split("\n"))
        added = changed = 0
        for line in git(self.m, "diff", "--no-renames", "--numstat", base, head).splitlines():
            a, d, path = line.split("\t", 2)
            if not self.p.shipped(path):
                continue
            if path not in landed or a == "-":
                return False  # a file the landing leaves alone (the ref moved on), or a binary
            added += int(a)
            changed += int(a) + int(d)
        return added > 0 and changed <= MAX_LINES

    def _tags(self, x: Landing, head: str) -> tuple[str, str, str] | None:
        holding = set(git(self.m, "tag", "--contains", x.commit).split())
        first = next((t for t in self.releases if t in holding), None)
        newest = self.releases[-1]
        if first is None or newest not in holding:
            return None
        below = [t for t in self.mainline if self.rank[t] < self.rank[first] and t not in holding]
        if not below:
            return None
        before = below[-1]
        if is_ancestor(self.m, head, before) or git(self.m, "log", "-n1", "--format=%H", "--fixed-strings",
                                                     f"--grep=(#{x.pr})", before).strip():
            return None
        if not (is_ancestor(self.m, x.commit, first) and is_ancestor(self.m, x.commit, newest)
                and not is_ancestor(self.m, x.commit, before)):
            raise SystemExit(f"{self.p.repo} #{x.pr}: the oracle disagrees with the tags chosen")
        return first, newest, before


def spread(h: History, n: int) -> list[dict[str, str]]:
    """n cases, one per equal slice of time from the oldest release's commit to the newest's: the valid
    landing nearest the slice's middle."""
    start = int(git(h.m, "log", "-n1", "--format=%ct", h.releases[0]).strip())
    end = int(git(h.m, "log", "-n1", "--format=%ct", h.releases[-1]).strip())
    chosen = []
    for i in range(n):
        lo, hi = start + (end - start) * i // n, start + (end - start) * (i + 1) // n
        mid = (lo + hi) // 2
        inside = sorted((x for x in h.landings if lo <= x.time < hi), key=lambda x: (abs(x.time - mid), x.commit))
        c = next((c for c in map(h.case, inside) if c is not None), None)
        if c is not None:
            chosen.append(c)
    return chosen


def merges(h: History, n: int, taken: list[dict[str, str]]) -> list[dict[str, str]]:
    """Up to n more cases that landed as merge commits (rare after a project's first years), evenly
    over its valid ones."""
    have = {c["landing"] for c in taken}
    valid = [c for x in h.landings if x.how == "merge" and x.commit not in have and (c := h.case(x)) is not None]
    return [valid[i * len(valid) // n] for i in range(n)] if len(valid) > n else valid


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-repo", type=int, default=16, help="PRs per project (one per slice of its history)")
    ap.add_argument("--merges", type=int, default=3, help="more PRs per project that landed as merge commits")
    ap.add_argument("--repo", action="append", help="only these owner/name (default: every project)")
    a = ap.parse_args()
    print("\t".join(COLUMNS))
    for repo in a.repo or sorted(PROJECTS):
        h = History(PROJECTS[repo])
        chosen = spread(h, a.per_repo)
        chosen += merges(h, a.merges, chosen)
        for c in sorted(chosen, key=lambda c: int(c["pr"])):
            print("\t".join(c[k] for k in COLUMNS), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
