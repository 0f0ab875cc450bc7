"""The one place target files are opened: confined to a root, regular files only, size-capped, errors ours.

Every path is resolved (symlinks included) and refused when it leaves the root; only regular
files are opened (a FIFO is opened non-blocking and refused, so it never hangs the audit);
reads stop at a cap; every OS error becomes a TargetError that names the path.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TypeVar

from prstack.errors import TargetError
from prstack.targets.kept import KeptByIdentity
from prstack.targets.metadata import HeaderFields, header_fields

V = TypeVar("V")

READ_CAP = 64 << 20
"""The largest file read (bytes): a file over it is not read, and its hunks say so."""


class Unreadable(TargetError):
    """A file the target holds but that is not read: outside the root, not a regular file, too big, damaged.

    Raised for one file; the audit turns it into a per-hunk verdict with this message as its note.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}; not read.")
        self.path = path
        self.reason = reason


def _real_dir(path: str) -> str:
    """A folder's resolved path, kept: the files of one folder share it (a run reads thousands).
    Kept by absolute path: a relative one means another folder once the process changes directory."""
    return _real_abs_dir(path if os.path.isabs(path) else os.path.abspath(path))


@lru_cache(maxsize=8192)
def _real_abs_dir(path: str) -> str:
    """realpath(path), from its folder's kept one where its last part is no symbolic link (one
    lstat for a folder of a folder resolved before: each distribution's metadata folder of a site)."""
    parent, name = os.path.split(path)
    if name in ("", ".", ".."):
        return os.path.realpath(path)
    try:
        link = stat.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return os.path.realpath(path)
    return os.path.realpath(path) if link else os.path.join(_real_abs_dir(parent), name)


def inside(root: str, rel: str) -> str | None:
    """The resolved path of `rel` under `root`, or None when it (or a symlink on the way) leaves the root."""
    if rel.startswith("/") or "\0" in rel:
        return None
    real_root = _real_dir(root)
    parent, name = os.path.split(os.path.join(real_root, rel))
    if name in ("", ".", ".."):
        full = os.path.realpath(os.path.join(real_root, rel))
    else:
        full = os.path.join(_real_dir(parent), name)
        try:
            if stat.S_ISLNK(os.lstat(full).st_mode):
                full = os.path.realpath(full)
        except OSError:
            pass  # missing: the open says so
    return full if full == real_root or full.startswith(real_root.rstrip("/") + "/") else None


def read_confined(root: str, rel: str, cap: int = READ_CAP) -> bytes | None:
    """`rel`'s bytes under `root`; None when nothing (or a folder) is there.

    Raises Unreadable when the path leaves the root, is not a regular file, or is over `cap`.
    """
    got = _read_with_stat(root, rel, cap)
    return None if got is None else got[0]


def hashed_confined(root: str, rel: str, cap: int = READ_CAP) -> tuple[bytes, bytes] | None:
    """read_confined's bytes and their SHA-256, kept by the file's identity (see sha256_confined)."""
    return _hashed(_read_with_stat(root, rel, cap))


def _hashed(got: tuple[bytes, os.stat_result] | None) -> tuple[bytes, bytes] | None:
    if got is None:
        return None
    data, info = got
    digest = hashlib.sha256(data).digest()
    _SHA256.keep(info, digest)
    return data, digest


def sha256_confined(root: str, rel: str, cap: int = READ_CAP) -> bytes | None:
    """The SHA-256 of read_confined's bytes (None and Unreadable alike), not read again when the file
    was hashed before in this process and is still what it was (see prstack.targets.kept)."""
    full = inside(root, rel)
    if full is None:
        raise Unreadable(os.path.join(root, rel), f"leads outside {root}")
    known = _known(full, cap, _SHA256)
    if known is not None:
        return known
    got = _hashed(_read_full(full, cap))
    return None if got is None else got[1]


def _known(full: str, cap: int, kept: KeptByIdentity[V]) -> V | None:
    """What `kept` holds for the file at the resolved path `full`, as it is now (none over `cap`)."""
    try:
        info = os.stat(full)
    except (OSError, ValueError):
        return None  # (the open says why)
    return kept.get(info) if info.st_size <= cap else None


_SHA256: KeptByIdentity[bytes] = KeptByIdentity(1 << 16, lambda _: 1)
"""Files' SHA-256 (at most this many)."""


def _read_with_stat(root: str, rel: str, cap: int) -> tuple[bytes, os.stat_result] | None:
    """read_confined's bytes, and the opened file's status as it was before they were read."""
    full = inside(root, rel)
    if full is None:
        raise Unreadable(os.path.join(root, rel), f"leads outside {root}")
    return _read_full(full, cap)


