"""The prstack command line: parse, build the parts, run, render, exit. The only place that prints."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, assert_never

import typer

from prstack.cli_support import (
    FoundSource,
    SourceOptions,
    TargetOptions,
    as_text,
    audit_call,
    console,
    crashed,
    fail,
    found_source,
    parse_prs,
    progress_shown,
    quiet_libraries,
    show,
    source_options,
    target_spec,
    target_specs,
    tolerant_streams,
    usage_error,
)
from prstack.errors import InputError, PrstackError
from prstack.render import AuditFormat, AuditSchema, GraphFormat, HunksFormat, OutputFormat

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from prstack.next_steps import AuditCall
    from prstack.report import AuditReport
    from prstack.sources.open import OpenedClone
    from prstack.targets.base import TargetSpec
    from prstack.upkeep.series import Series

EXIT_CODES = "Exit codes: 0 {ok}; 1 {bad}; 2 bad input or cannot run (one line on stderr says why)."
NO_FINDING_EXIT = "Exit codes: 0 {ok}; 2 bad input or cannot run (one line on stderr says why)."
AUDIT_EXIT = EXIT_CODES.format(ok="every shipped hunk is present", bad="some shipped hunk is not")


def _examples(*lines: str) -> str:
    return "Examples:\n\n\b\n" + "\n".join(f"  $ {line}" for line in lines)


def _version(value: bool) -> None:
    if value:
        from prstack import __version__  # (the package's metadata, importlib.metadata, costs a fifth of the start)

        sys.stdout.write(f"prstack {__version__}\n")
        raise typer.Exit(0)


app = typer.Typer(
    name="prstack",
    help="Are the changes of unmerged, stacked GitHub PRs really in what you installed?",
    epilog=_examples("prstack demo", "prstack audit 40898 --git ~/src/vllm --installed")
    + "\n\n" + EXIT_CODES.format(ok="all present / clean", bad="something missing, stale or in conflict")
    + " Traceback of an internal error: PRSTACK_DEBUG=1.",
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _top(
    version: Annotated[bool, typer.Option("--version", help="Print prstack's version and exit.",
                                          callback=_version, is_eager=True)] = False,
) -> None:
    """Are the changes of unmerged, stacked GitHub PRs really in what you installed?"""


PrsArg = Annotated[list[str], typer.Argument(
    metavar="PR...", help="PR numbers, #N or PR URLs (the stack under them too).", show_default=False)]
GitOpt = Annotated[Path | None, typer.Option("--git", metavar="PATH", help="Local clone holding refs/pull/N/head.")]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", metavar="table|json|markdown", help="Output format.")]
AuditFormatOpt = Annotated[AuditFormat, typer.Option("--format", metavar="table|json|markdown|junit",
                                                     help="Output format (junit: JUnit XML for CI test reports).")]
OutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", metavar="FILE", help="Write the --format output to FILE; the table still goes to the terminal.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="List every hunk, applied ones too, as panels.")]
RepoOpt = Annotated[str | None, typer.Option("--repo", metavar="OWNER/NAME", help="GitHub repository.")]
ApiUrlOpt = Annotated[str | None, typer.Option("--api-url", metavar="URL",
                                               help="GitHub Enterprise API root, e.g. https://ghe.example/api/v3.")]
OfflineOpt = Annotated[bool, typer.Option("--offline", help="Never touch the network.")]
InstalledOpt = Annotated[bool, typer.Option(
    "--installed", help="Target: this interpreter's environment (without --git or --repo, its install records "
    "name the project).")]
PythonOpt = Annotated[str | None, typer.Option("--python", metavar="PY",
                                               help="Target: that interpreter's environment.")]
SiteOpt = Annotated[Path | None, typer.Option("--site-packages", metavar="DIR", help="Target: a site-packages folder.")]
WheelOpt = Annotated[Path | None, typer.Option("--wheel", metavar="FILE", help="Target: a wheel, not installed.")]
TreeOpt = Annotated[Path | None, typer.Option("--tree", metavar="DIR", help="Target: a plain source tree.")]
DistOpt = Annotated[str | None, typer.Option("--dist", metavar="NAME", help="Which distribution (default: inferred).")]
BaseOpt = Annotated[str | None, typer.Option("--base", metavar="REF", help="Fork point override for the bottom PR.")]


@dataclass(frozen=True)
class _Shown:
    """How a report is shown: its format, every hunk or not, the JSON schema, a file to write the format to."""

    fmt: AuditFormat
    verbose: bool = False
    schema: AuditSchema = AuditSchema.V2
    output: Path | None = None
    inputs: tuple[Path, ...] = ()
    """The files the run reads (the output may be none of them)."""


def _emit(out: Console | None, report: AuditReport, call: AuditCall | None, shown_as: _Shown) -> int:
    from prstack.next_steps import summary
    from prstack.render import render_audit

    fmt, verbose, schema, output = shown_as.fmt, shown_as.verbose, shown_as.schema, shown_as.output
    if output is not None:  # the format to the file, the table to the terminal
        shown = summary(report, call) if fmt in (AuditFormat.TABLE, AuditFormat.MARKDOWN) else None
        _write(output, as_text(render_audit(report, fmt, verbose=verbose, summary=shown, schema=schema)).encode(),
               shown_as.inputs)
        fmt = AuditFormat.TABLE
    shown = summary(report, call) if fmt in (AuditFormat.TABLE, AuditFormat.MARKDOWN) else None
    show(render_audit(report, fmt, verbose=verbose, summary=shown, schema=schema), out)
    return 0 if report.all_present else 1


@app.command(epilog=_examples(
    "prstack audit 40898 --git ~/src/vllm --installed",
    "prstack audit '#2812' https://github.com/pallets/click/pull/2834 --wheel dist/click-8.2.whl --format json",
) + "\n\n" + AUDIT_EXIT)
def audit(
    prs: Annotated[list[str] | None, typer.Argument(
        metavar="PR...", help="PR numbers, #N or PR URLs (the stack under them too).", show_default=False)] = None,
    git: GitOpt = None, repo: RepoOpt = None, api_url: ApiUrlOpt = None,
    installed: InstalledOpt = False,
    python: Annotated[list[str] | None, typer.Option(
        "--python", metavar="PY", help="Target: that interpreter's environment (repeatable).")] = None,
    site_packages: Annotated[list[Path] | None, typer.Option(
        "--site-packages", metavar="DIR", help="Target: a site-packages folder (repeatable).")] = None,
    wheel: Annotated[list[Path] | None, typer.Option(
        "--wheel", metavar="FILE", help="Target: a wheel, not installed (repeatable).")] = None,
    tree: Annotated[list[Path] | None, typer.Option(
        "--tree", metavar="DIR", help="Target: a plain source tree (repeatable).")] = None,
    image: Annotated[list[Path] | None, typer.Option(
        "--image", metavar="FILE_OR_DIR", help="Target: a container image, a `docker save` tar or an OCI image "
        "layout (folder or tar), read without a daemon (repeatable).")] = None,
    platform: Annotated[str | None, typer.Option(
        "--platform", metavar="OS/ARCH", help="Which platform of a multi-platform image (default: the host's).",
    )] = None,
    python_path: Annotated[str | None, typer.Option(
        "--python-path", metavar="DIR", help="Which environment of an image, by its site directory "
        "(/usr/lib/python3.12/site-packages), when several hold the project.")] = None,
    dist: DistOpt = None, base: BaseOpt = None,
    fmt: AuditFormatOpt = AuditFormat.TABLE, offline: OfflineOpt = False, verbose: VerboseOpt = False,
    output: OutputOpt = None,
    patch: Annotated[list[str] | None, typer.Option(
        "--patch", metavar="FILE", help="A patch file (unified diff, format-patch mails, GitHub .diff/.patch), "
        "a folder of patches, a quilt series or '-' as the PRs instead (repeatable; no clone).")] = None,
    schema: Annotated[AuditSchema, typer.Option(
        "--schema", metavar="ID", help="The JSON's schema: prstack.audit/2, or prstack.audit/1 (a PR's old "
        "roll-up, where `partial` also meant nothing present; for one release).")] = AuditSchema.V2,
) -> None:
    """Is every hunk of these PRs (and the PRs they stack on) in the target(s)?"""
    from prstack.audit import audit
    from prstack.sources.github.access import Access
    from prstack.sources.open import open_clone
    from prstack.targets.repos import repo_candidates

    specs = target_specs(TargetOptions(installed, python or (), site_packages or (), wheel or (), tree or (),
                                       image or (), dist, platform, python_path))
    sources = SourceOptions(git, repo, api_url, offline, base)
    shown_as = _Shown(fmt, verbose, schema, output, _input_files(*(patch or ()), *(wheel or ()), *(image or ())))
    if patch:
        from prstack.patch_cli import audit_patch_files

        if len(specs) > 1:
            raise InputError("--patch audits one target at a time; give one target, or run once per target.")
        spec = specs[0]
        with progress_shown():
            report = audit_patch_files(patch, spec, prs or [], sources)
        given = tuple(arg for p in patch for arg in ("--patch", p))
        call = audit_call(prs or [], given + source_options(sources), spec, fmt=fmt, verbose=verbose,
                          plannable=False)
        raise typer.Exit(_emit(None, report, call, shown_as))  # a Console only for a table
    if not prs:
        raise InputError("no PR: give the PRs to audit (N, #N or a PR URL), or --patch FILE.")
    given = source_options(sources)
    numbers, repo = parse_prs(prs, repo)
    found = found_source(replace(sources, repo=repo), specs[0], numbers)  # the target's records say where
    if len(specs) > 1:
        raise typer.Exit(_audit_matrix(numbers, specs, found, shown_as))
    spec = specs[0]
    call = audit_call(prs, given, spec, fmt=fmt, verbose=verbose)
    with progress_shown():
        src = found.options
        source = open_clone(numbers, git=src.git, repo=src.repo, access=Access(api_url, offline=offline),
                             named=lambda: repo_candidates(spec))
        if source.repo is not None:  # breaks ties between distributions by their Project-URL / direct_url
            spec = replace(spec, repo=source.repo.full_name)
        report = found.noted(audit(source.prs(numbers, base), spec))
    raise typer.Exit(_emit(None, report, call, shown_as))  # a Console only for a table


def _audit_matrix(numbers: list[int], specs: list[TargetSpec], found: FoundSource, shown_as: _Shown) -> int:
    """The PRs against several targets: the stack read once, a report per target, the PR x target matrix."""
    from prstack.audit import audit_targets
    from prstack.render.matrix import matrix_json, matrix_markdown, matrix_table
    from prstack.sources.github.access import Access
    from prstack.sources.open import open_clone
    from prstack.targets.repos import repo_candidates

    given = found.options
    with progress_shown():
        source = open_clone(numbers, git=given.git, repo=given.repo,
                             access=Access(given.api_url, offline=given.offline),
                             named=lambda: repo_candidates(specs[0]))
        if source.repo is not None:
            specs = [replace(spec, repo=source.repo.full_name) for spec in specs]
        reports = [found.noted(r) for r in audit_targets(source.prs(numbers, given.base), specs)]
    fmt, schema, output = shown_as.fmt, shown_as.schema, shown_as.output

    def rendered(fmt: AuditFormat) -> RenderableType:
        if fmt is AuditFormat.TABLE:
            return matrix_table(reports)
        if fmt is AuditFormat.JSON:
            return matrix_json(reports, schema)
        if fmt is AuditFormat.MARKDOWN:
            return matrix_markdown(reports)
        if fmt is AuditFormat.JUNIT:
            from prstack.render.junit import audit_junit

            return audit_junit(reports)
        assert_never(fmt)

    if output is not None:
        _write(output, as_text(rendered(fmt)).encode(), shown_as.inputs)
        fmt = AuditFormat.TABLE
    show(rendered(fmt))
    return 0 if all(r.all_present for r in reports) else 1


@app.command(epilog=_examples("prstack graph 40898 --git ~/src/vllm",
                              "prstack graph 40898 --git ~/src/vllm --format mermaid")
             + "\n\n" + EXIT_CODES.format(ok="the stack is sound", bad="a parent is stale, a parent ref is missing "
                                          "or markers form a cycle"))
def graph(
    prs: PrsArg, git: GitOpt = None, repo: RepoOpt = None, api_url: ApiUrlOpt = None, offline: OfflineOpt = False,
    fmt: Annotated[GraphFormat, typer.Option("--format", metavar="table|json|dot|mermaid",
                                             help="Output format.")] = GraphFormat.TABLE,
) -> None:
    """The stack: which PR builds on which, why, and which parents are merged or stale."""
    from prstack.render.graph import render_graph
    numbers, source = _opened(prs, git, repo, api_url, offline)
    with progress_shown():
        stack = source.prs(numbers).graph()
    show(render_graph(stack, fmt))
    troubled = stack.missing or stack.cycles or any(e.stale for e in stack.edges)
    raise typer.Exit(1 if troubled else 0)


@app.command(epilog=_examples("prstack hunks 40898 --git ~/src/vllm",
                              "prstack hunks '#40898' --git ~/src/vllm --format json")
             + "\n\n" + NO_FINDING_EXIT.format(ok="listed"))
def hunks(
    prs: PrsArg, git: GitOpt = None, repo: RepoOpt = None, api_url: ApiUrlOpt = None, offline: OfflineOpt = False,
    base: BaseOpt = None,
    fmt: Annotated[HunksFormat, typer.Option("--format", metavar="table|json",
                                             help="Output format.")] = HunksFormat.TABLE,
) -> None:
    """Every hunk of the stack with its file, line ranges, commits and PR (no target needed)."""
    from prstack.render.hunks import render_hunks
    numbers, source = _opened(prs, git, repo, api_url, offline)
    with progress_shown():
        changes = source.prs(numbers, base).load().finish()
    show(render_hunks(changes.prs, changes.hunks, fmt))
    raise typer.Exit(0)


def _opened(prs: Sequence[str], git: Path | None, repo: str | None, api_url: str | None,
            offline: bool) -> tuple[list[int], OpenedClone]:
    """The PR numbers given and the clone that holds them (no target to name the repository)."""
    from prstack.sources.github.access import Access
    from prstack.sources.open import open_clone

    numbers, repo = parse_prs(prs, repo)
    with progress_shown():
        return numbers, open_clone(numbers, git=git, repo=repo, access=Access(api_url, offline=offline))


@app.command(epilog=_examples("prstack demo", "prstack demo --keep /tmp/prstack-demo --format markdown")
             + "\n\n" + EXIT_CODES.format(ok="(never: the example has a dropped hunk)", bad="the dropped hunk, found"))
def demo(
    fmt: AuditFormatOpt = AuditFormat.TABLE, verbose: VerboseOpt = False, output: OutputOpt = None,
    keep: Annotated[Path | None, typer.Option(
        "--keep", metavar="DIR", help="Build the example in DIR (new, empty or an earlier demo) and keep it.")] = None,
) -> None:
    """The whole audit on the bundled offline example (no network, no token); exits 1 by design."""
    from prstack.demo.run import prepare_keep, rerun_commands, run_demo
    from prstack.next_steps import AuditCall

    out = console()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="prstack-demo-") as tmp:
        workdir = prepare_keep(keep) if keep is not None else Path(tmp)
        with progress_shown():
            result = run_demo(workdir)
        if fmt is AuditFormat.TABLE or output is not None:
            out.print(f"[bold]prstack demo[/]: PR #40898 (stacked on #40727) audited in a fork's build of kvserve, "
                      f"installed in {workdir / 'venv' / 'site-packages'}", highlight=False)
        rerun = AuditCall(rerun=("prstack", "demo", *(("--format", fmt.value) if fmt is not AuditFormat.TABLE
                                                     else ())), verbose=verbose)
        code = _emit(out, result.report, rerun, _Shown(fmt, verbose, output=output))
        if fmt is AuditFormat.TABLE or output is not None:
            out.print(f"\n{result.verdict()}", highlight=False, markup=False)
            out.print(f"[dim](demo took {time.perf_counter() - started:.1f} s)[/]")
    if keep is not None:
        sys.stderr.write("kept; re-run the audit by hand with:\n" + "".join(f"  {c}\n" for c in rerun_commands(keep)))
    raise typer.Exit(code)


@app.command(epilog=_examples(
    "prstack plan 40727 40898 --git ~/src/vllm --onto v0.20.1",
    "prstack plan 40898 --git ~/src/vllm --installed --emit-script apply.sh",
) + "\n\n" + EXIT_CODES.format(ok="the plan is clean", bad="a conflict"))
def plan(
    prs: PrsArg, git: GitOpt = None,
    onto: Annotated[str | None, typer.Option("--onto", metavar="REF", help="Ref, tag or sha to plan onto.")] = None,
    installed: InstalledOpt = False, python: PythonOpt = None, site_packages: SiteOpt = None,
    wheel: WheelOpt = None, tree: TreeOpt = None, dist: DistOpt = None, base: BaseOpt = None,
    emit_patch: Annotated[Path | None, typer.Option("--emit-patch", metavar="FILE",
                                                    help="Write the combined patch here.")] = None,
    emit_script: Annotated[Path | None, typer.Option("--emit-script", metavar="FILE",
                                                     help="Write the git commands here.")] = None,
    fmt: FormatOpt = OutputFormat.TABLE, repo: RepoOpt = None, api_url: ApiUrlOpt = None, offline: OfflineOpt = False,
) -> None:
    """Before installing: the order, what is already in, and what will conflict."""
    from prstack.plan.run import combined_patch, plan_stack
    from prstack.render.plan import plan_script, render_plan
    from prstack.sources.git.prs import ClonePRs
    from prstack.sources.github.access import Access
    from prstack.sources.open import open_clone
    from prstack.targets.repos import repo_candidates

    numbers, repo = parse_prs(prs, repo)
    has_target = installed or any(v is not None for v in (python, site_packages, wheel, tree))
    if onto is not None and has_target:
        raise InputError("--onto and a target both name an onto-point; give one of them.")
    if onto is None and not has_target:
        raise InputError(
            "no onto-point: give --onto REF (a tag, branch or sha of the clone), or the installed "
            "target to plan onto with --installed, --python, --site-packages, --wheel or --tree."
        )
    spec = None if onto is not None else target_spec(installed, python, site_packages, wheel, tree, dist)
    git, repo = _found(SourceOptions(git, repo, api_url, offline, base), spec, numbers)
    with progress_shown():
        source = open_clone(numbers, git=git, repo=repo, access=Access(api_url, offline=offline),
                             named=(lambda: repo_candidates(spec)) if spec is not None else None).git
        result = plan_stack(ClonePRs(source, numbers, base), onto=onto, target=spec)
    inputs = _input_files(*((wheel,) if wheel is not None else ()))
    if emit_script is not None:
        _write(emit_script, plan_script(result).encode(), inputs)
    if emit_patch is not None:
        if (patch := combined_patch(source, result)) is not None:
            _write(emit_patch, patch, inputs)
        else:
            from prstack.render.text import clean

            print(f"{clean(str(emit_patch))} not written: the plan changes nothing on {clean(result.onto.name)}.",
                  file=sys.stderr)
    show(render_plan(result, fmt))
    raise typer.Exit(0 if result.clean else 1)


def _found(given: SourceOptions, spec: TargetSpec | None, numbers: Sequence[int]) -> tuple[Path | None, str | None]:
    """(--git, --repo) as given, or as the target's own records name them (see found_source)."""
    found = found_source(given, spec, numbers).options
    return found.git, found.repo


