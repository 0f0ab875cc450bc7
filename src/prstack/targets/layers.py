"""A container image's file system read from its layers, never unpacked: a docker/podman save tarball or an
OCI image layout (a folder or its tar), the manifest chosen by platform, the layers merged in order with
their whiteouts into one index of paths (headers only), and a file's bytes read from the layer that last
wrote it, on demand.

Everything is confined to the image: blobs are looked up by digest inside the archive or the layout
folder (a link there is refused), layer entries with `..` or absolute names, links leading out of the
image's root, layers over the size cap and truncated ones are refused with one ImageError.
"""

from __future__ import annotations

import bisect
import hashlib
import io
import json
import os
import platform as host
import posixpath
import re
import stat
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from prstack.errors import TargetError
from prstack.targets.confined import METADATA_CAP, inside
from prstack.targets.tarheaders import TarDamaged, headers

LAYER_CAP = 64 << 30
"""The largest layer read, compressed or not (bytes): a bigger one is refused, never inflated."""
JSON_CAP = 4 << 20
"""The largest manifest, index or config read (bytes)."""
CHECKPOINT_EVERY = 1 << 20
"""Uncompressed bytes between two saved inflate states of a compressed layer (random reads restart there)."""
LINK_HOPS = 40
"""Symbolic links followed on one path before it is refused as a loop (Linux's own limit)."""

DIST_INFO_FILES = ("METADATA", "RECORD", "direct_url.json", "top_level.txt", "INSTALLER")
"""The files of a distribution's .dist-info an image target reads (kept as the merge passes them)."""
_DIST_INFO_FILE = re.compile(r"(?:^|/)(?:site|dist)-packages/[^/]+\.dist-info/(?:"
                             + "|".join(map(re.escape, DIST_INFO_FILES)) + ")$")
INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")
_DIGEST = re.compile(r"^sha256:([0-9a-f]{64})$")


class ImageError(TargetError):
    """An image that cannot be read as one, or a hostile one: the audit stops with this line."""


def _err(where: str, what: str) -> ImageError:
    return ImageError(f"--image {where}: {what}")


# -- where the blobs are: a folder, or a tar of one ---------------------------------------------------

class _Positioned(io.RawIOBase):
    """A readable, seekable raw stream that keeps its position in `_pos`."""

    _pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos


class _Window(_Positioned):
    """A read-only, seekable view of `length` bytes of `raw` from `start`, counting what it reads."""

    def __init__(self, raw: IO[bytes], start: int, length: int, counter: list[int]) -> None:
        self._raw, self._start, self._length, self._pos, self._counter = raw, start, length, 0, counter
        self._fd = raw.fileno()  # (read with pread: the bytes asked for, no read-ahead of a buffer)


    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._length}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self._length - self._pos)
        if want <= 0:
            return 0
        data = os.pread(self._fd, want, self._start + self._pos)
        buffer[: len(data)] = data
        self._pos += len(data)
        self._counter[0] += len(data)
        return len(data)


