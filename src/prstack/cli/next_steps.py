"""What the reader of an audit does next: which PRs are not fully in the target, and commands that work."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

from prstack.cli.targets import reinstall
from prstack.match.report import AuditReport
from prstack.models import TargetKind

if TYPE_CHECKING:  # (imported by the steps' makers: a JSON audit makes none)
    from prstack.render.summary import Lacking, Step, Summary

PATCH_FILE = "missing.patch"

@dataclass(frozen=True)
class AuditCall:
    """The audit as it was run, as argument lists the next steps are built from."""

    rerun: tuple[str, ...]
    """The command that runs this audit again: ("prstack", "audit", "40898", "--git", "~/src/vllm", ...)."""
    plan: tuple[str, ...] | None = None
    """`prstack plan` of the same PRs onto the same target, or None where plan cannot run (patch files)."""
    target_kind: TargetKind | None = None
    target_path: str | None = None
    """The target as given (None for --installed), for the command that reinstalls it."""
    verbose: bool = False
    """The audit listed every hunk already."""


def lacking(report: AuditReport) -> tuple[Lacking, ...]:
    """The PRs of `report` with a shipped hunk not present (a file that could not be read counts
    as shipped and not present), in stack order."""
    from prstack.render.summary import Lacking

    out = []
    for p in report.prs:
        mine = [r for r in report.results if r.hunk.pr == p.pr.number and (r.status.shipped or r.unread)]
        absent = sum(not r.status.present for r in mine)
        if absent:
            out.append(Lacking(p.pr.number, p.status, absent, len(mine), sum(r.unread for r in mine)))
    return tuple(out)


def summary(report: AuditReport, call: AuditCall | None) -> Summary:
    """Which PRs of `report` lack shipped hunks, and the steps: a patch of those hunks (`prstack
    plan ... --emit-patch`), the command that rebuilds or reinstalls the target, every hunk (`--verbose`)."""
    from prstack.render.summary import Summary

    missing = lacking(report)
    ships = any(r.status.shipped or r.unread for r in report.results)
    if call is None:
        return Summary(missing, len(report.prs), (), ships)
    steps: list[Step] = []
    if missing and call.plan is not None:
        steps.append(_step(((*call.plan, "--emit-patch", PATCH_FILE),),
                           "writes the hunks the target lacks as one patch"))
        if (again := reinstall(call.target_kind, call.target_path)) is not None:
            steps.append(_step((("git", "apply", PATCH_FILE), again),
                               "in a checkout of the source the target was built from"))
    if not call.verbose:
        steps.append(_step(((*call.rerun, "--verbose"),), "lists every hunk, applied ones too"))
    return Summary(missing, len(report.prs), tuple(steps), ships)


LOCAL_PATH_NAMES = {"--git": "PATH", "--tree": "DIR", "--site-packages": "DIR", "--wheel": "FILE",
                    "--python": "PY", "--patch": "FILE", "--image": "FILE", "--target": "DIR", "-w": "DIR"}
"""What a local path given after each option is called where it must not be shown (a PR comment)."""


def _step(commands: tuple[tuple[str, ...], ...], why: str) -> Step:
    from prstack.render.summary import Step

    return Step(commands, why, without_local_paths(commands))


def without_local_paths(commands: tuple[tuple[str, ...], ...]) -> str:
    """`commands` joined as a shell line, with every local path (this machine's, meaningless in a PR
    comment) named by its option's metavar instead: whatever follows a path option, relative or absolute
    (`--git PATH`, `--site-packages DIR`), and any other absolute path; an interpreter as python."""
    shown = []
    for args in commands:
        out = []
        for i, arg in enumerate(args):
            absolute = PurePath(arg).is_absolute() or arg.startswith("~")
            if absolute and i == 0:
                arg = "python"
            elif i > 0 and (absolute or args[i - 1] in LOCAL_PATH_NAMES):
                arg = LOCAL_PATH_NAMES.get(args[i - 1], "PATH")
            out.append(arg)
        shown.append(shlex.join(out))
    return " && ".join(shown)
