"""RECORD integrity: files edited after install, files nobody recorded, recorded files that are gone."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import posixpath
import re
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path

from prstack.targets.confined import Unreadable, inside, read_confined, sha256_confined

_SKIP_DIRS = frozenset({"__pycache__", ".git"})
_SKIP_SUFFIXES = (".pyc", ".pyo")


@dataclass(frozen=True)
class RecordEntry:
    path: str
    """Posix path relative to the directory RECORD's paths start from."""
    algorithm: str | None
    digest: str | None
    """urlsafe-base64 digest without padding, as RECORD writes it."""
    size: int | None


def confined_path(name: str) -> str | None:
    """A recorded (or zip member) name normalised ('a/./b', 'a/../b'), or None when it leaves its root
    (absolute, '..' at the head once normalised, a drive or backslash path, a NUL)."""
    if not name or "\0" in name or "\\" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return None
    path = posixpath.normpath(name)
    if path in (".", "..") or path.startswith("../"):
        return None
    return path


def parse_record(text: str) -> tuple[RecordEntry, ...]:
    """RECORD's rows (a CSV of path, algorithm=digest, size); malformed rows, and rows whose path
    leaves the root (`../`, absolute, `pkg/../../x`), are skipped."""
    entries = []
    try:
        rows = list(csv.reader(io.StringIO(text.replace("\0", ""))))
    except csv.Error:  # a damaged RECORD: keep the lines that still parse
        rows = [line.split(",") for line in text.splitlines()]
    for row in rows:
        if not row or not row[0]:
            continue
        algorithm = digest = None
        if len(row) > 1 and "=" in row[1]:
            algorithm, _, digest = row[1].partition("=")
        size = int(row[2]) if len(row) > 2 and row[2].isdigit() else None
        path = confined_path(row[0])
        if path is not None:
            entries.append(RecordEntry(path, algorithm, digest, size))
    return tuple(entries)


_NOT_PLAIN = ("/.", "//", "\\", ":", "\n.", "\n/", "/\n")
"""What RECORD's names, one a line, cannot hold anywhere when every one is a plain relative path
(kept as it is): a dot segment, an empty segment, a backslash or drive, a leading dot or slash, a
trailing slash."""


@lru_cache(maxsize=4096)
def recorded_paths(text: str) -> frozenset[str]:
    """The paths of parse_record(text), read without the csv module when RECORD is plain (no quote,
    no carriage return but the CRLF line ends pip writes, no NUL, no field over csv's size limit):
    one split per line, normpath only for a path that needs it. Distribution choice reads every
    RECORD of the environment; a RECORD read before (the same distribution in another target of
    the run: environments share most of theirs) is parsed once."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if '"' in text or "\r" in text or "\0" in text or max(map(len, lines), default=0) >= csv.field_size_limit():
        return frozenset(e.path for e in parse_record(text))
    names = [line.partition(",")[0] for line in lines]
    joined = "\n".join(names)
    if not joined.startswith((".", "/")) and not joined.endswith("/") and not any(m in joined for m in _NOT_PLAIN):
        return frozenset(names) - {""}  # every name as it is
    out = set()
    for name in names:
        if not name:
            continue
        if "/." in name or "//" in name or name.startswith(".") or name.endswith("/"):
            path = confined_path(name)
        elif "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":" and name[0].isascii()
                                                         and name[0].isalpha()):
            path = None
        else:
            path = name
        if path is not None:
            out.add(path)
    return frozenset(out)


def record_digest(data: bytes, algorithm: str = "sha256") -> str | None:
    """The digest RECORD would hold for `data`, or None for an algorithm hashlib lacks."""
    try:
        raw = hashlib.new(algorithm, data).digest()
    except (ValueError, TypeError):
        return None
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def matches(entry: RecordEntry, data: bytes) -> bool | None:
    """True when `data` is what RECORD recorded; None when RECORD holds no usable hash."""
    if entry.algorithm is None or entry.digest is None:
        return None
    digest = record_digest(data, entry.algorithm)
    return None if digest is None else digest == entry.digest


@dataclass(frozen=True)
class RecordIntegrity:
    """How the installed files compare with what the installer recorded."""

    checked: int
    """Recorded files whose hash was compared."""
    edited: tuple[str, ...] = ()
    """Files whose content no longer matches RECORD's hash: changed after install."""
    unrecorded: tuple[str, ...] = ()
    """Files inside the distribution's packages that no RECORD lists: added after install."""
    absent: tuple[str, ...] = ()
    """Files RECORD lists that are not there: deleted after install (or overwritten away)."""

    @property
    def clean(self) -> bool:
        return not (self.edited or self.unrecorded or self.absent)

    def issues(self) -> dict[str, str]:
        """installed path -> a sentence on what is wrong with it."""
        out = {p: "edited after install: its hash no longer matches RECORD" for p in self.edited}
        out |= {p: "not in RECORD: added after install" for p in self.unrecorded}
        out |= {p: "in RECORD but gone: deleted after install" for p in self.absent}
        return out


