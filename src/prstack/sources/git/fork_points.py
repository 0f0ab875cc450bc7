"""Where a PR's change starts: its fork point from the default branch (a merge base, or the first
parent of the merge that brought it in), and where its own change starts."""

from __future__ import annotations

from prstack.errors import InputError, Option
from prstack.sources.git.repo import GitClone
from prstack.stack.facts import PRFacts


def fork_point(src: GitClone, head: str, default: str) -> str:
    """Where a PR with no parent PR starts: its merge base with the default branch, or — when the
    head is already in the default branch through a merge commit — that merge's first parent's
    merge base with the head."""
    history = src.ancestry.history(default)
    if history.in_default(head):
        merge = src.ancestry.merge_commit_bringing(head, history.default_id)
        base = src.ancestry.merge_base(f"{merge}^1", head) if merge else None
        if base is None or base == head:
            raise InputError(
                f"the head {head[:12]} is already in {default} without a merge commit, so its fork "
                "point is unknown; give it with ", Option("base"), " REF."
            )
        return base
    bases = history.merge_bases(head)
    if not bases and src.shallow:
        deepen = f"git -C {src.path} fetch --unshallow {src.refs.pr_remote}"
        raise InputError(f"the clone {src.path} is shallow and its history stops before the fork point of the head "
                         f"{head[:12]} with {default}; deepen it ({deepen}) or give the fork point with ",
                         Option("base"), " REF.")
    if not bases:
        raise InputError(f"the head {head[:12]} shares no history with {default}; give the fork point with ",
                         Option("base"), " REF.")
    return bases[0]  # of several, the newest (see GitClone.merge_bases)


def own_base(src: GitClone, f: PRFacts) -> str:
    """Where the PR's own change starts (its squash merge is own_base..head): with no PR below it,
    its merge base (its merge bases merged together when it has several), so the default-branch
    changes a merge of the default branch brought in are not part of it; else its first own
    commit's parent."""
    if f.own and len(f.own) == len(f.commits):
        return (src.ancestry.merged_bases(f.merge_bases) if f.merge_bases else None) or f.fork_point
    return f.own[0].parents[0] if f.own[0].parents else f.fork_point
