"""From a clone and an onto-point (a ref or an installed target) to a plan, and the combined patch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prstack.audit import audit_opened
from prstack.errors import InputError, Option
from prstack.models import PRStatus
from prstack.placement.paths import PathMap, Placement
from prstack.plan.planner import STUCK, make_plan, plan_order
from prstack.plan.values import Known, Lack, Onto, OntoKind, Plan
from prstack.sources.git.changes import StackChanges
from prstack.sources.git.held import Landings
from prstack.sources.git.merges import PlanGit
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets.base import TargetSpec
from prstack.targets.confined import Unreadable
from prstack.targets.spec import onto_or_target


def held_merged(source: GitClone, changes: StackChanges, ref: str, name: str) -> dict[int, str]:
    """Why `ref` already holds each merged PR of the stack that it holds (lineage after merge: its
    landing, or a cherry-pick of it, in the ref's history and not taken back)."""
    landings = Landings.of(source, changes)
    if landings is None:
        return {}
    out = {}
    for number, landed in landings.landed.items():
        holding = landings.holding(number, ref)
        if holding.holds and holding.via is not None:
            out[number] = (f"merged ({landed.how}): {name} holds its landing {holding.via[:10]}"
                           + (f", first released in {landed.first_release}" if landed.first_release else ""))
    return out


@dataclass(frozen=True)
class PlanRequest:
    """What a plan is asked: the stack of a clone's PRs, onto a ref of the clone or onto an installed
    target (one of the two)."""

    prs: ClonePRs
    onto: str | None = None
    target: TargetSpec | None = None


def plan_stack(request: PlanRequest) -> Plan:
    """Load the stack of the request's PRs and plan it onto its ref or its installed target (judged
    by the audit itself: the same PRs, hunks and verdicts as `prstack audit`)."""
    prs, onto, target = request.prs, request.onto, request.target
    onto_or_target(onto, target is not None, "an onto-point")
    source = prs.git
    changes = prs.load().finish()
    order = plan_order(prs.numbers, changes.stack.parents)
    git = PlanGit(source)
    if onto is not None:
        sha = source.resolve(onto)
        start = Onto(OntoKind.REF, onto, sha, git.tree_of(sha), sha)
        known = Known(held=held_merged(source, changes, sha, onto))
    elif target is not None:
        start, present, lacking = _installed_onto(prs, git, changes, order, target)
        known = Known(present, lacking)
    else:
        raise InputError("no onto-point: give ", Option("onto"), " REF, or a target (", Option("installed"), ", ",
                         Option("site_packages"), ", ", Option("wheel"), ", ", Option("tree"),
                         ") to plan onto what is installed.")
    return make_plan(git, start, changes, order, known)


def _installed_onto(prs: ClonePRs, git: PlanGit, changes: StackChanges, order: Sequence[int],
                    spec: TargetSpec) -> tuple[Onto, dict[int, str], dict[int, Lack]]:
    """The onto-point of an installed target: its build commit when the clone has it, otherwise
    its files (those the PRs touch) over the commit the present PRs reach. With it, from an audit
    of the target: PRs whose every shipped hunk is applied (present, when there is no build
    commit), and PRs with shipped hunks missing (never present, whatever the history says)."""
    source = prs.git
    report, tgt = audit_opened(prs, spec)
    repo_files = prs.repo_files(changes, ())
    paths = sorted({h.path for h in changes.hunks}
                   | {h.old_path for h in changes.hunks if h.old_path})
    info = tgt.info
    present = {
        r.pr.number: "every shipped hunk is applied in the target"
        for r in report.prs if r.status is PRStatus.APPLIED
    }
    missing = [r.hunk for r in report.results if r.status.shipped and not r.status.present]
    lacking = {
        number: Lack(
            sum(h.pr == number for h in missing),
            tuple(sorted({p for h in missing if h.pr == number for p in (h.path, h.old_path) if p})),
        )
        for number in sorted({h.pr for h in missing})
    }
    unknown = ""
    if info.vcs_commit:
        try:
            sha = source.resolve(info.vcs_commit)
        except InputError:
            unknown = f"its build commit {info.vcs_commit[:12]} is not in the clone; "
        else:
            return Onto(OntoKind.INSTALLED, info.path, sha, git.tree_of(sha), sha, info,
                        f"built from {sha[:12]} (from its metadata)"), {}, lacking
    by_number = {pr.number: pr for pr in changes.prs}
    start = by_number[order[0]].base_sha
    for number in order:
        below = [number, *by_number[number].depends_on]
        if all(n in present for n in below):
            start = by_number[number].head_sha
    pathmap = PathMap(tgt.files(), repo_files)
    files: dict[str, bytes] = {}
    for path in paths:
        location = pathmap.locate(path)
        if location.placement is Placement.SHIPPED and location.installed_path:
            try:
                data = tgt.read(location.installed_path)
            except Unreadable:  # a symlink out of the target, a FIFO, a file over the cap: not taken
                continue
            if data is not None:
                files[path] = data
    tree = git.overlay(start, files)
    sha = git.commit_tree(tree, [start], "prstack plan: installed files")
    note = unknown or "no build commit in its metadata; "
    note += f"planned onto its files over {start[:12]}, PRs judged present by their hunks"
    return Onto(OntoKind.INSTALLED, info.path, sha, tree, start, info, note), present, lacking


def combined_patch(source: GitClone, plan: Plan) -> bytes | None:
    """The combined diff of every clean pick, under a few lines saying what it holds (which
    `git apply` skips): `git apply` takes it on the onto-point's tree. None when it changes
    nothing there (a patch file holds a patch or is not written)."""
    diff = PlanGit(source).diff_trees(plan.onto.tree, plan.result_tree)
    if not diff.strip():
        return None
    held = ", ".join(f"#{p.pr.number}" for p in plan.prs if p.picks) or "no PR"
    header = f"prstack plan: the changes of {held} onto {plan.onto.name} ({plan.onto.sha[:12]})\n"
    left = [f"#{p.pr.number} ({p.status.value})" for p in plan.prs if p.status in STUCK]
    if left:
        header += f"left out: {', '.join(left)}\n"
    return header.encode() + b"\n" + diff