class Blobs:
    """The blobs of an image (by digest) and its top-level JSON files, in a folder or a tar."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.shown = str(path)
        self.bytes_read = [0]
        self._tar: tarfile.TarFile | None = None
        self._raw: IO[bytes] | None = None
        self._members: dict[str, tarfile.TarInfo] = {}
        self._opened: list[IO[bytes]] = []  # (a layout folder's files, closed with the blobs)
        if path.is_dir():
            return
        if not path.is_file():
            raise _err(self.shown, "no such file or folder; give a `docker save` tar or an OCI image layout.")
        try:
            self._raw = open(path, "rb", buffering=0)  # noqa: SIM115 (kept open for the target's life)
            window = _Window(self._raw, 0, path.stat().st_size, self.bytes_read)
            self._tar = tarfile.open(fileobj=window, mode="r:")  # noqa: SIM115
            for member in self._tar:
                self._members.setdefault(member.name.removeprefix("./"), member)
            _forget(self._tar)
        except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
            raise _err(self.shown, f"not a tar file ({exc}); give a `docker save` tar or an OCI image "
                       "layout.") from None

    def has(self, name: str) -> bool:
        if self._tar is None:
            full = inside(str(self.path), name)
            return full is not None and os.path.isfile(full)
        return name in self._members

    def open(self, name: str) -> tuple[IO[bytes], int]:
        """A regular file of the image as a seekable stream, and its size."""
        if self._tar is None or self._raw is None:
            full = inside(str(self.path), name)
            if full is None:
                raise _err(self.shown, f"{name} leads outside the image layout; refused.")
            try:
                info = os.lstat(full)
            except OSError:
                raise _err(self.shown, f"{name} is missing from the image layout.") from None
            if not stat.S_ISREG(info.st_mode):
                raise _err(self.shown, f"{name} is not a regular file; refused.")
            handle = open(full, "rb", buffering=0)  # noqa: SIM115 (closed by `close`)
            self._opened.append(handle)
            return _Window(handle, 0, info.st_size, self.bytes_read), info.st_size  # type: ignore[return-value]
        member = self._members.get(name)
        if member is None:
            raise _err(self.shown, f"{name} is missing from the archive.")
        if not member.isreg():
            raise _err(self.shown, f"{name} is a link or a special file in the archive; refused.")
        end = self.path.stat().st_size
        if member.offset_data + member.size > end:
            raise _err(self.shown, f"{name} is truncated (the archive ends inside it).")
        window = _Window(self._raw, member.offset_data, member.size, self.bytes_read)
        return window, member.size  # type: ignore[return-value]

    def json(self, name: str) -> Any:
        stream, size = self.open(name)
        if size > JSON_CAP:
            raise _err(self.shown, f"{name} is {size} bytes, over the {JSON_CAP}-byte limit for image JSON.")
        data = stream.read(size)
        try:
            return json.loads(data)
        except ValueError:
            raise _err(self.shown, f"{name} is not JSON; the image is damaged.") from None

    def blob_name(self, digest: str) -> str:
        m = _DIGEST.match(digest) if isinstance(digest, str) else None
        if m is None:
            raise _err(self.shown, f"a descriptor names {str(digest)[:80]!r}, not a sha256 digest; "
                       "the image is damaged.")
        return f"blobs/sha256/{m.group(1)}"

    def blob_json(self, descriptor: Any) -> tuple[Any, str]:
        """The JSON blob a descriptor names, checked against its digest; and the digest."""
        digest = _descriptor_digest(descriptor, self.shown)
        stream, size = self.open(self.blob_name(digest))
        if size > JSON_CAP:
            raise _err(self.shown, f"{digest} is {size} bytes, over the {JSON_CAP}-byte limit for image JSON.")
        data = stream.read(size)
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise _err(self.shown, f"the blob {digest} does not match its digest; the image is damaged.")
        try:
            return json.loads(data), digest
        except ValueError:
            raise _err(self.shown, f"the blob {digest} is not JSON; the image is damaged.") from None

    def close(self) -> None:
        for handle in (*self._opened, *((self._raw,) if self._raw is not None else ())):
            handle.close()
        self._opened.clear()


def _descriptor_digest(descriptor: Any, shown: str) -> str:
    digest = descriptor.get("digest") if isinstance(descriptor, dict) else None
    if not isinstance(digest, str):
        raise _err(shown, "a descriptor without a digest; the image is damaged.")
    return digest


# -- which manifest: the platform ----------------------------------------------------------------------

def host_platform() -> str:
    """The host as an OCI platform: linux/amd64, linux/arm64..."""
    machine = host.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "arm/v7",
            "ppc64le": "ppc64le", "s390x": "s390x", "i686": "386", "i386": "386"}.get(machine, machine)
    return f"linux/{arch}"


def _platform_name(descriptor: dict[str, Any]) -> str | None:
    p = descriptor.get("platform")
    if not isinstance(p, dict) or not isinstance(p.get("os"), str) or not isinstance(p.get("architecture"), str):
        return None
    name = f"{p['os']}/{p['architecture']}"
    return name + (f"/{p['variant']}" if isinstance(p.get("variant"), str) and p["variant"] else "")


@dataclass(frozen=True)
class Layer:
    digest: str
    """The layer blob's digest (the layer that last wrote a file is named by it)."""
    name: str
    """Where its blob is in the archive or the layout."""
    size: int | None
    """The size its descriptor declares (None in a docker save manifest)."""
    media_type: str = ""


@dataclass(frozen=True)
class ImageManifest:
    digest: str
    """The manifest's digest (OCI), or the image config's digest (its ID) for a docker save tarball."""
    digest_kind: str
    """'manifest' or 'config' (a docker save tarball carries no manifest blob)."""
    platform: str | None
    layers: tuple[Layer, ...]
    platforms: tuple[str, ...] = ()
    """Every platform the image offers (for a multi-platform index)."""


