"""The on-disk cache: atomic, checksummed entries (platform cache dir or PRSTACK_CACHE_DIR), private to
the user (folders 0700, files 0600), one folder per repository under a name that cannot collide."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prstack.errors import InputError, SourceError
from prstack.files import write_file

CACHE_ENV = "PRSTACK_CACHE_DIR"
_MAGIC = b"prstack-cache/1 sha256="
_KEPT = re.compile(r"[A-Za-z0-9_-]|(?<!^)\.")
"""Characters a cache name keeps as they are (a dot but the first); every other is escaped."""
NAME_MAX = 200


def default_cache_root(env: Mapping[str, str] | None = None) -> Path:
    """PRSTACK_CACHE_DIR when set, else the platform's user cache directory for prstack."""
    env = os.environ if env is None else env
    override = env.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs  # (only when no folder is given)

    return Path(platformdirs.user_cache_dir("prstack", appauthor=False))


def safe_name(text: str) -> str:
    """A key as one file name, escaped and never stripped, so that two keys never share one: every
    byte but letters, digits, `_`, `-` and a dot that does not lead is %XX ('.name' -> '%2Ename',
    'a/b' -> 'a%2Fb'); a name past NAME_MAX keeps its start and a hash of the whole."""
    name = "".join(c if _KEPT.match(text, i) else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))
                   for i, c in enumerate(text)) or "%"
    if len(name) > NAME_MAX:
        name = name[: NAME_MAX - 65] + "~" + hashlib.sha256(name.encode()).hexdigest()
    return name


def private_folder(path: Path, root: Path) -> None:
    """`path` (below `root`) made with each missing folder from `root` down 0700."""
    missing = [p for p in (path, *path.parents) if not p.exists() and (p == root or root in p.parents)]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)


def atomic_write(path: Path, data: bytes, root: Path | None = None) -> None:
    """Write `data` to `path` (0600, its missing folders 0700 from `root` down) so readers see the old
    file or the whole new one, never a part."""
    private_folder(path.parent, root or path.parent)
    try:
        write_file(path, data, private=True)
    except InputError as exc:
        raise OSError(str(exc)) from None


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
            atomic_write(self._entry_path(namespace, key), encode_entry(value), self.root)
        except OSError as exc:
            raise SourceError(
                f"cannot write the cache under {self.root}: {exc.strerror or exc}; "
                f"set {CACHE_ENV} to a writable directory."
            ) from None

    def git_dir(self, host: str, owner: str, name: str) -> Path:
        """Where the managed bare repository of one GitHub repository lives (its parent folders made
        0700 here: the repository itself is made by its first fetch)."""
        path = self.root / "git" / safe_name(host) / safe_name(owner) / (safe_name(name) + ".git")
        with contextlib.suppress(OSError):  # (a read-only cache: the fetch, if any, says so)
            private_folder(path.parent, self.root)
        return path

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
