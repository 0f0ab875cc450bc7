"""Choose the lineage bench's reverted PRs from the snapshots (deterministic): reverts.tsv.

    PRSTACK_REALWORLD_MIRRORS=/work/.mirror python bench/lineage/pick_reverts.py > bench/lineage/reverts.tsv
    python bench/lineage/run.py --cases bench/lineage/reverts.tsv

A case is a PR that landed as pick.py's cases do (merge commit or squash of refs/pull/N/head, adding lines
to a shipped file) and that a later commit of the default branch reverts: its message says "This reverts
commit LANDING" (git revert's own words), and no commit reverts that revert; a landing that reverts
another is no case. Its releases (with a wheel):
- tag_held: the oldest release holding the landing and not the revert ("-" when none: reverted before
  any release);
- tag_reverted: the oldest release holding the revert;
- tag_before: the newest release below the landing's first release on the default branch, holding neither
  the landing nor the PR's head.
The oracle: a release holds the PR when `git merge-base --is-ancestor` says it holds the landing and not the
revert (so exit 0 for tag_held, 1 for tag_reverted and tag_before). A PR landed again later under another
number (fastapi #12127, again as #12129) is judged here by its own landing alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lineage import PROJECTS, git, is_ancestor
from pick import REVERTS_COMMIT, History, Landing

COLUMNS = ("repo", "pr", "head", "base", "landing", "how", "revert", "tag_held", "tag_reverted", "tag_before")


def reverts(h: History) -> dict[str, str]:
    """Reverted commit (as the message abbreviates it) -> the default branch's commit reverting it."""
    out: dict[str, str] = {}
    log = git(h.m, "log", "--first-parent", "--reverse", "--format=%H%x00%B%x1e", h.p.default)
    for entry in log.split("\x1e"):
        if "\0" in entry:
            commit, msg = entry.strip("\n").split("\0", 1)
            for sha in REVERTS_COMMIT.findall(msg):
                out.setdefault(sha, commit)
    return out


def case(h: History, x: Landing, reverted_by: dict[str, str]) -> dict[str, str] | None:
    revert = next((r for sha, r in reverted_by.items() if x.commit.startswith(sha)), None)
    if revert is None or any(revert.startswith(sha) for sha in reverted_by) or x.commit in reverted_by.values():
        return None  # not reverted, its revert reverted in turn, or a revert itself
    head = x.parents[1] if x.how == "merge" else h.pulls.get(x.pr)
    if head is None or (x.how == "merge" and h.pulls.get(x.pr) != head):
        return None
    if x.how == "squash" and is_ancestor(h.m, head, x.commit):
        return None
    base = git(h.m, "merge-base", x.parents[0], head, check=False).strip()
    if not base or not h.ships_additions(base, head, x):
        return None
    holding = set(git(h.m, "tag", "--contains", x.commit).split())
    reverting = set(git(h.m, "tag", "--contains", revert).split())
    first = next((t for t in h.releases if t in holding), None)
    reverted = next((t for t in h.releases if t in reverting), None)
    if first is None or reverted is None:
        return None
    held = next((t for t in h.releases if t in holding and t not in reverting), "-")
    below = [t for t in h.mainline if h.rank[t] < h.rank[first] and t not in holding]
    if not below or is_ancestor(h.m, head, below[-1]):
        return None
    return {"repo": h.p.repo, "pr": str(x.pr), "head": head, "base": base, "landing": x.commit, "how": x.how,
            "revert": revert, "tag_held": held, "tag_reverted": reverted, "tag_before": below[-1]}


def main() -> int:
    print("\t".join(COLUMNS))
    for repo in sorted(PROJECTS):
        h = History(PROJECTS[repo])
        reverted_by = reverts(h)
        for x in h.landings:
            c = case(h, x, reverted_by)
            if c is not None:
                print("\t".join(c[k] for k in COLUMNS), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