def _manifests(blobs: Blobs, descriptors: Any, depth: int = 0) -> Iterator[tuple[dict[str, Any], str | None]]:
    """(manifest descriptor, platform) of an index's manifests, nested indexes followed."""
    if not isinstance(descriptors, list) or depth > 4:
        raise _err(blobs.shown, "an index without a list of manifests; the image is damaged.")
    for d in descriptors:
        if not isinstance(d, dict):
            continue
        if d.get("mediaType") in INDEX_TYPES:
            nested, _ = blobs.blob_json(d)
            yield from _manifests(blobs, nested.get("manifests") if isinstance(nested, dict) else None, depth + 1)
        else:
            yield d, _platform_name(d)


def find_manifest(blobs: Blobs, wanted: str | None) -> ImageManifest:
    """The image's manifest for `wanted` (default: the host's platform when there are several)."""
    if blobs.has("index.json"):
        index = blobs.json("index.json")
        found = [(d, p) for d, p in _manifests(blobs, index.get("manifests") if isinstance(index, dict) else None)
                 if p != "unknown/unknown"]  # (build attestations)
        if not found:
            raise _err(blobs.shown, "its index.json lists no image manifest.")
        offered = tuple(p for _, p in found if p)
        if len(found) == 1 and wanted is None:
            chosen = found[0]
        else:
            goal = wanted or host_platform()
            picked = [f for f in found if f[1] == goal] or [f for f in found if f[1] and f[1].startswith(goal + "/")]
            if not picked:
                how = "--platform" if wanted else f"the host's platform {goal}; give --platform"
                raise _err(blobs.shown, f"no manifest for {goal}; it offers {', '.join(offered) or 'no platform'} "
                           f"(chosen by {how} one of them).")
            chosen = picked[0]
        manifest, digest = blobs.blob_json(chosen[0])
        layers = manifest.get("layers") if isinstance(manifest, dict) else None
        if not isinstance(layers, list):
            raise _err(blobs.shown, f"the manifest {digest} has no layers; the image is damaged.")
        out = []
        for d in layers:
            ld = _descriptor_digest(d, blobs.shown)
            size = d.get("size")
            media = str(d.get("mediaType", ""))
            out.append(Layer(ld, blobs.blob_name(ld), size if isinstance(size, int) else -1, media))
        return ImageManifest(digest, "manifest", chosen[1], tuple(out), offered)
    if blobs.has("manifest.json"):
        entries = blobs.json("manifest.json")
        if not isinstance(entries, list) or not entries or not isinstance(entries[0], dict):
            raise _err(blobs.shown, "its manifest.json lists no image; the tarball is damaged.")
        if len(entries) > 1:
            tags = ", ".join(str(t) for e in entries if isinstance(e, dict) for t in e.get("RepoTags") or [])
            raise _err(blobs.shown, f"the tarball holds {len(entries)} images ({tags or 'untagged'}); "
                       "save one image per tarball.")
        entry = entries[0]
        config = entry.get("Config")
        layers = entry.get("Layers")
        if not isinstance(config, str) or not isinstance(layers, list) or not all(isinstance(x, str) for x in layers):
            raise _err(blobs.shown, "its manifest.json has no Config and Layers; the tarball is damaged.")
        stream, size = blobs.open(config)
        if size > JSON_CAP:
            raise _err(blobs.shown, f"{config} is over the {JSON_CAP}-byte limit for image JSON.")
        digest = "sha256:" + hashlib.sha256(stream.read(size)).hexdigest()
        named = []
        for name in layers:
            m = re.search(r"([0-9a-f]{64})", name)
            named.append(Layer(f"sha256:{m.group(1)}" if m else name, name, None))
        if wanted is not None:
            raise _err(blobs.shown, "a docker save tarball holds one platform; leave --platform out.")
        return ImageManifest(digest, "config", None, tuple(named))
    raise _err(blobs.shown, "neither index.json (OCI image layout) nor manifest.json (docker save) in it; "
               "give a `docker save` tar or an OCI image layout.")


# -- a layer's bytes: plain, or gzip inflated with saved states for random reads ----------------------

