"""The commands that read a stack and judge it: audit (one target or a matrix), graph, hunks, demo."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from prstack.cli.support import (
    FoundSource,
    SourceOptions,
    as_text,
    audit_call,
    check_interpreter,
    console,
    found_source,
    parse_prs,
    progress_shown,
    show,
    source_options,
)
from prstack.cli.targets import TargetOptions, help_of, target_specs
from prstack.errors import InputError
from prstack.models import TargetKind
from prstack.render.formats import AuditFormat, AuditSchema, GraphFormat, HunksFormat, choices

if TYPE_CHECKING:
    from rich.console import Console

    from prstack.cli.next_steps import AuditCall
    from prstack.match.report import AuditReport
    from prstack.placement.forge import RepoId
    from prstack.sources.open import OpenedClone
    from prstack.targets.base import TargetSpec
from prstack.cli.surface import (
    AUDIT_EXIT,
    EXIT_CODES,
    NO_FINDING_EXIT,
    ApiUrlOpt,
    AuditFormatOpt,
    BaseOpt,
    DistOpt,
    GitOpt,
    InstalledOpt,
    OfflineOpt,
    OutputOpt,
    PrsArg,
    RepoOpt,
    VerboseOpt,
    app,
    examples,
    input_files_of,
    write_output,
)


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
    from prstack.cli.next_steps import summary
    from prstack.render import render_audit

    fmt, verbose, schema, output = shown_as.fmt, shown_as.verbose, shown_as.schema, shown_as.output
    if output is not None:  # the format to the file, the table to the terminal
        shown = summary(report, call) if fmt in (AuditFormat.TABLE, AuditFormat.MARKDOWN) else None
        write_output(output, as_text(render_audit(report, fmt, verbose=verbose, summary=shown, schema=schema)).encode(),
               shown_as.inputs)
        fmt = AuditFormat.TABLE
    shown = summary(report, call) if fmt in (AuditFormat.TABLE, AuditFormat.MARKDOWN) else None
    show(render_audit(report, fmt, verbose=verbose, summary=shown, schema=schema), out)
    return 0 if report.all_present else 1


@app.command(epilog=examples(
    "prstack audit 40898 --git ~/src/vllm --installed",
    "prstack audit '#2812' https://github.com/pallets/click/pull/2834 --wheel dist/click-8.2.whl --format json",
) + "\n\n" + AUDIT_EXIT)
def audit(
    prs: Annotated[list[str] | None, typer.Argument(
        metavar="PR...", help="PR numbers, #N or PR URLs (the stack under them too).", show_default=False)] = None,
    git: GitOpt = None, repo: RepoOpt = None, api_url: ApiUrlOpt = None,
    installed: InstalledOpt = False,
    python: Annotated[list[str] | None, typer.Option(
        "--python", metavar="PY", help=help_of(TargetKind.PYTHON, repeatable=True))] = None,
    site_packages: Annotated[list[Path] | None, typer.Option(
        "--site-packages", metavar="DIR", help=help_of(TargetKind.SITE_PACKAGES, repeatable=True))] = None,
    wheel: Annotated[list[Path] | None, typer.Option(
        "--wheel", metavar="FILE", help=help_of(TargetKind.WHEEL, repeatable=True))] = None,
    tree: Annotated[list[Path] | None, typer.Option(
        "--tree", metavar="DIR", help=help_of(TargetKind.TREE, repeatable=True))] = None,
    image: Annotated[list[Path] | None, typer.Option(
        "--image", metavar="FILE_OR_DIR", help=help_of(TargetKind.IMAGE, repeatable=True))] = None,
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
    specs = target_specs(TargetOptions(installed, python or (), site_packages or (), wheel or (), tree or (),
                                       image or (), dist, platform, python_path), check_interpreter)
    sources = SourceOptions(git, repo, api_url, offline, base)
    shown_as = _Shown(fmt, verbose, schema, output, input_files_of(*(patch or ()), *(wheel or ()), *(image or ())))
    if patch:
        from prstack.cli.patch_source import audit_patch_files

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
    from prstack.audit import AuditRequest, run_audit  # (a clone's audit: not loaded for --patch)
    from prstack.sources.github.access import Access
    from prstack.sources.open import open_clone

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
                             named=_named_by(spec))
        if source.repo is not None:  # breaks ties between distributions by their Project-URL / direct_url
            spec = replace(spec, repo=source.repo.full_name)
        report = found.noted(run_audit(AuditRequest(source.prs(numbers, base), (spec,)))[0])
    raise typer.Exit(_emit(None, report, call, shown_as))  # a Console only for a table


def _named_by(spec: TargetSpec) -> Callable[[], Sequence[tuple[str, frozenset[RepoId]]]]:
    """The repositories the target's distributions name, read when the opening asks (it often does not)."""

    def named() -> Sequence[tuple[str, frozenset[RepoId]]]:
        from prstack.targets.repos import repo_candidates  # (with packaging's requirement parser)

        return repo_candidates(spec)

    return named


