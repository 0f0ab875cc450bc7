"""A wheel read straight from its zip, nothing installed: a pre-install check."""

from __future__ import annotations

import re
import zipfile
import zlib
from functools import cached_property
from pathlib import Path, PurePosixPath

from prstack.errors import InputError, Option
from prstack.models import TargetInfo, TargetKind
from prstack.placement.paths import BINARY_SUFFIXES
from prstack.targets.confined import READ_CAP, Unreadable
from prstack.targets.evidence import BuildEvidence
from prstack.targets.metadata import header_fields, metadata_of, parse_direct_url, parse_version, top_level_names
from prstack.targets.record import RecordIntegrity, check_entries, confined_path, parse_record

_DATA_LIB = re.compile(r"^[^/]+\.data/(?:purelib|platlib)/")


class WheelTarget:
    """The files a wheel would install, keyed by their path in site-packages."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise InputError(Option("wheel"), f" {path}: no such file; give the path of a .whl file.")
        self._path = path
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
            raise InputError(Option("wheel"),
                             f" {path}: not a zip file, so not a wheel; rebuild or redownload it.") from None
        # member names normalised; a name leaving the wheel (`../pkg/core.py`, absolute) is never a file of it
        normal = {n: confined_path(n) for n in self._zip.namelist() if not n.endswith("/")}
        self._infos = {n: self._zip.getinfo(n) for n in normal}
        names = [p for p in normal.values() if p is not None]
        self._by_name = {p: n for n, p in normal.items() if p is not None}
        dist_info = sorted({n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")})
        if len(dist_info) != 1 or f"{dist_info[0]}/METADATA" not in names:
            raise InputError(Option("wheel"), f" {path}: a zip without one *.dist-info/METADATA, so not a wheel.")
        self._dist_info = dist_info[0]
        data_dir = dist_info[0].removesuffix(".dist-info") + ".data/"
        self._members = {
            _DATA_LIB.sub("", n): n
            for n in names
            if not n.startswith(data_dir) or _DATA_LIB.match(n)
        }
        self._meta = header_fields(self._text("METADATA") or "")
        version = self._meta.get("Version")
        direct = parse_direct_url(self._text("direct_url.json"))
        self._info = TargetInfo(
            kind=TargetKind.WHEEL,
            path=str(path),
            distribution=self._meta.get("Name"),
            version=version,
            vcs_commit=(direct.commit_id if direct else None) or (parse_version(version).commit if version else None),
        )

    def _text(self, name: str) -> str | None:
        """A metadata file's text: a damaged one is bad input (one line, exit 2)."""
        try:
            data = self.read(f"{self._dist_info}/{name}")
        except Unreadable as exc:
            raise InputError(Option("wheel"), " ", *exc.parts) from None
        return data.decode("utf-8", "replace") if data is not None else None

    @property
    def info(self) -> TargetInfo:
        return self._info

    def files(self) -> frozenset[str]:
        return frozenset(self._members)

    def read(self, path: str, cap: int = READ_CAP) -> bytes | None:
        member = self._members.get(path)
        if member is None:
            return None
        info = self._infos[self._by_name[member]]
        shown = f"{self._path}!{member}"
        if info.flag_bits & 0x1:
            raise Unreadable(shown, "encrypted in the wheel")
        if info.file_size > cap:
            raise Unreadable(shown, f"{info.file_size} bytes, over the {cap}-byte read limit")
        try:
            with self._zip.open(info) as f:
                data = f.read(cap + 1)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError, ValueError,
                OSError, LookupError) as exc:
            raise Unreadable(shown, f"damaged or unsupported in the wheel ({exc})") from None
        if len(data) > cap:
            raise Unreadable(shown, f"over the {cap}-byte read limit")
        return data

    def size(self, path: str) -> int | None:
        member = self._members.get(path)
        return None if member is None else self._infos[self._by_name[member]].file_size

    def _record(self) -> RecordIntegrity | None:
        text = self._text("RECORD")
        if text is None:
            return None
        by_member = {v: k for k, v in self._members.items()}
        entries = parse_record(text)
        checked = check_entries(
            [e for e in entries if e.path in by_member],
            lambda member: self.read(by_member[member]),
        )
        recorded = {e.path for e in entries}
        extra = tuple(sorted(by_member[m] for m in self._members.values() if m not in recorded))
        absent = tuple(sorted(e.path for e in entries if e.path not in by_member and e.digest))
        return RecordIntegrity(checked.checked, tuple(by_member[m] for m in checked.edited), extra, absent)

    @cached_property
    def evidence(self) -> BuildEvidence:
        """The wheel's metadata, and its RECORD checked against the zip's members."""
        meta = self._meta
        core = metadata_of(meta)
        files = self.files()
        version = meta.get("Version")
        return BuildEvidence(
            distribution=meta.get("Name"),
            version=parse_version(version) if version else None,
            direct_url=parse_direct_url(self._text("direct_url.json")),
            top_level=top_level_names(self._text("top_level.txt"), files),
            project_urls=core.project_urls,
            record=self._record(),
            binaries=tuple(sorted(f for f in files if PurePosixPath(f).suffix in BINARY_SUFFIXES)),
        )
