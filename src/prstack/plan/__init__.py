"""Pre-install planning: in which order PRs go onto a base, which are already in, which conflict.

The plan replays what `git cherry-pick` would do, commit by commit, in memory (through the
`PlanBackend`, whose git implementation is sources/gitplan.py) and decides from the outcomes.
"""

from prstack.plan.model import Conflict, Lack, Onto, Pick, Plan, PlanBackend, PlanStatus, PRPlan
from prstack.plan.planner import Planner, conflict_regions, fits, make_plan, plan_order
from prstack.plan.run import combined_patch, plan_stack

__all__ = [
    "Conflict",
    "Lack",
    "Onto",
    "PRPlan",
    "Pick",
    "Plan",
    "PlanBackend",
    "PlanStatus",
    "Planner",
    "combined_patch",
    "conflict_regions",
    "fits",
    "make_plan",
    "plan_order",
    "plan_stack",
]
