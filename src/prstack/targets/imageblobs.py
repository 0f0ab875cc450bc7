"""Where an image's blobs are (a layout folder, or a tar of one, or a `docker save` tarball), read as
seekable windows; its JSON read with a size and nesting limit; its blobs hashed in a process of their
own (targets.blobhash) while the layers' headers are read; and the budgets an image is read within.

Everything is confined to the image: a blob is looked up by digest inside the archive or the layout
folder (a link there is refused); the outer tar's headers are read as strictly as a layer's
(targets.tarheaders)."""

from __future__ import annotations

import errno
import hashlib
import io
import os
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

from prstack.errors import Option, Part, TargetError
from prstack.targets import blobhash
from prstack.targets.confined import inside
from prstack.targets.metadata import JsonTooDeep, bounded_json
from prstack.targets.tarheaders import AHEAD, TarDamaged, headers

JSON_CAP = 4 << 20
"""The largest manifest, index or config read (bytes)."""
OUTER_ENTRIES = 100_000
"""The most members an image's own tar (not a layer) may hold."""


class ImageError(TargetError):
    """An image that cannot be read as one, or a hostile one: the audit stops with this line."""


def image_error(where: str, *what: Part) -> ImageError:
    return ImageError(Option("image"), f" {where}: ", *what)


@dataclass(frozen=True)
class ImageBudget:
    """What reading one image may cost at most; past any of it the image is refused (one line, exit 2)."""

    inflated: int = 128 << 30
    """Bytes of layer tar produced, every distinct layer added up (compressed ones inflated)."""
    entries: int = 1_000_000
    """Headers read, every distinct layer added up (each costs memory in the merged index)."""
    metadata: int = 256 << 20
    """Bytes of .dist-info files held in memory at once: kept while the layers stream by, or read later."""
    layers: int = 512
    """Layers listed by the manifest (each distinct one holds a file handle)."""


@dataclass
class Spent:
    """What reading the image has cost so far, checked against its budget as it grows."""

    budget: ImageBudget
    shown: str
    inflated: int = 0
    entries: int = 0
    held: int = 0

    def inflate(self, n: int) -> None:
        self.inflated += n
        if self.inflated > self.budget.inflated:
            raise image_error(self.shown, f"its layers inflate past {self.budget.inflated} bytes in all; "
                              "refused as too big.")

    def entry(self) -> None:
        self.entries += 1
        if self.entries > self.budget.entries:
            raise image_error(self.shown, f"its layers hold more than {self.budget.entries} entries in all; "
                              "refused as too big.")


class _Positioned(io.RawIOBase):
    """A readable, seekable raw stream that keeps its position in `_pos`."""

    _pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos


class Window(_Positioned):
    """A read-only, seekable view of `length` bytes of `raw` from `start`, counting what it reads."""

    def __init__(self, raw: IO[bytes], start: int, length: int, counter: list[int]) -> None:
        self.raw, self.start, self.length, self._pos, self._counter = raw, start, length, 0, counter
        self.fd = raw.fileno()  # (read with pread: the bytes asked for, no read-ahead of a buffer)

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self.length}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        """Up to `size` bytes (all that is left when -1), in one pread."""
        want = self.length - self._pos if size is None or size < 0 else min(size, self.length - self._pos)
        if want <= 0:
            return b""
        data = os.pread(self.fd, want, self.start + self._pos)
        self._pos += len(data)
        self._counter[0] += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.length - self._pos)
        if want <= 0:
            return 0
        data = os.pread(self.fd, want, self.start + self._pos)
        buffer[: len(data)] = data
        self._pos += len(data)
        self._counter[0] += len(data)
        return len(data)


@dataclass(frozen=True, slots=True)
class _Member:
    offset: int
    size: int
    regular: bool


