"""What the user asked to audit: a target's kind, its path, and what says which distribution in it."""

from __future__ import annotations

from dataclasses import dataclass

from prstack.errors import InputError, Option
from prstack.models import TargetKind


@dataclass(frozen=True)
class TargetSpec:
    """What the user asked to audit."""

    kind: TargetKind
    path: str | None = None
    dist: str | None = None
    repo: str | None = None
    """OWNER/NAME of the PRs' repository: breaks ties between distributions by their URLs."""
    names: tuple[str, ...] = ()
    """Other names the repository goes by (its clone's folder): finds a distribution named like it."""
    platform: str | None = None
    """For an image: the platform of a multi-platform image (linux/amd64); default the host's."""
    python_path: str | None = None
    """For an image: the site directory to audit when several environments hold the project."""

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "kind", TargetKind(self.kind))  # (a caller may name it by its string)
        except ValueError:
            raise InputError(f"unknown target kind {self.kind!r}.") from None


def onto_or_target(onto: str | None, has_target: bool, names: str) -> None:
    """Refuse a ref and a target given together where each says where to start (`names`: what both
    would name, "an onto-point")."""
    if onto is not None and has_target:
        raise InputError(Option("onto"), f" and a target both name {names}; give one of them.")