def _write(path: Path, data: bytes, inputs: Sequence[Path] = ()) -> None:
    from prstack.files import write_file

    write_file(path, data, inputs=inputs)


def _input_files(*given: str | Path) -> tuple[Path, ...]:
    from prstack.files import input_files

    return input_files(given)


@app.command(epilog=_examples("prstack fetch 40898 --repo vllm-project/vllm",
                              "prstack fetch https://github.com/vllm-project/vllm/pull/40898")
             + "\n\n" + NO_FINDING_EXIT.format(ok="cached"))
def fetch(prs: PrsArg, repo: RepoOpt = None, api_url: ApiUrlOpt = None) -> None:
    """Fill the local cache for a stack so later runs work with --offline."""
    from prstack.render.text import clean
    from prstack.sources.git.prs import ClonePRs
    from prstack.sources.github.access import Access
    from prstack.sources.github.cache import Cache
    from prstack.sources.open import open_clone

    numbers, repo = parse_prs(prs, repo)
    out = console()
    with progress_shown():
        source = open_clone(numbers, repo=repo, access=Access(api_url))
        # reads every blob an audit needs, fetching it once (the stack as the clone alone tells it)
        changes = ClonePRs(source.git, numbers).load().finish()
    for pr in changes.prs:
        meta = source.meta.get(pr.number)
        title = clean(meta.title) if meta else ""
        line = f"#{pr.number}  {pr.head_sha[:12]}  {len(pr.commits)} commits  {title}"
        out.print(line.rstrip(), markup=False, highlight=False, soft_wrap=True, emoji=False)
    out.print(f"cached under {Cache().root}", markup=False, highlight=False, soft_wrap=True)