class _Inflated(io.RawIOBase):
    """A gzip stream as a seekable file of its uncompressed bytes. Reading forward inflates; a seek
    back restarts from the nearest saved inflate state (one every CHECKPOINT_EVERY bytes)."""

    def __init__(self, raw: IO[bytes], shown: str) -> None:
        self._raw, self._shown = raw, shown
        self._checkpoints: list[tuple[int, int, Any]] = []  # (uncompressed pos, compressed pos, inflater)
        self._restart(0, 0, zlib.decompressobj(31))
        self.total: int | None = None

    def _restart(self, out_pos: int, in_pos: int, inflater: Any) -> None:
        self._out, self._in, self._z, self._pending = out_pos, in_pos, inflater.copy(), b""
        self._buf, self._at = b"", 0  # (inflated bytes not read yet: self._buf[self._at:])
        self._last_mark = out_pos

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._out - (len(self._buf) - self._at)

    def _more(self) -> bool:
        """Inflate the next piece into the (emptied) buffer; False at the end."""
        if not self._pending:
            if self._out - self._last_mark >= CHECKPOINT_EVERY or not self._checkpoints:
                if not self._checkpoints or self._checkpoints[-1][0] < self._out:
                    self._checkpoints.append((self._out, self._in, self._z.copy()))
                self._last_mark = self._out
            self._raw.seek(self._in)
            data = self._raw.read(1 << 16)
            self._in += len(data)
            if not data:
                if not self._z.eof:
                    raise _err(self._shown, "a compressed layer is truncated (its gzip stream ends early).")
                self.total = self._out
                return False
        else:
            data, self._pending = self._pending, b""
        if self._z.eof:  # a gzip of several members, or trailing bytes
            if not data.strip(b"\0"):
                return True
            self._z = zlib.decompressobj(31)
        try:
            out = self._z.decompress(data, 1 << 20)
        except zlib.error as exc:
            raise _err(self._shown, f"a compressed layer is damaged ({exc}).") from None
        self._pending = self._z.unconsumed_tail or self._z.unused_data
        self._out += len(out)
        if self._out > LAYER_CAP:
            raise _err(self._shown, f"a layer inflates past {LAYER_CAP} bytes; refused as too big.")
        self._buf, self._at = out, 0
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence == 2:
            while self._more():
                self._at = len(self._buf)
            return self.tell()
        target = offset + (self.tell() if whence == 1 else 0)
        at = bisect.bisect_right(self._checkpoints, target, key=lambda c: c[0]) - 1
        best = self._checkpoints[at] if at >= 0 else None
        if target < self.tell() or (best is not None and best[0] > self.tell()):  # (back, or far ahead)
            if best is None:
                raise _err(self._shown, "a compressed layer cannot be re-read.")
            self._restart(best[0], best[1], best[2])
        skip = target - self.tell()
        while skip > len(self._buf) - self._at:
            skip -= len(self._buf) - self._at
            self._at = len(self._buf)
            if not self._more():
                return self.tell()
        self._at += skip
        return self.tell()

    def readinto(self, buffer: Any) -> int:
        while self._at >= len(self._buf):
            if not self._more():
                return 0
        n = min(len(buffer), len(self._buf) - self._at)
        buffer[:n] = memoryview(self._buf)[self._at : self._at + n]
        self._at += n
        return n


class _Unzstd(_Positioned):
    """A zstd stream (one frame or several) as a seekable file of its uncompressed bytes. Reading and
    seeking forward decompress; a seek back starts again from the layer's first byte (zstd keeps no
    state to copy: the audit reads a layer's files in the order the layer holds them)."""

    def __init__(self, raw: IO[bytes], shown: str) -> None:
        self._raw, self._shown = raw, shown
        self._start()

    def _start(self) -> None:
        import zstandard

        self._raw.seek(0)
        self._reader = zstandard.ZstdDecompressor().stream_reader(self._raw, read_size=1 << 16,
                                                                  read_across_frames=True, closefd=False)
        self._pos = 0


    def _read(self, size: int) -> bytes:
        import zstandard

        try:
            data = self._reader.read(size)
        except zstandard.ZstdError as exc:
            raise _err(self._shown, f"a zstd-compressed layer is damaged ({exc}).") from None
        self._pos += len(data)
        if self._pos > LAYER_CAP:
            raise _err(self._shown, f"a layer inflates past {LAYER_CAP} bytes; refused as too big.")
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence == 2:
            while self._read(1 << 20):
                pass
            return self._pos
        target = offset + (self._pos if whence == 1 else 0)
        if target < self._pos:
            self._start()
        while self._pos < target and self._read(min(target - self._pos, 1 << 20)):
            pass
        return self._pos

    def readinto(self, buffer: Any) -> int:
        data = self._read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def open_layer(blobs: Blobs, layer: Layer) -> IO[bytes]:
    """A layer's tar as a seekable stream (decompressed when gzip or zstd-compressed)."""
    raw, size = blobs.open(layer.name)
    if size > LAYER_CAP or (layer.size or 0) > LAYER_CAP:
        raise _err(blobs.shown, f"the layer {layer.digest} is over {LAYER_CAP} bytes; refused as too big.")
    if layer.size is not None and layer.size >= 0 and layer.size != size:
        what = "truncated" if size < layer.size else "longer than its descriptor says"
        raise _err(blobs.shown, f"the layer {layer.digest} is {size} bytes but its descriptor says {layer.size}: "
                   f"{what}; refused.")
    head = raw.read(4)
    raw.seek(0)
    if head[:2] == b"\x1f\x8b":
        return io.BufferedReader(_Inflated(raw, blobs.shown), 1 << 16)
    if head == b"\x28\xb5\x2f\xfd":
        return io.BufferedReader(_Unzstd(raw, blobs.shown), 1 << 16)
    return raw