Reader = Callable[[str], bytes | None]
"""A recorded path -> the bytes now there, or None when nothing is."""


def check_entries(entries: Iterable[RecordEntry], read: Reader, read_before: Mapping[str, bytes] | None = None,
                  sha256: Callable[[str], bytes | None] | None = None) -> RecordIntegrity:
    """Compare each recorded file's bytes now with RECORD's hash (files outside the root skipped).
    `read_before`: path -> the SHA-256 of the bytes a reader of the same root read there earlier in
    the run (a file RECORD hashes with SHA-256 is not read again). `sha256`: a recorded path -> the
    SHA-256 of its bytes now, as `read` reads them (None, errors alike), for files RECORD hashes so."""
    checked, edited, absent = 0, [], []
    for entry in entries:
        if entry.path.startswith(("../", "/")):
            continue
        sha = read_before.get(entry.path) if read_before and entry.algorithm == "sha256" else None
        if sha is None and sha256 is not None and entry.algorithm == "sha256" and entry.digest is not None:
            try:
                sha = sha256(entry.path)
            except (OSError, Unreadable):  # unreadable (permissions, a FIFO, too big): neither edited nor gone
                continue
            if sha is None:
                absent.append(entry.path)
                continue
        if sha is not None and entry.digest is not None:
            checked += 1
            if base64.urlsafe_b64encode(sha).rstrip(b"=").decode() != entry.digest:
                edited.append(entry.path)
            continue
        try:
            data = read(entry.path)
        except (OSError, Unreadable):  # unreadable (permissions, a FIFO, too big): neither edited nor gone
            continue
        if data is None:
            if entry.digest is not None:
                absent.append(entry.path)
            continue
        verdict = matches(entry, data)
        if verdict is None:
            continue
        checked += 1
        if not verdict:
            edited.append(entry.path)
    return RecordIntegrity(checked, tuple(sorted(edited)), (), tuple(sorted(absent)))


def read_under(root: Path) -> Reader:
    """Recorded paths read under `root`, confined to it (Unreadable for a file that cannot be read)."""
    base = str(root)

    def read(path: str) -> bytes | None:
        return read_confined(base, path)
    return read


def package_dirs(entries: Iterable[RecordEntry]) -> frozenset[str]:
    """Top-level directories the recorded files live in (not *.dist-info, not outside the root)."""
    dirs = set()
    for entry in entries:
        head, sep, _ = entry.path.partition("/")
        if sep and head not in ("..", "") and not head.endswith((".dist-info", ".data", ".egg-info")):
            dirs.add(head)
    return frozenset(dirs)


def unrecorded_files(root: Path, dirs: Iterable[str], recorded: Container[str]) -> tuple[str, ...]:
    """Files under `dirs` of `root` that `recorded` (every RECORD of the site directory) lacks."""
    found = []
    for top in sorted(dirs):
        if inside(str(root), top) is None:  # a package folder symlinked out of the site directory
            continue
        for dirpath, dirnames, filenames in os.walk(root / top):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            rel = Path(dirpath).relative_to(root).as_posix()
            for name in sorted(filenames):
                path = f"{rel}/{name}"
                if path not in recorded and not name.endswith(_SKIP_SUFFIXES):
                    found.append(path)
    return tuple(found)


class _AnyOf:
    """A path in any of several sets (the environment's RECORDs), asked without their union."""

    def __init__(self, sets: Sequence[frozenset[str]]) -> None:
        self._sets = sets

    def __contains__(self, path: object) -> bool:
        return any(path in s for s in self._sets)


def check_installed(root: Path, record_text: str, other_records: Sequence[frozenset[str]],
                    read_before: Mapping[str, bytes] | None = None) -> RecordIntegrity:
    """RECORD integrity of a distribution installed under `root` (a site directory).

    `other_records` holds the paths each other distribution of the site directory records, so a
    namespace package shared with them is not reported as unrecorded. `read_before`: see check_entries.
    """
    entries = parse_record(record_text)
    result = check_entries(entries, read_under(root), read_before, partial(sha256_confined, str(root)))
    extra = unrecorded_files(root, package_dirs(entries), _AnyOf((frozenset(e.path for e in entries), *other_records)))
    return RecordIntegrity(result.checked, result.edited, extra, result.absent)