@app.command(epilog=_examples(
    "prstack upkeep 40727 40898 --git ~/src/vllm --onto v0.21.0",
    "prstack upkeep --patch patches/ --git ~/src/vllm --releases 'v0.2*' --write refreshed/",
    "prstack upkeep --wheel dist/vllm-0.21.0-cp312-linux_x86_64.whl   # the carried set of ./pyproject.toml",
    "prstack upkeep --patch patches/ --release-wheel wheels/pkg-1.0-py3-none-any.whl "
    "--release-wheel wheels/pkg-1.1-py3-none-any.whl",
) + "\n\n" + EXIT_CODES.format(ok="every item is retire or keep", bad="an item is partly upstream or needs a rebase"))
def upkeep(
    prs: Annotated[list[str] | None, typer.Argument(
        metavar="[PR...]", help="Carried PRs (N, #N or URL); none: the manifest's.", show_default=False)] = None,
    git: GitOpt = None,
    patch: Annotated[list[str] | None, typer.Option(
        "--patch", metavar="FILE", help="A carried patch, folder of patches or quilt series (repeatable).")] = None,
    releases: Annotated[str | None, typer.Option(
        "--releases", metavar="PATTERN", help="Tags that are releases, a glob (default: tags that are versions).")
    ] = None,
    release_wheel: Annotated[list[str] | None, typer.Option(
        "--release-wheel", metavar="WHEEL", help="A release as its wheel file, instead of the clone's tags "
        "(repeatable; in the order of the versions in their names; the newest is the default candidate).")] = None,
    repo: Annotated[str | None, typer.Option(
        "--repo", metavar="OWNER/NAME", help="Read the PRs from GitHub (into prstack's cache, as audit does); "
        "the releases then come from --release-wheel, or from --git's tags.")] = None,
    api_url: ApiUrlOpt = None, offline: OfflineOpt = False,
    onto: Annotated[str | None, typer.Option(
        "--onto", metavar="REF", help="The candidate: a ref of the clone (default: the newest release).")] = None,
    installed: InstalledOpt = False, python: PythonOpt = None, site_packages: SiteOpt = None,
    wheel: WheelOpt = None, tree: TreeOpt = None, dist: DistOpt = None,
    write: Annotated[Path | None, typer.Option(
        "--write", metavar="DIR", help="Write the refreshed series for the candidate here (with a `series` file), "
        "replacing the folder whole.")] = None,
    in_place: Annotated[bool, typer.Option(
        "--in-place", help="Let --write replace the folder the carried patches are read from.")] = False,
    manifest: Annotated[Path | None, typer.Option(
        "--manifest", metavar="FILE", help="prstack.toml or pyproject.toml declaring the carried set "
        "(default: the one in this folder, when no PR or patch is given).")] = None,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """For each carried PR or patch: retire, keep or rebase on the candidate, and the first release holding it."""
    from prstack.render.upkeep import render_upkeep
    from prstack.sources.git.repo import GitClone
    from prstack.upkeep.manifest import find_manifest, read_manifest
    from prstack.upkeep.run import Carried
    from prstack.upkeep.run import upkeep as run_upkeep
    from prstack.upkeep.series import refreshed_series

    numbers, repo = parse_prs(prs or [], repo)
    notes: dict[str, str] = {}
    if manifest is not None or (not numbers and not patch):
        declared = read_manifest(manifest or find_manifest(Path.cwd()))
        numbers, patch, notes = list(declared.numbers), list(declared.patches), declared.notes
        git, releases = git or declared.git, releases or declared.releases
        dist = dist or declared.distribution
    has_target = installed or any(v is not None for v in (python, site_packages, wheel, tree))
    spec = target_spec(installed, python, site_packages, wheel, tree, dist) if has_target else None
    if spec is not None and not patch:  # a clone the target was installed from; its repository for wheels
        found_git, found_repo = _found(SourceOptions(git, repo, api_url, offline), spec, numbers)
        git, repo = found_git, (found_repo if release_wheel else repo)
    if repo is not None and git is None and not release_wheel:
        raise InputError("--repo reads the PRs from GitHub, not the releases: give each release with "
                         "--release-wheel WHEEL, or a clone with its tags (--git PATH).")
    with progress_shown():
        clone, meta = GitClone(git) if git else None, {}
        if repo is not None and numbers:
            from prstack.sources.github.access import Access
            from prstack.sources.open import open_clone

            opened = open_clone(numbers, git=git, repo=repo, access=Access(api_url, offline=offline))
            clone, meta = opened.git, dict(opened.meta)
        done = run_upkeep(Carried(tuple(numbers), tuple(patch or ()), notes, meta), clone, releases=releases,
                          onto=onto, target=spec, release_wheels=tuple(release_wheel or ()))
    if write is not None:
        from prstack.files import read_if_file

        _write_series(write, refreshed_series(done.report, done.candidate_file, read_if_file),
                      _input_files(*(patch or ()), *((manifest,) if manifest is not None else ())), in_place)
    show(render_upkeep(done.report, fmt))
    raise typer.Exit(0 if done.report.settled else 1)


def _write_series(folder: Path, series: Series, inputs: Sequence[Path], in_place: bool) -> None:
    """The refreshed series swapped in whole for `folder`; never over the carried patches unless asked."""
    from prstack.files import holding, replace_series_folder
    from prstack.render.text import clean

    if not in_place and (held := holding(folder, inputs)) is not None:
        raise InputError(f"--write {folder}: it holds {held}, read by this run; write to another folder, or "
                         "give --in-place to replace the carried patches with the refreshed series.")
    replace_series_folder(folder, series.files)
    left = "".join(f"  not refreshed (still in series, after a comment): {clean(n)}: {clean(why)}\n" for n, why in
                   ((f"#{i.number}" if i.patch is None else i.patch, why) for i, why in series.unwritten))
    sys.stderr.write(f"wrote {len(series.written)} patch(es) and a series file to {clean(str(folder))}; "
                     f"dropped {len(series.dropped)} retired\n{left}")


cache_app = typer.Typer(help="What the local cache holds (info); emptying it (clear).",
                        epilog=_examples("prstack cache info", "prstack cache clear"),
                        context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(cache_app, name="cache")


@cache_app.command("info", epilog=_examples("prstack cache info"))
def cache_info() -> None:
    """Where the cache is and what it holds."""
    from prstack.sources.github.cache import Cache

    info = Cache().info()
    lines = [f"cache: {info.root}", f"metadata entries: {info.entries}",
             f"git repositories: {len(info.repos)}", *(f"  {name}" for name in info.repos),
             f"size: {info.size / 1e6:.1f} MB"]
    sys.stdout.write("\n".join(lines) + "\n")


@cache_app.command("clear", epilog=_examples("prstack cache clear"))
def cache_clear() -> None:
    """Remove everything prstack cached (metadata and git repositories)."""
    from prstack.sources.github.cache import Cache

    info = Cache().clear()
    sys.stdout.write(f"removed {info.entries} metadata entries and {len(info.repos)} git repositories "
                     f"from {info.root}\n")


def _command() -> Any:
    """The click command typer builds, its arguments' help without typer's type tag (`PR <list[str]>`)."""
    command = typer.main.get_command(app)
    stack = [command]
    while stack:
        cmd = stack.pop()
        stack += list(getattr(cmd, "commands", {}).values())
        for param in cmd.params:
            if param.param_type_name == "argument" and hasattr(param, "display_type_rich"):
                param.display_type_rich = lambda ctx: None
    return command


def main(argv: list[str] | None = None) -> int:
    """Run prstack; returns the exit code (0 all present / plan clean, 1 not, 2 bad input or cannot run).

    Commands end by raising typer.Exit(code). A usage error, a PrstackError and any unexpected
    exception become one line on stderr and exit 2 (PRSTACK_DEBUG=1 adds the traceback of the last)."""
    tolerant_streams()
    quiet_libraries()
    args = list(argv if argv is not None else sys.argv[1:])
    if args in ([], ["cache"]):  # like gh and pip: the help, on stdout, and success
        args.append("--help")
    try:
        code = _command().main(args=args, prog_name="prstack", standalone_mode=False)
    except PrstackError as exc:
        return fail(str(exc))
    except typer.Exit as exc:
        return exc.exit_code
    except typer.TyperException as exc:  # click's usage errors (typer vendors click)
        return usage_error(exc)
    except typer.Abort:
        return fail("interrupted.")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("prstack: interrupted\n")
        return 130
    except Exception as exc:  # the one place: a bug must not look like a finding (exit 1)
        return crashed(exc)
    return code if isinstance(code, int) else 0
