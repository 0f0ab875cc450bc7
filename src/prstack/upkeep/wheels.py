"""Upstream releases given as wheel files: in the order of the versions their file names carry."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from prstack.errors import InputError, Option
from prstack.upkeep.values import Release


def wheel_releases(paths: Sequence[str]) -> list[Release]:
    """One release per wheel, oldest first by the version in its file name (NAME-VERSION-TAGS.whl)."""
    found: dict[Version, Release] = {}
    for given in paths:
        path = Path(given)
        try:
            _, version, _, _ = parse_wheel_filename(path.name)
        except InvalidWheelFilename:
            raise InputError(Option("release_wheel"), f" {given}: not a wheel's file name (NAME-VERSION-TAGS.whl); "
                             "give the wheel of each release as its index ships it.") from None
        if not path.is_file():
            raise InputError(Option("release_wheel"), f" {given}: no such file; give the path of a downloaded wheel "
                             "(pip download NAME==VERSION --no-deps).")
        if version in found:
            raise InputError(Option("release_wheel"),
                             f" {given} and {found[version].wheel} are both version {version}; "
                             "give one wheel per release.")
        found[version] = Release(str(version), None, str(path))
    return [found[v] for v in sorted(found)]
