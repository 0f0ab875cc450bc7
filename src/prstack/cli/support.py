"""What the command line needs besides its commands: PR arguments, targets, output streams, progress, errors."""

from __future__ import annotations

import os
import re
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prstack.errors import InputError, Option, PrstackError
from prstack.models import TargetKind

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

    from prstack.cli.next_steps import AuditCall
    from prstack.match.report import AuditReport
    from prstack.placement.forge import RepoId
    from prstack.targets.base import TargetSpec

DEBUG_ENV = "PRSTACK_DEBUG"
_PR_URL = re.compile(r"https?://[^/\s]+/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/pull/(\d+)(?:[/?#].*)?")
_PR_NUMBER = re.compile(r"#?(\d+)")


def parse_prs(values: Sequence[str], repo: str | None) -> tuple[list[int], str | None]:
    """PR arguments as numbers: `3712`, `#3712` or a PR URL (which also names the repository)."""
    numbers: list[int] = []
    named = repo
    for value in values:
        if m := _PR_NUMBER.fullmatch(value.strip()):
            numbers.append(int(m.group(1)))
            continue
        if not (u := _PR_URL.fullmatch(value.strip())):
            raise InputError(
                f"{value!r} is not a PR: give its number (3712), #3712 or its URL "
                "(https://github.com/OWNER/NAME/pull/3712)."
            )
        url_repo = f"{u.group(1)}/{u.group(2)}"
        if named is not None and named.lower() != url_repo.lower():
            raise InputError(f"{value} is a PR of {url_repo}, not of {named}; give PRs of one repository.")
        named = url_repo
        numbers.append(int(u.group(3)))
    return numbers, named


@dataclass(frozen=True)
class SourceOptions:
    """The options that name where the PRs come from, as given: --git, --repo, --api-url,
    --offline, --base."""

    git: Path | None = None
    repo: str | None = None
    api_url: str | None = None
    offline: bool = False
    base: str | None = None


def audit_call(prs: Sequence[str], source: Sequence[str], target: TargetSpec, *,
               fmt: str = "table", verbose: bool = False, plannable: bool = True) -> AuditCall:
    """The audit as it was run, as the argument lists its next steps are built from. `source` is
    the PR source's options as given (--git PATH, --repo, --api-url, --offline, --base; --patch)."""
    from prstack.cli.next_steps import AuditCall

    where = (f"--{target.kind.value}",) + ((target.path,) if target.path is not None else ())
    where += ("--dist", target.dist) if target.dist else ()
    where += ("--platform", target.platform) if target.platform else ()
    where += ("--python-path", target.python_path) if target.python_path else ()
    shown = ("--format", fmt) if fmt != "table" else ()
    return AuditCall(
        rerun=("prstack", "audit", *prs, *source, *where, *shown),
        plan=("prstack", "plan", *prs, *source, *where) if plannable and target.kind is not TargetKind.IMAGE else None,
        target_kind=target.kind, target_path=target.path, verbose=verbose)


@dataclass(frozen=True)
class FoundSource:
    """The PR source to read, and the sentence saying where it was found (None when given)."""

    options: SourceOptions
    said: str | None = None

    def noted(self, report: AuditReport) -> AuditReport:
        """The report, its Build: line saying where the PRs were read from when prstack found it."""
        if self.said is None or report.build is None:
            return report
        return replace(report, build=replace(report.build, header=f"{report.build.header}; {self.said}"))


def found_source(given: SourceOptions, spec: TargetSpec | None, numbers: Sequence[int]) -> FoundSource:
    """Where the PRs are read from: --git or --repo as given; else where the target's own records
    say its project came from (a distribution installed from a PR's ref or from a clone holding the
    PRs, never prstack's own dependencies): that clone, read as --git reads one, or that repository
    on GitHub (or GitHub Enterprise). Without either, the source as given (the repository is then
    inferred from the target's metadata, as before)."""
    if given.git is not None or given.repo is not None or spec is None or not numbers:
        return FoundSource(given)
    from prstack.placement.installed_from import find_project, worth_asking
    from prstack.targets.repos import install_records

    records = install_records(spec, numbers)
    asked = worth_asking(records, numbers, spec.dist)
    heads = {r.source: _pr_heads(r.repo, numbers, given) for r in asked if r.repo is not None}
    found = find_project(records, numbers, spec.dist, heads)
    if found is None:
        return FoundSource(given)
    if found.clone is not None:
        said = f"{found.reason}: the PRs were read from that clone, as --git reads one"
        return FoundSource(replace(given, git=Path(found.clone)), said)
    if found.repo is None:
        return FoundSource(given)
    repo = found.repo
    named = repo.full_name if repo.host == "github.com" else f"https://{repo.host}/{repo.full_name}"
    return FoundSource(replace(given, repo=named),
                       f"{found.reason}: the PRs were read from {repo.host}/{repo.full_name}")