class Blobs:
    """The blobs of an image (by digest) and its top-level JSON files, in a folder or a tar."""

    def __init__(self, path: Path, budget: ImageBudget | None = None) -> None:
        self.path = path
        self.shown = str(path)
        self.spent = Spent(budget or ImageBudget(), self.shown)
        self.bytes_read = [0]
        self.hashes = BlobHashes(self.shown)
        """The blobs being checked against their digests (started by the merge, checked by `verify`)."""
        self._raw: IO[bytes] | None = None
        self._members: dict[str, _Member] = {}
        self._opened: list[IO[bytes]] = []  # (a layout folder's files, closed with the blobs)
        if path.is_dir():
            return
        if not path.is_file():
            raise image_error(self.shown, "no such file or folder; give a `docker save` tar or an OCI image layout.")
        try:
            self._raw = open(path, "rb", buffering=0)  # noqa: SIM115 (kept open for the target's life)
            self._read_members(Window(self._raw, 0, path.stat().st_size, self.bytes_read))
        except (TarDamaged, OSError) as exc:
            self.close()
            raise image_error(self.shown, f"not a tar file ({exc}); give a `docker save` tar or an OCI image "
                              "layout.") from None
        except BaseException:
            self.close()
            raise

    def _read_members(self, window: Window) -> None:
        for n, member in enumerate(headers(cast(IO[bytes], window), AHEAD)):
            if n >= OUTER_ENTRIES:
                raise image_error(self.shown, f"the archive holds more than {OUTER_ENTRIES} members; it is no image.")
            self._members.setdefault(member.name.removeprefix("./"),
                                     _Member(member.offset, member.size, member.kind == "file"))

    @property
    def budget(self) -> ImageBudget:
        return self.spent.budget

    def has(self, name: str) -> bool:
        if self._raw is None:
            full = inside(str(self.path), name)
            return full is not None and os.path.isfile(full)
        return name in self._members

    def open(self, name: str) -> tuple[Window, int]:
        """A regular file of the image as a seekable stream, and its size."""
        if self._raw is None:
            return self._open_in_folder(name)
        member = self._members.get(name)
        if member is None:
            raise image_error(self.shown, f"{name} is missing from the archive.")
        if not member.regular:
            raise image_error(self.shown, f"{name} is a link or a special file in the archive; refused.")
        end = self.path.stat().st_size
        if member.offset + member.size > end:
            raise image_error(self.shown, f"{name} is truncated (the archive ends inside it).")
        return Window(self._raw, member.offset, member.size, self.bytes_read), member.size

    def _open_in_folder(self, name: str) -> tuple[Window, int]:
        full = inside(str(self.path), name)
        if full is None:
            raise image_error(self.shown, f"{name} leads outside the image layout; refused.")
        try:
            info = os.lstat(full)
        except OSError:
            raise image_error(self.shown, f"{name} is missing from the image layout.") from None
        if not stat.S_ISREG(info.st_mode):
            raise image_error(self.shown, f"{name} is not a regular file; refused.")
        try:
            handle = open(full, "rb", buffering=0)  # noqa: SIM115 (closed by `close`)
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE):
                raise image_error(self.shown, "too many files open to read its layers (raise `ulimit -n`, "
                                  "or flatten the image).") from None
            raise image_error(self.shown, f"cannot read {name}: {exc.strerror}.") from None
        self._opened.append(handle)
        return Window(handle, 0, info.st_size, self.bytes_read), info.st_size

    def json(self, name: str) -> Any:
        stream, size = self.open(name)
        if size > JSON_CAP:
            raise image_error(self.shown, f"{name} is {size} bytes, over the {JSON_CAP}-byte limit for image JSON.")
        return self._parsed(stream.read(size), name)

    def _parsed(self, data: bytes, name: str) -> Any:
        try:
            return bounded_json(data)
        except JsonTooDeep as exc:
            raise image_error(self.shown, f"{name} {exc}; the image is damaged or hostile.") from None
        except ValueError:
            raise image_error(self.shown, f"{name} is not JSON; the image is damaged.") from None

    def blob_json(self, descriptor: Any) -> tuple[Any, str]:
        """The JSON blob a descriptor names, checked against its digest; and the digest."""
        digest = descriptor_digest(descriptor, self.shown)
        stream, size = self.open(blob_name(digest, self.shown))
        if size > JSON_CAP:
            raise image_error(self.shown, f"{digest} is {size} bytes, over the {JSON_CAP}-byte limit for image JSON.")
        data = stream.read(size)
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise image_error(self.shown, f"the blob {digest} does not match its digest; the image is damaged.")
        return self._parsed(data, f"the blob {digest}"), digest

    def verify(self) -> None:
        """Wait for every blob the merge started hashing; raise naming the first that does not match."""
        self.hashes.check()

    def close(self) -> None:
        self.hashes.stop()
        for handle in (*self._opened, *((self._raw,) if self._raw is not None else ())):
            handle.close()
        self._opened.clear()


