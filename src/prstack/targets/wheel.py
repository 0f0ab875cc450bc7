"""A wheel read straight from its zip, nothing installed: a pre-install check."""

from __future__ import annotations

import re
import zipfile
from email.parser import HeaderParser
from pathlib import Path

from prstack.errors import InputError
from prstack.models import TargetInfo
from prstack.targets.metadata import commit_from_direct_url, commit_from_version

_DATA_LIB = re.compile(r"^[^/]+\.data/(?:purelib|platlib)/")


class WheelTarget:
    """The files a wheel would install, keyed by their path in site-packages."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise InputError(f"--wheel {path}: no such file; give the path of a .whl file.")
        try:
            self._zip = zipfile.ZipFile(path)
        except zipfile.BadZipFile:
            raise InputError(f"--wheel {path}: not a zip file, so not a wheel; rebuild or redownload it.") from None
        names = [n for n in self._zip.namelist() if not n.endswith("/")]
        dist_info = sorted({n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")})
        if len(dist_info) != 1 or f"{dist_info[0]}/METADATA" not in names:
            raise InputError(f"--wheel {path}: a zip without one *.dist-info/METADATA, so not a wheel.")
        data_dir = dist_info[0].removesuffix(".dist-info") + ".data/"
        self._members = {
            _DATA_LIB.sub("", n): n
            for n in names
            if not n.startswith(data_dir) or _DATA_LIB.match(n)
        }
        meta = HeaderParser().parsestr(self._zip.read(f"{dist_info[0]}/METADATA").decode("utf-8", "replace"))
        version = meta.get("Version")
        direct_url = self.read(f"{dist_info[0]}/direct_url.json")
        self._info = TargetInfo(
            kind="wheel",
            path=str(path),
            distribution=meta.get("Name"),
            version=version,
            vcs_commit=commit_from_direct_url(direct_url.decode() if direct_url else None)
            or commit_from_version(version),
        )

    @property
    def info(self) -> TargetInfo:
        return self._info

    def files(self) -> frozenset[str]:
        return frozenset(self._members)

    def read(self, path: str) -> bytes | None:
        member = self._members.get(path)
        if member is None:
            return None
        try:
            return self._zip.read(member)
        except (zipfile.BadZipFile, OSError) as exc:
            raise InputError(f"--wheel: cannot read {member} from the wheel ({exc}); the file is damaged.") from None