def _read_full(full: str, cap: int) -> tuple[bytes, os.stat_result] | None:
    """_read_with_stat of the resolved path `full`."""
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as exc:
        raise Unreadable(full, f"cannot be opened ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return None
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(full, "not a regular file (a FIFO, socket or device)")
        if info.st_size > cap:
            raise Unreadable(full, f"{info.st_size} bytes, over the {cap}-byte read limit")
        # a regular file comes whole in one read; asking a byte more shows its end without a second
        first = os.read(fd, min(info.st_size, cap) + 1)
        if len(first) == info.st_size:
            return first, info
        chunks, total = [first], len(first)  # (it changed since fstat, or the read came short)
        while total <= cap and (chunk := os.read(fd, min(1 << 20, cap + 1 - total))):
            chunks.append(chunk)
            total += len(chunk)
        if total > cap:
            raise Unreadable(full, f"grew past the {cap}-byte read limit")
        return b"".join(chunks), os.fstat(fd)
    except OSError as exc:
        raise Unreadable(full, f"cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)


def size_confined(root: str, rel: str) -> int | None:
    """`rel`'s size under `root` without reading it; None when it is missing, outside or not a regular file."""
    full = inside(root, rel)
    if full is None:
        return None
    try:
        info = os.stat(full)
    except (OSError, ValueError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def text_confined(root: str, rel: str, cap: int = READ_CAP) -> str | None:
    """`rel` under `root` as text (UTF-8, undecodable bytes replaced); None when missing or unreadable."""
    try:
        data = read_confined(root, rel, cap)
    except Unreadable:
        return None
    return None if data is None else data.decode("utf-8", "replace")


def kept_text_confined(root: str, rel: str, cap: int = READ_CAP) -> str | None:
    """text_confined, kept by the file's identity like sha256_confined: a distribution's metadata
    hard-linked into several site directories is read and decoded once, and is the same string each
    time (whose parse is then found again by it)."""
    full = inside(root, rel)
    if full is None:
        return None
    known = _known(full, cap, _TEXTS)
    if known is not None:
        return known
    try:
        got = _read_full(full, cap)
    except Unreadable:
        return None
    if got is None:
        return None
    text = got[0].decode("utf-8", "replace")
    _TEXTS.keep(got[1], text)
    return text


_TEXTS: KeptByIdentity[str] = KeptByIdentity(16 << 20, len)
"""Metadata files' text (at most this many characters)."""


class ConfinedDistribution:
    """An installed distribution (its *.dist-info or *.egg-info folder) whose metadata files
    (METADATA, RECORD, ...) are read confined to its site directory: a dist-info or METADATA
    symlinked out, a FIFO, a huge or non-UTF-8 file read as missing (or with replacement
    characters), never followed, never hung on."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._site = str(path.parent)
        self._info_dir = path.name

    def read_text(self, filename: str | os.PathLike[str]) -> str | None:
        return kept_text_confined(self._site, f"{self._info_dir}/{os.fspath(filename)}", METADATA_CAP)

    def locate_file(self, path: str | os.PathLike[str]) -> Path:
        """A path relative to the site directory."""
        return self._path.parent / path

    @cached_property
    def metadata(self) -> HeaderFields:
        """METADATA's header fields, parsed once. The body (the long description, often the whole
        README) is cut off unread."""
        return _headers(self.read_text("METADATA") or self.read_text("PKG-INFO") or "")

    @property
    def version(self) -> str | None:
        return self.metadata["Version"]


@lru_cache(maxsize=1024)
def _headers(text: str) -> HeaderFields:
    """METADATA's header fields (never changed once parsed: a text read before, the same distribution
    in another site directory, is parsed once)."""
    return header_fields(_HEADERS_END.split(text, maxsplit=1)[0].replace("\r\n", "\n"))


_HEADERS_END = re.compile(r"\r?\n\r?\n")
"""The blank line that ends METADATA's header fields (RFC 822: continuation lines are never empty)."""

METADATA_CAP = 16 << 20
"""The largest metadata file (METADATA, RECORD, top_level.txt...) read, in bytes."""


def confined_distributions(dirs: list[str]) -> Iterator[ConfinedDistribution]:
    """The distributions of `dirs` as importlib.metadata finds them (each folder's *.dist-info and
    *.egg-info, grouped by normalised name in the order first listed; an *.egg folder's EGG-INFO),
    those whose folder stays inside its site directory."""
    for where in _metadata_dirs(dirs):
        if inside(str(where.parent), where.name) is not None:
            yield ConfinedDistribution(where)


def _metadata_dirs(dirs: list[str]) -> Iterator[Path]:
    for root in dirs:
        try:
            children = os.listdir(root or ".")
        except (OSError, ValueError):
            continue  # (not a folder: a zip's distributions are never read confined)
        base = os.path.basename(root).lower()
        infos: dict[str, list[Path]] = {}
        eggs = []
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                name = _NORMAL.sub("_", low.rpartition(".")[0].partition("-")[0])
                infos.setdefault(name, []).append(Path(root, child))
            elif base.endswith(".egg") and low == "egg-info":
                eggs.append(Path(root, child))
        for found in infos.values():
            yield from found
        yield from eggs


_NORMAL = re.compile(r"[-_.]+")