def _forget(tar: tarfile.TarFile) -> None:
    """Drop the members a TarFile keeps (an image's layers hold hundreds of thousands): only headers pass."""
    tar.members = []  # type: ignore[attr-defined]


# -- the merged file system ------------------------------------------------------------------------------

@dataclass(slots=True)
class Entry:
    """What the image holds at a path once every layer is applied."""

    layer: int
    kind: str
    """'file', 'dir', 'symlink', 'hardlink' or 'other'."""
    offset: int = 0
    size: int = 0
    link: str = ""


@dataclass
class Merged:
    """The image's file system as an index: path (no leading slash) -> entry, built from the headers."""

    entries: dict[str, Entry] = field(default_factory=dict)
    layers: tuple[Layer, ...] = ()
    streams: dict[int, IO[bytes]] = field(default_factory=dict)
    """Each layer's stream as the merge left it (a compressed one keeps its saved inflate states)."""
    compressed: set[int] = field(default_factory=set)
    """The layers read through a decompressor (a file behind the stream's place costs a restart)."""
    held: dict[tuple[int, int], bytes] = field(default_factory=dict)
    """(layer, offset) -> bytes of the .dist-info files, read as the merge streamed past them: finding
    the environments and their distributions inflates no layer again."""


def _clean_name(name: str, shown: str, layer: Layer) -> str:
    raw = name
    if name.startswith("/"):
        raise _err(shown, f"the layer {layer.digest} holds the absolute path {raw[:200]!r}; refused as hostile.")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts or "\0" in name:
        raise _err(shown, f"the layer {layer.digest} holds the path {raw[:200]!r}, which leaves the image; "
                   "refused as hostile.")
    return "/".join(parts)


def _link_leaves(path: str, target: str) -> bool:
    """True when a symbolic link at `path` to `target` climbs above the image's root."""
    base = "" if target.startswith("/") else posixpath.dirname(path)
    depth = len([p for p in base.split("/") if p])
    for part in target.split("/"):
        if part in ("", "."):
            continue
        depth += -1 if part == ".." else 1
        if depth < 0:
            return True
    return False


