"""The on-disk cache: atomic, checksummed entries (platform cache dir or PRSTACK_CACHE_DIR)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from prstack.errors import SourceError

CACHE_ENV = "PRSTACK_CACHE_DIR"
_MAGIC = b"prstack-cache/1 sha256="
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def default_cache_root(env: Mapping[str, str] | None = None) -> Path:
    """PRSTACK_CACHE_DIR when set, else the platform's user cache directory for prstack."""
    env = os.environ if env is None else env
    override = env.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir("prstack", appauthor=False))


def safe_name(text: str) -> str:
    """A file-name-safe form of a key (no separators, no dot-dot): 'a/b c' -> 'a_b_c'."""
    name = _SAFE.sub("_", text).strip("._") or "_"
    return name[:150]


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` so readers see the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def encode_entry(value: Any) -> bytes:
    """A JSON value as a cache entry: a header line with the payload's sha256, then the payload."""
    payload = json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
    return _MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def decode_entry(data: bytes) -> Any:
    """The value of a cache entry; ValueError when it is corrupt, truncated or not an entry."""
    header, sep, payload = data.partition(b"\n")
    if not sep or not header.startswith(_MAGIC):
        raise ValueError("not a prstack cache entry")
    if hashlib.sha256(payload).hexdigest().encode() != header[len(_MAGIC) :]:
        raise ValueError("checksum mismatch")
    return json.loads(payload)


@dataclass(frozen=True)
class CacheInfo:
    """What the cache holds."""

    root: Path
    entries: int
    """Metadata entries (PRs, branch lookups)."""
    repos: tuple[str, ...]
    """Managed git repositories, as host/owner/name."""
    size: int
    """Bytes on disk, everything included."""


class Cache:
    """Metadata entries (namespace, key) -> JSON value, and the managed git repositories' home."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else default_cache_root()
        self.dropped: list[Path] = []
        """Entries found corrupt and removed during this run."""

    def _entry_path(self, namespace: str, key: str) -> Path:
        parts = [safe_name(p) for p in namespace.split("/") if p]
        return self.root.joinpath("meta", *parts, safe_name(key) + ".json")

    def get(self, namespace: str, key: str) -> Any | None:
        """The stored value, or None when absent; a corrupt entry is deleted, counts as absent."""
        path = self._entry_path(namespace, key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SourceError(
                f"cannot read the cache entry {path}: {exc.strerror}; "
                "check its permissions or run `prstack cache clear`."
            ) from None
        try:
            return decode_entry(data)
        except ValueError:
            path.unlink(missing_ok=True)
            self.dropped.append(path)
            return None

    def put(self, namespace: str, key: str, value: Any) -> None:
        """Store a JSON value atomically with its checksum."""
        try:
            atomic_write(self._entry_path(namespace, key), encode_entry(value))
        except OSError as exc:
            raise SourceError(
                f"cannot write the cache under {self.root}: {exc.strerror}; "
                f"set {CACHE_ENV} to a writable directory."
            ) from None

    def git_dir(self, host: str, owner: str, name: str) -> Path:
        """Where the managed bare repository of one GitHub repository lives."""
        return self.root / "git" / safe_name(host) / safe_name(owner) / (safe_name(name) + ".git")

    def info(self) -> CacheInfo:
        entries = (
            sum(1 for _ in (self.root / "meta").rglob("*.json"))
            if (self.root / "meta").is_dir()
            else 0
        )
        git_root = self.root / "git"
        repos = (
            tuple(
                sorted(
                    str(p.relative_to(git_root).with_suffix("")) for p in git_root.glob("*/*/*.git")
                )
            )
            if git_root.is_dir()
            else ()
        )
        size = (
            sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())
            if self.root.is_dir()
            else 0
        )
        return CacheInfo(self.root, entries, repos, size)

    def clear(self) -> CacheInfo:
        """Remove everything prstack cached; returns what was there."""
        before = self.info()
        for sub in ("meta", "git"):
            shutil.rmtree(self.root / sub, ignore_errors=True)
        return before
