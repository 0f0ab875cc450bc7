"""The prstack command line: parse, build the parts, run, render, exit. The only place that prints."""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console, RenderableType

from prstack.audit import audit_stack
from prstack.errors import InputError, PrstackError
from prstack.models import AuditReport
from prstack.render import OutputFormat, render_audit
from prstack.render.graph import GraphFormat, render_graph
from prstack.render.hunks import HunksFormat, render_hunks
from prstack.render.text import clean
from prstack.sources.cache import Cache
from prstack.sources.loader import load_stack, read_graph
from prstack.sources.remote import Via, open_source
from prstack.targets import TargetSpec

app = typer.Typer(
    name="prstack",
    help="Are the changes of unmerged, stacked GitHub PRs really in what you installed?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

GitOpt = Annotated[Path | None, typer.Option("--git", help="Local clone holding refs/pull/N/head.")]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", help="table, json or markdown.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="List every hunk, applied ones too.")]
RepoOpt = Annotated[str | None, typer.Option("--repo", help="GitHub OWNER/NAME.")]
ApiUrlOpt = Annotated[
    str | None,
    typer.Option("--api-url", help="GitHub Enterprise API root, e.g. https://ghe.example/api/v3."),
]
ViaOpt = Annotated[Via, typer.Option("--via", help="git (blobless fetch) or api.")]
OfflineOpt = Annotated[bool, typer.Option("--offline", help="Never touch the network.")]


def _target_spec(
    installed: bool, python: str | None, site_packages: Path | None, wheel: Path | None,
    tree: Path | None, dist: str | None,
) -> TargetSpec:
    given = [
        (name, value)
        for name, value in (
            ("--installed", "" if installed else None),
            ("--python", python),
            ("--site-packages", site_packages),
            ("--wheel", wheel),
            ("--tree", tree),
        )
        if value is not None
    ]
    if not given:
        raise InputError(
            "no target: say what to audit with --installed, --python PY, --site-packages DIR, "
            "--wheel FILE or --tree DIR."
        )
    if len(given) > 1:
        names = " and ".join(name for name, _ in given)
        raise InputError(f"{names} both name a target; give exactly one.")
    name, value = given[0]
    kind = {"--installed": "installed", "--python": "python", "--site-packages": "site-packages",
            "--wheel": "wheel", "--tree": "tree"}[name]
    return TargetSpec(kind, str(value) if value != "" else None, dist)


def _console() -> Console:
    """Standard output; a pipe or a file gets a fixed, wide layout instead of 80 columns."""
    return Console() if sys.stdout.isatty() else Console(width=120)


def _emit(console: Console, report: AuditReport, fmt: OutputFormat, verbose: bool) -> int:
    _print(console, render_audit(report, fmt, verbose=verbose))
    return 0 if report.all_present else 1