def merge_layers(blobs: Blobs, manifest: ImageManifest) -> Merged:
    """Every layer's headers applied in order: whiteouts (`.wh.NAME`) remove what lower layers hold,
    an opaque folder (`.wh..wh..opq`) hides all of it; no file content is read."""
    merged = Merged(layers=manifest.layers)
    entries = merged.entries
    for number, layer in enumerate(manifest.layers):
        stream = open_layer(blobs, layer)
        written: dict[str, Entry] = {}
        opaque: list[str] = []
        whiteouts: list[str] = []
        try:
            for member in headers(stream):
                name = _clean_name(member.name, blobs.shown, layer)
                if not name:
                    continue
                folder, _, base = name.rpartition("/")
                if base == ".wh..wh..opq":
                    opaque.append(folder)
                    continue
                if base.startswith(".wh."):
                    whiteouts.append(f"{folder}/{base[4:]}" if folder else base[4:])
                    continue
                if member.kind == "file":
                    written[name] = Entry(number, "file", member.offset, member.size)
                    if member.size <= METADATA_CAP and _DIST_INFO_FILE.search(name):
                        stream.seek(member.offset)
                        merged.held[(number, member.offset)] = stream.read(member.size)
                elif member.kind == "symlink":
                    if _link_leaves(name, member.link):
                        raise _err(blobs.shown, f"the layer {layer.digest} links {name} to {member.link[:200]!r}, "
                                   "outside the image; refused as hostile.")
                    written[name] = Entry(number, "symlink", link=member.link)
                elif member.kind == "hardlink":
                    written[name] = Entry(number, "hardlink", link=_clean_name(member.link, blobs.shown, layer))
                else:
                    written[name] = Entry(number, member.kind)
        except TarDamaged as exc:
            raise _err(blobs.shown, f"the layer {layer.digest} is {exc}; it is truncated or damaged.") from None
        except (EOFError, OSError) as exc:
            raise _err(blobs.shown, f"the layer {layer.digest} is truncated ({exc}).") from None
        merged.streams[number] = stream
        if not isinstance(stream, _Window):
            merged.compressed.add(number)
        emptied = set(opaque)
        for gone in whiteouts:
            removed = entries.pop(gone, None)
            if removed is None or removed.kind == "dir":  # (a folder may be implied by its files alone)
                emptied.add(gone)
        replaced = {name for name, entry in written.items() if entry.kind != "dir"
                    and (old := entries.get(name)) is not None and old.kind == "dir"}
        _remove_under(entries, emptied | replaced)
        for name, entry in written.items():
            if entry.kind == "hardlink":
                source = written.get(entry.link) or entries.get(entry.link)
                if source is None or source.kind != "file":
                    raise _err(blobs.shown, f"the layer {layer.digest} hard-links {name} to {entry.link!r}, "
                               "which it does not hold; refused.")
                entry = Entry(source.layer, "file", source.offset, source.size)
            entries[name] = entry
        end = stream.seek(0, 2)
        for name, entry in written.items():
            if entry.kind == "file" and entry.offset + entry.size > end:
                raise _err(blobs.shown, f"the layer {layer.digest} is truncated inside {name}.")
    return merged


def _remove_under(entries: dict[str, Entry], folders: set[str]) -> None:
    """Drop every entry below one of `folders` ('' is the root), in one pass over the index."""
    if not folders:
        return
    if "" in folders:
        entries.clear()
        return
    if len(folders) <= 256:  # (str.startswith over a few prefixes is one C call a path)
        prefixes = tuple(f + "/" for f in folders)
        doomed = [path for path in entries if path.startswith(prefixes)]
    else:
        doomed = [path for path in entries if any(path[:cut] in folders for cut in _slashes(path))]
    for path in doomed:
        del entries[path]


def _slashes(path: str) -> Iterator[int]:
    cut = path.find("/")
    while cut > 0:
        yield cut
        cut = path.find("/", cut + 1)


def resolve(merged: Merged, path: str, shown: str) -> str | None:
    """`path` with every symbolic link on the way followed inside the image; None when nothing is there.

    A link is resolved against the image's root (an absolute target is the image's, never the host's)."""
    parts = [p for p in path.split("/") if p]
    done: list[str] = []
    hops = 0
    while parts:
        part = parts.pop(0)
        if part == ".":
            continue
        if part == "..":
            if not done:
                raise _err(shown, f"{path} leads outside the image; refused.")
            done.pop()
            continue
        here = "/".join([*done, part])
        entry = merged.entries.get(here)
        if entry is None and not parts:
            return None
        if entry is not None and entry.kind == "symlink":  # (a folder a layer names no entry for is implied)
            hops += 1
            if hops > LINK_HOPS:
                raise _err(shown, f"{path}: too many levels of links in the image.")
            target = entry.link
            if target.startswith("/"):
                done = []
            parts = [p for p in target.split("/") if p] + parts
            continue
        done.append(part)
    return "/".join(done)


def read_file(blobs: Blobs, merged: Merged, streams: dict[int, IO[bytes]], path: str, cap: int) -> bytes | None:
    """The bytes of the regular file at `path` (links followed inside the image), from the layer that
    last wrote it; None when the image has no file there. Raises OverCap when it is over `cap`."""
    real = resolve(merged, path, blobs.shown)
    entry = merged.entries.get(real) if real is not None else None
    if entry is None or entry.kind != "file":
        return None
    if entry.size > cap:
        raise OverCap(entry.size)
    held = merged.held.get((entry.layer, entry.offset))
    if held is not None and len(held) == entry.size:
        return held
    stream = streams.get(entry.layer)
    if stream is None:
        stream = streams[entry.layer] = open_layer(blobs, merged.layers[entry.layer])
    stream.seek(entry.offset)
    data = stream.read(entry.size)
    if len(data) != entry.size:
        raise _err(blobs.shown, f"the layer {merged.layers[entry.layer].digest} is truncated inside {path}.")
    return data


class OverCap(Exception):
    """A file over the read cap (its size)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size
