"""What the reader of an audit does next: which PRs are not fully in the target, and commands that work."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import PurePath

from prstack.models import PRStatus, TargetKind
from prstack.report import AuditReport

PATCH_FILE = "missing.patch"
LISTED = 5
"""PRs named in the summary's sentence; past it, "and N more"."""


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


@dataclass(frozen=True)
class Step:
    """One next step: shell commands run one after the other (`&&`) and what they do."""

    commands: tuple[tuple[str, ...], ...]
    why: str

    @property
    def command(self) -> str:
        return " && ".join(shlex.join(args) for args in self.commands)


@dataclass(frozen=True)
class Lacking:
    """A PR with shipped hunks that are not present."""

    number: int
    status: PRStatus
    not_present: int
    shipped: int


@dataclass(frozen=True)
class Summary:
    """The audit's conclusion: the PRs not fully in the target and what to run next."""

    lacking: tuple[Lacking, ...]
    """PRs with a shipped hunk that is not present, in stack order."""
    checked: int
    """PRs audited."""
    steps: tuple[Step, ...]
    ships: bool = True
    """Whether any PR audited has a hunk in a file the target ships."""

    def sentence(self) -> str:
        """"Not fully in the target: #40727 (partial: 1 of 2 shipped hunks not present)." or the all-clear."""
        if not self.lacking:
            if not self.ships:
                return (f"The {self.checked} PR(s) audited ship nothing: no hunk of theirs is in a file the "
                        "target ships.")
            return f"Every shipped hunk of the {self.checked} PR(s) audited is in the target."
        named = [f"#{p.number} ({p.status.value}: {p.not_present} of {p.shipped} shipped hunks not present"
                 + (", some of their lines are there)" if p.status is PRStatus.PARTIAL and p.not_present == p.shipped
                    else ")")
                 for p in self.lacking[:LISTED]]
        more = len(self.lacking) - LISTED
        return "Not fully in the target: " + ", ".join(named) + (f" and {more} more" if more > 0 else "") + "."


def lacking(report: AuditReport) -> tuple[Lacking, ...]:
    """The PRs of `report` with a shipped hunk not present (a file that could not be read counts
    as shipped and not present), in stack order."""
    out = []
    for p in report.prs:
        mine = [r for r in report.results if r.hunk.pr == p.pr.number and (r.status.shipped or r.unread)]
        absent = sum(not r.status.present for r in mine)
        if absent:
            out.append(Lacking(p.pr.number, p.status, absent, len(mine)))
    return tuple(out)


def summary(report: AuditReport, call: AuditCall | None) -> Summary:
    """Which PRs of `report` lack shipped hunks, and the steps: a patch of those hunks (`prstack
    plan ... --emit-patch`), the command that rebuilds or reinstalls the target, every hunk (`--verbose`)."""
    missing = lacking(report)
    ships = any(r.status.shipped or r.unread for r in report.results)
    if call is None:
        return Summary(missing, len(report.prs), (), ships)
    steps: list[Step] = []
    if missing and call.plan is not None:
        steps.append(Step(((*call.plan, "--emit-patch", PATCH_FILE),),
                          "writes the hunks the target lacks as one patch"))
        if (again := reinstall(call.target_kind, call.target_path)) is not None:
            steps.append(Step((("git", "apply", PATCH_FILE), again),
                              "in a checkout of the source the target was built from"))
    if not call.verbose:
        steps.append(Step(((*call.rerun, "--verbose"),), "lists every hunk, applied ones too"))
    return Summary(missing, len(report.prs), tuple(steps), ships)


def reinstall(kind: TargetKind | None, path: str | None) -> tuple[str, ...] | None:
    """The command that puts a patched checkout's build into the target: pip into the interpreter
    or folder it names; for a wheel, the wheel built again beside it; None for a plain tree."""
    if kind is TargetKind.INSTALLED:
        return (sys.executable, "-m", "pip", "install", "--no-deps", "--force-reinstall", ".")
    if kind is TargetKind.PYTHON and path:
        return (path, "-m", "pip", "install", "--no-deps", "--force-reinstall", ".")
    if kind is TargetKind.SITE_PACKAGES and path:
        return ("python", "-m", "pip", "install", "--no-deps", "--upgrade", "--target", path, ".")
    if kind is TargetKind.WHEEL and path:
        return ("python", "-m", "pip", "wheel", "--no-deps", "-w", str(PurePath(path).parent), ".")
    return None


LOCAL_PATH_NAMES = {"--git": "PATH", "--tree": "DIR", "--site-packages": "DIR", "--wheel": "FILE",
                    "--python": "PY", "--patch": "FILE", "--image": "FILE", "--target": "DIR", "-w": "DIR"}
"""What a local path given after each option is called where it must not be shown (a PR comment)."""


def without_local_paths(step: Step) -> str:
    """`step.command` with every local path (this machine's, meaningless in a PR comment) named by
    its option's metavar instead: whatever follows a path option, relative or absolute (`--git PATH`,
    `--site-packages DIR`), and any other absolute path; an interpreter as python."""
    shown = []
    for args in step.commands:
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