def _pr_heads(repo: RepoId, numbers: Sequence[int], given: SourceOptions) -> dict[int, tuple[str, str]]:
    """PR number -> (head commit, head branch) as `repo` says (the cache alone with --offline); the
    PRs it does not answer for (another project's, an error) are left out."""
    from prstack.sources.github.access import Access
    from prstack.sources.github.cache import Cache
    from prstack.sources.open import _github  # the one place GitHub's token and host rules are

    heads = {}
    try:
        gh = _github(repo, Cache(), Access(given.api_url, offline=given.offline))
        for number in numbers:
            try:
                meta = gh.pull(number)
            except PrstackError:
                continue
            heads[number] = (meta.head_sha, meta.head_ref)
    except PrstackError:
        return heads
    return heads


def source_options(source: SourceOptions) -> tuple[str, ...]:
    """The PR source's options as given, to repeat them in the commands a report suggests."""
    given = (("--git", str(source.git) if source.git is not None else None), ("--repo", source.repo),
             ("--api-url", source.api_url), ("--base", source.base))
    return tuple(arg for name, value in given if value is not None for arg in (name, value)) + (
        ("--offline",) if source.offline else ())


def check_interpreter(python: str) -> None:
    """Refuse what is not a file that could run: an empty string, a folder, a file without execute rights."""
    path = Path(python)
    if not python.strip() or not path.is_file() or not os.access(path, os.X_OK):
        raise InputError(f"--python {python!r} is not an executable Python interpreter; "
                         "give the path of one, e.g. /opt/venv/bin/python.")


PIPED_WIDTH = 80
"""Columns of output to a pipe or a file without COLUMNS (a CI log), as rich's default."""


def console() -> Console:
    """Standard output as wide as the terminal, or as COLUMNS says; a pipe or a file without
    COLUMNS gets PIPED_WIDTH (never the width of a terminal the input or errors happen to be on)."""
    from rich.console import Console

    piped = not sys.stdout.isatty() and not os.environ.get("COLUMNS", "").strip()
    return Console(width=PIPED_WIDTH) if piped else Console()


def show(rendered: RenderableType | str, out: Console | None = None) -> None:
    """Text formats (JSON, markdown, dot...) go to stdout as they are; rich renderables through a
    Console, not cropped (renderers fit the width themselves, and keep commands to copy whole)."""
    if isinstance(rendered, str):
        sys.stdout.write(rendered)
        sys.stdout.flush()
    else:
        (out or console()).print(rendered, crop=False)


def as_text(rendered: RenderableType | str, width: int = PIPED_WIDTH) -> str:
    """What `show` would print, as plain text for a file (a rich renderable without colours)."""
    if isinstance(rendered, str):
        return rendered
    import io

    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, force_terminal=False).print(rendered, crop=False)
    return buffer.getvalue()


def tolerant_streams() -> None:
    """Whatever stdout/stderr cannot encode (a lone surrogate, a non-UTF-8 locale) is replaced, never fatal."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")


def quiet_libraries() -> None:
    """Libraries' warnings and log lines stay off stderr, which holds prstack's one line (PRSTACK_DEBUG=1: shown)."""
    if debugging():
        return
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)


def debugging() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _shows_progress() -> bool:
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


class _RichSteps:
    """Library steps shown as one line of rich's progress on stderr: the step, and a bar when its size is known."""

    def __init__(self, bar: RichProgress) -> None:
        self._bar = bar
        self._task: TaskID = bar.add_task("starting", total=None)

    def step(self, label: str, done: int = 0, total: int | None = None) -> None:
        from prstack.render.text import clean

        self._bar.update(self._task, description=clean(label), completed=done, total=total)


@contextmanager
def progress_shown() -> Iterator[None]:
    """Show the library's progress on stderr when it is a terminal (not TERM=dumb); nothing otherwise."""
    if not _shows_progress():
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn

    from prstack import progress

    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   console=Console(stderr=True), transient=True)
    with bar, progress.reporting_to(_RichSteps(bar)):
        yield


def as_flag(option: Option) -> str:
    """How the command line names an input in a message: its flag, `site_packages` as `--site-packages`."""
    return "--" + option.name.replace("_", "-")


def fail(message: str) -> int:
    from prstack.render.text import clean
    from prstack.sources.github.urls import scrub

    sys.stderr.write(f"prstack: error: {clean(scrub(message))}\n")  # no URL's credentials, ever
    sys.stderr.flush()
    return 2


def crashed(exc: BaseException) -> int:
    """An exception nobody expected: one line that says it is a bug, the traceback only on request."""
    if debugging():
        traceback.print_exception(exc, file=sys.stderr)
    where = "" if debugging() else f"; run with {DEBUG_ENV}=1 to see the traceback"
    return fail(f"internal error, a bug in prstack ({type(exc).__name__}: {exc}){where}, and please report it.")


def usage_error(exc: Any) -> int:
    """A click usage error as one line, with the help command to run."""
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else "prstack"
    return fail(f"{exc.format_message()} (see '{path} --help').")
