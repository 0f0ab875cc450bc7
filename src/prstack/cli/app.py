"""The prstack command line: parse, build the parts, run, render, exit. The only place that prints."""

from __future__ import annotations

import sys
from typing import Any

import typer

from prstack.cli.support import (
    as_flag,
    crashed,
    fail,
    quiet_libraries,
    tolerant_streams,
    usage_error,
)
from prstack.cli.surface import app
from prstack.errors import PrstackError


def _command() -> Any:
    """The click command typer builds, its arguments' help without typer's type tag (`PR <list[str]>`)."""
    from prstack.cli import audit_commands, cache_commands, plan_commands  # noqa: F401  (each adds its commands)

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
        return fail(exc.worded(as_flag))
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
