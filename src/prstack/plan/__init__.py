"""Pre-install planning: in which order PRs go onto a base, which are already in, which conflict.

The plan replays what `git cherry-pick` would do, commit by commit, in memory (through the
`PlanBackend`, whose git implementation is sources/git/merges.py) and decides from the outcomes;
`prstack.plan.planning` goes from a clone and an onto-point to a plan.
"""

from prstack.plan.planner import Planner, conflict_regions, fits, make_plan, plan_order
from prstack.plan.values import Conflict, Lack, Onto, OntoKind, Pick, Plan, PlanBackend, PlanStatus, PRPlan

__all__ = [
    "Conflict",
    "Lack",
    "Onto",
    "OntoKind",
    "PRPlan",
    "Pick",
    "Plan",
    "PlanBackend",
    "PlanStatus",
    "Planner",
    "conflict_regions",
    "fits",
    "make_plan",
    "plan_order",
]