def descriptor_digest(descriptor: Any, shown: str) -> str:
    digest = descriptor.get("digest") if isinstance(descriptor, dict) else None
    if not isinstance(digest, str):
        raise image_error(shown, "a descriptor without a digest; the image is damaged.")
    return digest


def blob_name(digest: str, shown: str) -> str:
    """Where the blob of a sha256 digest is in a layout: blobs/sha256/HEX."""
    hex_part = digest.removeprefix("sha256:") if isinstance(digest, str) else ""
    if not digest.startswith("sha256:") or len(hex_part) != 64 or any(c not in "0123456789abcdef" for c in hex_part):
        raise image_error(shown, f"a descriptor names {str(digest)[:80]!r}, not a sha256 digest; "
                          "the image is damaged.")
    return f"blobs/sha256/{hex_part}"


# -- blobs hashed beside the merge -------------------------------------------------------------------------

@dataclass
class _Job:
    label: str
    """How the blob is named in a message (its layer's digest)."""
    window: Window
    expected: str
    """sha256:HEX the blob must hash to."""
    got: str | None = None
    failed: str | None = None


@dataclass
class BlobHashes:
    """Blobs hashed while the merge reads their headers: in a child process (targets.blobhash: a core of
    its own, never waiting for this interpreter's lock), or on a worker thread where no child can be
    started. `check` waits for them and raises naming the first blob whose bytes do not match."""

    shown: str
    jobs: list[_Job] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _child: subprocess.Popen[bytes] | None = None
    _checked: bool = False

    def add(self, label: str, window: Window, expected: str) -> None:
        self.jobs.append(_Job(label, window, expected))

    def start(self) -> None:
        if self._thread is not None or self._child is not None or not self.jobs:
            return
        self._child = _hashing_child(self.jobs)
        if self._child is None:
            self._thread = threading.Thread(target=self._run, name="prstack-blob-hashes", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        for job in self.jobs:
            h = hashlib.sha256()
            at, end = job.window.start, job.window.start + job.window.length
            try:
                while at < end and not self._stop.is_set():
                    chunk = os.pread(job.window.fd, min(1 << 20, end - at), at)
                    if not chunk:
                        break
                    h.update(chunk)
                    at += len(chunk)
            except OSError as exc:
                job.failed = exc.strerror or str(exc)
            job.got = "sha256:" + h.hexdigest() if at == end else None

    def _wait_for_child(self, child: subprocess.Popen[bytes]) -> None:
        out, _ = child.communicate()
        lines = out.decode("ascii", "replace").splitlines()
        if child.returncode != 0 or len(lines) != len(self.jobs):
            self._stop.set()
            return
        for job, line in zip(self.jobs, lines, strict=True):
            if line.startswith("! "):
                job.failed = line[2:]
            else:
                job.got = line

    def check(self) -> None:
        if not self._checked:
            if self._child is not None:
                self._wait_for_child(self._child)
            if self._thread is not None:
                self._thread.join()
            self._checked = True
        if self._stop.is_set():
            raise image_error(self.shown, "its layers were not all checked against their digests; refused.")
        for job in self.jobs:
            if job.got != job.expected:
                why = f"cannot be read ({job.failed})" if job.failed else "does not match its digest"
                raise image_error(self.shown, f"the layer {job.label} {why}: its content is not what the "
                                  "manifest names; refused.")

    def stop(self) -> None:
        self._stop.set()
        if self._child is not None and self._child.poll() is None:
            self._child.kill()
            self._child.wait()
        if self._thread is not None:
            self._thread.join()


def _hashing_child(jobs: list[_Job]) -> subprocess.Popen[bytes] | None:
    """targets.blobhash run on the jobs' byte ranges (their files passed open); None when it cannot run."""
    program = Path(blobhash.__file__)
    if not sys.executable or not program.is_file():
        return None
    ranges = [f"{job.window.fd}:{job.window.start}:{job.window.length}" for job in jobs]
    try:
        return subprocess.Popen([sys.executable, "-I", "-S", str(program), str(os.getpid()), *ranges],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                pass_fds=sorted({job.window.fd for job in jobs}))
    except OSError:
        return None
