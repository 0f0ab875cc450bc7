"""The prstack command line: parse, build the parts, run, render, exit. The only place that prints."""

from __future__ import annotations

import copy
import gc
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


def _command(named: str | None = None) -> Any:
    """The click command typer builds, its arguments' help without typer's type tag (`PR <list[str]>`):
    with `named`, the name of one of its commands or groups, the top with that one alone (building
    every command reads all their signatures: 6 ms of CPU at each start); else all of them."""
    from prstack.cli import audit_commands, cache_commands, plan_commands  # noqa: F401  (each adds its commands)

    command = typer.main.get_command(_with_only(named))
    stack = [command]
    while stack:
        cmd = stack.pop()
        stack += list(getattr(cmd, "commands", {}).values())
        for param in cmd.params:
            if param.param_type_name == "argument" and hasattr(param, "display_type_rich"):
                param.display_type_rich = lambda ctx: None
    return command


def _with_only(named: str | None) -> typer.Typer:
    """The app holding only the command or group `named`, or the whole app when it names none."""
    commands = [c for c in app.registered_commands
                if named == (c.name or typer.main.get_command_name(getattr(c.callback, "__name__", "")))]
    groups = [g for g in app.registered_groups if named is not None and g.name == named]
    if not commands and not groups:
        return app
    narrowed = copy.copy(app)
    narrowed.registered_commands, narrowed.registered_groups = commands, groups
    return narrowed


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
        code = _command(args[0]).main(args=args, prog_name="prstack", standalone_mode=False)
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


def run() -> int:
    """`main` as the process `prstack` (and `python -m prstack`) runs it: its exit code, the cycle
    collector off for the short process (an audit's hundreds of thousands of objects live to its
    end: each collection, and finalizing, would walk them again), every object left put out of its
    sight as the process ends next."""
    gc.disable()
    code = main()
    gc.freeze()
    return code
