"""The command line's surface: the Typer app, the options its commands share, exit-code texts, outputs written."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from prstack.cli.targets import help_of
from prstack.models import TargetKind
from prstack.render.formats import AuditFormat, OutputFormat, choices

EXIT_CODES = "Exit codes: 0 {ok}; 1 {bad}; 2 bad input or cannot run (one line on stderr says why)."


NO_FINDING_EXIT = "Exit codes: 0 {ok}; 2 bad input or cannot run (one line on stderr says why)."


AUDIT_EXIT = EXIT_CODES.format(ok="every shipped hunk is present", bad="some shipped hunk is not")


def examples(*lines: str) -> str:
    return "Examples:\n\n\b\n" + "\n".join(f"  $ {line}" for line in lines)


def _version(value: bool) -> None:
    if value:
        from prstack import __version__  # (the package's metadata, importlib.metadata, costs a fifth of the start)

        sys.stdout.write(f"prstack {__version__}\n")
        raise typer.Exit(0)


app = typer.Typer(
    name="prstack",
    help="Are the changes of unmerged, stacked GitHub PRs really in what you installed?",
    epilog=examples("prstack demo", "prstack audit 40898 --git ~/src/vllm --installed")
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


FormatOpt = Annotated[OutputFormat, typer.Option("--format", metavar=choices(OutputFormat), help="Output format.")]


AuditFormatOpt = Annotated[AuditFormat, typer.Option("--format", metavar=choices(AuditFormat),
                                                     help="Output format (junit: JUnit XML for CI test reports).")]


OutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", metavar="FILE", help="Write the --format output to FILE; the table still goes to the terminal.")]


VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="List every hunk, applied ones too, as panels.")]


RepoOpt = Annotated[str | None, typer.Option("--repo", metavar="OWNER/NAME", help="GitHub repository.")]


ApiUrlOpt = Annotated[str | None, typer.Option("--api-url", metavar="URL",
                                               help="GitHub Enterprise API root, e.g. https://ghe.example/api/v3.")]


OfflineOpt = Annotated[bool, typer.Option("--offline", help="Never touch the network.")]


InstalledOpt = Annotated[bool, typer.Option("--installed", help=help_of(TargetKind.INSTALLED))]


PythonOpt = Annotated[str | None, typer.Option("--python", metavar="PY", help=help_of(TargetKind.PYTHON))]


SiteOpt = Annotated[Path | None, typer.Option("--site-packages", metavar="DIR", help=help_of(TargetKind.SITE_PACKAGES))]


WheelOpt = Annotated[Path | None, typer.Option("--wheel", metavar="FILE", help=help_of(TargetKind.WHEEL))]


TreeOpt = Annotated[Path | None, typer.Option("--tree", metavar="DIR", help=help_of(TargetKind.TREE))]


DistOpt = Annotated[str | None, typer.Option("--dist", metavar="NAME", help="Which distribution (default: inferred).")]


BaseOpt = Annotated[str | None, typer.Option("--base", metavar="REF", help="Fork point override for the bottom PR.")]


def write_output(path: Path, data: bytes, inputs: Sequence[Path] = ()) -> None:
    from prstack.files import write_file

    write_file(path, data, inputs=inputs)


def input_files_of(*given: str | Path) -> tuple[Path, ...]:
    from prstack.files import input_files

    return input_files(given)
