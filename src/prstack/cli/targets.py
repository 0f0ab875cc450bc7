"""The target kinds as the command line offers them: one entry each (its flag's metavar, its help, the
command that puts a patched build into it, which commands take it), from which the options' help, the
"no target" message and the next steps are made. A new target kind is one entry here and its module
in `prstack.targets`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from prstack.errors import InputError
from prstack.models import TargetKind

if TYPE_CHECKING:
    from prstack.targets.spec import TargetSpec


def _pip_into(python: str) -> tuple[str, ...]:
    return (python, "-m", "pip", "install", "--no-deps", "--force-reinstall", ".")


@dataclass(frozen=True)
class TargetFlag:
    """A target kind's option."""

    kind: TargetKind
    metavar: str | None
    """What its value is called (None: a switch, --installed)."""
    help: str
    reinstall: Callable[[str], tuple[str, ...] | None] = lambda path: None
    """The command that puts a patched checkout's build into the target given as `path`."""
    audit_only: bool = False
    """Only `audit` takes it (plan and upkeep cannot yet read it)."""

    @property
    def flag(self) -> str:
        return f"--{self.kind.value}"

    @property
    def named(self) -> str:
        """The option as a message names it: --wheel FILE."""
        return f"{self.flag} {self.metavar}" if self.metavar else self.flag


TARGET_FLAGS: tuple[TargetFlag, ...] = (
    TargetFlag(TargetKind.INSTALLED, None, "this interpreter's environment (without --git or --repo, its install "
               "records name the project)", lambda path: _pip_into(sys.executable)),
    TargetFlag(TargetKind.PYTHON, "PY", "that interpreter's environment", _pip_into),
    TargetFlag(TargetKind.SITE_PACKAGES, "DIR", "a site-packages folder",
               lambda path: ("python", "-m", "pip", "install", "--no-deps", "--upgrade", "--target", path, ".")),
    TargetFlag(TargetKind.WHEEL, "FILE", "a wheel, not installed",
               lambda path: ("python", "-m", "pip", "wheel", "--no-deps", "-w", str(PurePath(path).parent), ".")),
    TargetFlag(TargetKind.TREE, "DIR", "a plain source tree"),
    TargetFlag(TargetKind.IMAGE, "FILE_OR_DIR", "a container image, a `docker save` tar or an OCI image layout "
               "(folder or tar), read without a daemon", audit_only=True),
)

FLAG_OF = {f.kind: f for f in TARGET_FLAGS}


def help_of(kind: TargetKind, repeatable: bool = False) -> str:
    """An option's help: "Target: a wheel, not installed (repeatable)."."""
    return f"Target: {FLAG_OF[kind].help}{' (repeatable)' if repeatable else ''}."


def reinstall(kind: TargetKind | None, path: str | None) -> tuple[str, ...] | None:
    """The command that puts a patched checkout's build into the target; None for a plain tree."""
    if kind is None or (not path and kind is not TargetKind.INSTALLED):
        return None
    return FLAG_OF[kind].reinstall(path or "")


@dataclass(frozen=True)
class TargetOptions:
    """The target options of a command as given (each repeatable for an audit, --installed aside)."""

    installed: bool = False
    python: Sequence[str] = ()
    site_packages: Sequence[Path] = ()
    wheel: Sequence[Path] = ()
    tree: Sequence[Path] = ()
    image: Sequence[Path] = ()
    dist: str | None = None
    platform: str | None = None
    """Which platform of a multi-platform image."""
    python_path: str | None = None
    """Which environment of an image."""

    def given(self) -> list[tuple[TargetKind, str | None]]:
        """Every target named, in the order of the kinds."""
        out: list[tuple[TargetKind, str | None]] = [(TargetKind.INSTALLED, None)] if self.installed else []
        for kind, values in ((TargetKind.PYTHON, self.python), (TargetKind.SITE_PACKAGES, self.site_packages),
                             (TargetKind.WHEEL, self.wheel), (TargetKind.TREE, self.tree),
                             (TargetKind.IMAGE, self.image)):
            out += [(kind, str(v)) for v in values]
        return out


def _no_target(audit: bool) -> InputError:
    named = [f.named for f in TARGET_FLAGS if audit or not f.audit_only]
    return InputError(f"no target: say what to audit with {', '.join(named[:-1])} or {named[-1]}.")


def target_specs(options: TargetOptions, check: Callable[[str], None]) -> list[TargetSpec]:
    """Every target an audit names, in the order of the kinds (several make a matrix). `check`: what
    an interpreter given must pass."""
    from prstack.targets.spec import TargetSpec

    o = options
    given = o.given()
    if not given:
        raise _no_target(audit=True)
    image = FLAG_OF[TargetKind.IMAGE].named
    if (o.platform is not None or o.python_path is not None) and not o.image:
        raise InputError(f"--platform and --python-path choose within an image; give {image} too.")
    specs = []
    for kind, value in given:
        if kind is TargetKind.PYTHON:
            check(str(value))
        in_image = kind is TargetKind.IMAGE
        specs.append(TargetSpec(kind, value, o.dist, platform=o.platform if in_image else None,
                                python_path=o.python_path if in_image else None))
    return specs


def target_spec(options: TargetOptions, check: Callable[[str], None]) -> TargetSpec:
    """The one target a plan or an upkeep names."""
    from prstack.targets.spec import TargetSpec

    given = options.given()
    if not given:
        raise _no_target(audit=False)
    if len(given) > 1:
        names = " and ".join(FLAG_OF[kind].flag for kind, _ in given)
        raise InputError(f"{names} both name a target; give exactly one.")
    kind, value = given[0]
    if kind is TargetKind.PYTHON:
        check(str(value))
    return TargetSpec(kind, value, options.dist)