def _audit_matrix(numbers: list[int], specs: list[TargetSpec], found: FoundSource, shown_as: _Shown) -> int:
    """The PRs against several targets: the stack read once, a report per target, the PR x target matrix."""
    from prstack.audit import AuditRequest, run_audit
    from prstack.render import render_matrix
    from prstack.sources.github.access import Access
    from prstack.sources.open import open_clone

    given = found.options
    with progress_shown():
        source = open_clone(numbers, git=given.git, repo=given.repo,
                             access=Access(given.api_url, offline=given.offline),
                             named=_named_by(specs[0]))
        if source.repo is not None:
            specs = [replace(spec, repo=source.repo.full_name) for spec in specs]
        reports = [found.noted(r) for r in run_audit(AuditRequest(source.prs(numbers, given.base), tuple(specs)))]
    fmt, schema, output = shown_as.fmt, shown_as.schema, shown_as.output
    if output is not None:
        write_output(output, as_text(render_matrix(reports, fmt, schema)).encode(), shown_as.inputs)
        fmt = AuditFormat.TABLE
    show(render_matrix(reports, fmt, schema))
    return 0 if all(r.all_present for r in reports) else 1


@app.command(epilog=examples("prstack graph 40898 --git ~/src/vllm",
                              "prstack graph 40898 --git ~/src/vllm --format mermaid")
             + "\n\n" + EXIT_CODES.format(ok="the stack is sound", bad="a parent is stale, a parent ref is missing "
                                          "or markers form a cycle"))
def graph(
    prs: PrsArg, git: GitOpt = None, repo: RepoOpt = None, api_url: ApiUrlOpt = None, offline: OfflineOpt = False,
    fmt: Annotated[GraphFormat, typer.Option("--format", metavar=choices(GraphFormat),
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


@app.command(epilog=examples("prstack hunks 40898 --git ~/src/vllm",
                              "prstack hunks '#40898' --git ~/src/vllm --format json")
             + "\n\n" + NO_FINDING_EXIT.format(ok="listed"))
def hunks(
    prs: PrsArg, git: GitOpt = None, repo: RepoOpt = None, api_url: ApiUrlOpt = None, offline: OfflineOpt = False,
    base: BaseOpt = None,
    fmt: Annotated[HunksFormat, typer.Option("--format", metavar=choices(HunksFormat),
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


@app.command(epilog=examples("prstack demo", "prstack demo --keep /tmp/prstack-demo --format markdown")
             + "\n\n" + EXIT_CODES.format(ok="(never: the example has a dropped hunk)", bad="the dropped hunk, found"))
def demo(
    fmt: AuditFormatOpt = AuditFormat.TABLE, verbose: VerboseOpt = False, output: OutputOpt = None,
    keep: Annotated[Path | None, typer.Option(
        "--keep", metavar="DIR", help="Build the example in DIR (new, empty or an earlier demo) and keep it.")] = None,
) -> None:
    """The whole audit on the bundled offline example (no network, no token); exits 1 by design."""
    import tempfile

    from prstack.cli.next_steps import AuditCall
    from prstack.demo.example import prepare_keep, rerun_commands, run_demo

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