@app.command()
def audit(
    prs: Annotated[list[int], typer.Argument(help="PR numbers (the stack under them is audited too).")],
    git: GitOpt = None,
    repo: RepoOpt = None,
    api_url: ApiUrlOpt = None,
    via: ViaOpt = Via.GIT,
    installed: Annotated[bool, typer.Option("--installed", help="Audit this interpreter's environment.")] = False,
    python: Annotated[str | None, typer.Option("--python", help="Audit that interpreter's environment.")] = None,
    site_packages: Annotated[
        Path | None, typer.Option("--site-packages", help="Audit a site-packages directory.")
    ] = None,
    wheel: Annotated[Path | None, typer.Option("--wheel", help="Audit a wheel without installing it.")] = None,
    tree: Annotated[Path | None, typer.Option("--tree", help="Audit a plain source tree.")] = None,
    dist: Annotated[str | None, typer.Option("--dist", help="Which distribution (default: inferred).")] = None,
    base: Annotated[str | None, typer.Option("--base", help="Fork point override for the bottom PR.")] = None,
    fmt: FormatOpt = OutputFormat.TABLE,
    offline: OfflineOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Is every hunk of these PRs (and the PRs they stack on) in the target?"""
    spec = _target_spec(installed, python, site_packages, wheel, tree, dist)
    source = open_source(
        prs, git=git, repo=repo, api_url=api_url, offline=offline, spec=spec, via=via
    )
    if source.repo is not None:  # breaks ties between distributions by their Project-URL / direct_url
        spec = replace(spec, repo=source.repo.full_name)
    report = audit_stack(source.git, prs, spec, base, source.meta)
    raise typer.Exit(_emit(_console(), report, fmt, verbose))


def _print(console: Console, rendered: RenderableType) -> None:
    if isinstance(rendered, str):
        console.out(rendered, end="", highlight=False)
    else:
        console.print(rendered)


@app.command()
def graph(
    prs: Annotated[list[int], typer.Argument(help="PR numbers (the stack under them is drawn).")],
    git: GitOpt = None,
    repo: RepoOpt = None,
    api_url: ApiUrlOpt = None,
    offline: OfflineOpt = False,
    fmt: Annotated[
        GraphFormat, typer.Option("--format", help="table, json, dot or mermaid.")
    ] = GraphFormat.TABLE,
) -> None:
    """The stack: which PR builds on which, why, and which parents are merged or stale.

    Exit 1 when a parent is stale, a parent ref is missing or markers form a cycle."""
    source = open_source(prs, git=git, repo=repo, api_url=api_url, offline=offline)
    stack = read_graph(source.git, prs, source.meta)
    _print(_console(), render_graph(stack, fmt))
    troubled = stack.missing or stack.cycles or any(e.stale for e in stack.edges)
    raise typer.Exit(1 if troubled else 0)


@app.command()
def hunks(
    prs: Annotated[list[int], typer.Argument(help="PR numbers (the stack under them is listed).")],
    git: GitOpt = None,
    repo: RepoOpt = None,
    api_url: ApiUrlOpt = None,
    offline: OfflineOpt = False,
    base: Annotated[
        str | None, typer.Option("--base", help="Fork point override for the bottom PR.")
    ] = None,
    fmt: Annotated[
        HunksFormat, typer.Option("--format", help="table or json.")
    ] = HunksFormat.TABLE,
) -> None:
    """Every hunk of the stack with its file, line ranges, commits and PR (no target needed)."""
    source = open_source(prs, git=git, repo=repo, api_url=api_url, offline=offline)
    changes = load_stack(source.git, prs, base, source.meta)
    _print(_console(), render_hunks(changes.prs, changes.hunks, fmt))
    raise typer.Exit(0)


@app.command()
def demo(
    fmt: FormatOpt = OutputFormat.TABLE,
    verbose: VerboseOpt = False,
    keep: Annotated[Path | None, typer.Option("--keep", help="Build the example here and keep it.")] = None,
) -> None:
    """The whole audit on the bundled offline example (no network, no token)."""
    from prstack.demo.run import run_demo

    console = _console()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="prstack-demo-") as tmp:
        workdir = keep or Path(tmp)
        result = run_demo(workdir)
        if fmt is OutputFormat.TABLE:
            console.print(
                f"[bold]prstack demo[/]: PR #40898 (stacked on #40727) audited in a fork's build of kvserve, "
                f"installed in {workdir / 'venv' / 'site-packages'}"
            )
        code = _emit(console, result.report, fmt, verbose)
        if fmt is OutputFormat.TABLE:
            console.print(f"\n{result.verdict()}", highlight=False, markup=False)
            console.print(f"[dim](demo took {time.perf_counter() - started:.1f} s)[/]")
    raise typer.Exit(code)


@app.command()
def plan(
    prs: Annotated[list[int], typer.Argument(help="PR numbers (the stack under them is planned too).")],
    git: GitOpt = None,
    onto: Annotated[str | None, typer.Option("--onto", help="Ref, tag or sha to plan onto.")] = None,
    installed: Annotated[bool, typer.Option("--installed", help="Plan onto this interpreter's environment.")] = False,
    python: Annotated[str | None, typer.Option("--python", help="Plan onto that interpreter's environment.")] = None,
    site_packages: Annotated[
        Path | None, typer.Option("--site-packages", help="Plan onto a site-packages directory.")
    ] = None,
    wheel: Annotated[Path | None, typer.Option("--wheel", help="Plan onto a wheel.")] = None,
    tree: Annotated[Path | None, typer.Option("--tree", help="Plan onto a plain source tree.")] = None,
    dist: Annotated[str | None, typer.Option("--dist", help="Which distribution (default: inferred).")] = None,
    base: Annotated[str | None, typer.Option("--base", help="Fork point override for the bottom PR.")] = None,
    emit_patch: Annotated[Path | None, typer.Option("--emit-patch", help="Write the combined patch here.")] = None,
    emit_script: Annotated[Path | None, typer.Option("--emit-script", help="Write the git commands here.")] = None,
    fmt: FormatOpt = OutputFormat.TABLE,
    repo: Annotated[str | None, typer.Option("--repo", help="GitHub OWNER/NAME.")] = None,
    offline: Annotated[bool, typer.Option("--offline", help="Never touch the network.")] = False,
) -> None:
    """Before installing: the order, what is already in, and what will conflict."""
    from prstack.plan import combined_patch, plan_stack
    from prstack.render.plan import plan_script, render_plan

    has_target = installed or any(v is not None for v in (python, site_packages, wheel, tree))
    if onto is not None and has_target:
        raise InputError("--onto and a target both name an onto-point; give one of them.")
    if onto is None and not has_target:
        raise InputError(
            "no onto-point: give --onto REF (a tag, branch or sha of the clone), or the installed "
            "target to plan onto with --installed, --python, --site-packages, --wheel or --tree."
        )
    spec = None if onto is not None else _target_spec(installed, python, site_packages, wheel, tree, dist)
    source = open_source(prs, git=git, repo=repo, offline=offline, spec=spec).git
    result = plan_stack(source, prs, onto=onto, target=spec, base=base)
    if emit_script is not None:
        _write(emit_script, plan_script(result).encode())
    if emit_patch is not None:
        _write(emit_patch, combined_patch(source, result))
    _print(_console(), render_plan(result, fmt))
    raise typer.Exit(0 if result.clean else 1)


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}; give a writable path.") from None


@app.command()
def fetch(
    prs: Annotated[list[int], typer.Argument(help="PR numbers (the stack under them too).")],
    repo: RepoOpt = None,
    api_url: ApiUrlOpt = None,
    via: ViaOpt = Via.GIT,
) -> None:
    """Fill the local cache for a stack so later runs work with --offline."""
    from prstack.sources.loader import load_stack

    console = _console()
    with console.status(f"fetching {', '.join(f'#{n}' for n in prs)} and the PRs under them"):
        source = open_source(prs, repo=repo, api_url=api_url, via=via)
        changes = load_stack(source.git, prs)  # reads every blob an audit needs, fetching it once
    for pr in changes.prs:
        meta = source.meta.get(pr.number)
        title = clean(meta.title) if meta else ""
        line = f"#{pr.number}  {pr.head_sha[:12]}  {len(pr.commits)} commits  {title}"
        console.print(line.rstrip(), markup=False, highlight=False, soft_wrap=True)
    console.print(f"cached under {Cache().root}", markup=False, highlight=False, soft_wrap=True)


cache_app = typer.Typer(help="What the local cache holds; clearing it.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


@cache_app.command("info")
def cache_info() -> None:
    """Where the cache is and what it holds."""
    info = Cache().info()
    lines = [f"cache: {info.root}", f"metadata entries: {info.entries}",
             f"git repositories: {len(info.repos)}", *(f"  {name}" for name in info.repos),
             f"size: {info.size / 1e6:.1f} MB"]
    _console().print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)


@cache_app.command("clear")
def cache_clear() -> None:
    """Remove everything prstack cached (metadata and git repositories)."""
    info = Cache().clear()
    _console().print(
        f"removed {info.entries} metadata entries and {len(info.repos)} git repositories "
        f"from {info.root}", markup=False, highlight=False, soft_wrap=True,
    )


def main(argv: list[str] | None = None) -> int:
    """Run prstack; returns the exit code (0 all present / plan clean, 1 not, 2 bad input).

    Commands end by raising typer.Exit(code); usage errors exit 2 from the parser; a
    PrstackError becomes one line on stderr and exit 2.
    """
    try:
        app(args=argv if argv is not None else sys.argv[1:], prog_name="prstack")
    except PrstackError as exc:
        sys.stderr.write(f"prstack: error: {clean(str(exc))}\n")
        return 2
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return 0
