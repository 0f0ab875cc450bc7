"""Container images built with the standard library, as `docker save` and OCI image layouts write them:
layers are tars (plain or gzip) of entries, whiteouts and opaque folders included; an OCI layout has
oci-layout, index.json and blobs/sha256/<hex>; a docker save tar has manifest.json, a config and
<hex>/layer.tar per layer."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER_TAR = "application/vnd.oci.image.layer.v1.tar"
LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
LAYER_ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@dataclass(frozen=True)
class E:
    """One entry of a layer: kind file | dir | symlink | hardlink | whiteout | opaque, its name as
    written in the tar (no normalisation: hostile names stay hostile), data or link target."""

    kind: str
    name: str
    data: bytes = b""
    link: str = ""


def layer(entries: Iterable[E], compress: bool | str = False) -> bytes:
    """A layer tar of `entries`, compressed when asked: True or "gzip", or "zstd" (in frames of
    64 KiB of tar, as a streaming compressor writes them)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for e in entries:
            info = tarfile.TarInfo(e.name)
            info.mtime = 1_700_000_000
            if e.kind == "file":
                info.size = len(e.data)
                tar.addfile(info, io.BytesIO(e.data))
                continue
            if e.kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
            elif e.kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, e.link
            elif e.kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, e.link
            elif e.kind == "whiteout":
                folder, _, base = e.name.rpartition("/")
                info.name = f"{folder}/.wh.{base}" if folder else f".wh.{base}"
            elif e.kind == "opaque":
                info.name = f"{e.name.rstrip('/')}/.wh..wh..opq"
            else:
                raise ValueError(e.kind)
            tar.addfile(info)
    data = buffer.getvalue()
    if compress == "zstd":
        import zstandard

        frames = zstandard.ZstdCompressor()
        return b"".join(frames.compress(data[i : i + (1 << 16)]) for i in range(0, len(data), 1 << 16))
    return gzip.compress(data, mtime=0) if compress else data


def files_of(root: Path, into: str) -> list[E]:
    """A real folder (a site-packages) as layer entries under `into` (a path in the image)."""
    out = [E("dir", into)]
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        base = into if rel == "." else f"{into}/{rel}"
        out += [E("dir", f"{base}/{d}") for d in dirnames]
        out += [E("file", f"{base}/{f}", (Path(dirpath) / f).read_bytes()) for f in sorted(filenames)]
    return out


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _config(layers: Sequence[bytes], platform: str | None) -> bytes:
    os_name, arch = (platform or "linux/amd64").split("/")[:2]
    known: dict[str, str] = {}  # (a layer listed again is hashed once)
    diff_ids = [known.get(d) or known.setdefault(d, _diff_id(x)) for x in layers for d in [digest(x)]]
    return json.dumps({"architecture": arch, "os": os_name, "rootfs": {"type": "layers", "diff_ids": diff_ids},
                       "config": {}}).encode()


def _diff_id(data: bytes) -> str:
    """The digest of a layer's tar; a big gzip layer inflated as a stream, never whole in memory."""
    if data[:2] != b"\x1f\x8b" or len(data) < 1 << 20:
        return digest(_inflated(data))
    h = hashlib.sha256()
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
        while chunk := stream.read(1 << 20):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def _inflated(data: bytes) -> bytes:
    """A layer's tar (a cut gzip stream as far as it goes: a damaged layer is built too)."""
    if data[:4] == ZSTD_MAGIC:
        import zstandard

        return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True).read()
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        return gzip.decompress(data)
    except (EOFError, OSError):
        return data


@dataclass
class OCIImage:
    path: Path
    manifests: dict[str | None, str]
    """platform -> manifest digest."""
    layers: dict[str | None, list[str]]
    """platform -> layer digests, bottom first."""


def oci_layout(dest: Path, images: dict[str | None, Sequence[bytes]], *, as_tar: bool = False,
               sizes: dict[int, int] | None = None, platforms_in_index: bool = True) -> OCIImage:
    """An OCI image layout at `dest` (a folder, or a tar of it) holding one manifest per platform
    (several make a multi-platform index); `sizes` overrides a layer descriptor's size by position."""
    blobs: dict[str, bytes] = {}

    def put(data: bytes) -> str:
        d = digest(data)
        blobs[d] = data
        return d

    descriptors, manifests, layer_digests = [], {}, {}
    for platform, layers in images.items():
        config = _config(layers, platform)
        layer_descs = []
        for i, data in enumerate(layers):
            media = LAYER_GZIP if data[:2] == b"\x1f\x8b" else LAYER_ZSTD if data[:4] == ZSTD_MAGIC else LAYER_TAR
            layer_descs.append({"mediaType": media, "digest": put(data),
                                "size": (sizes or {}).get(i, len(data))})
        manifest = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                               "config": {"mediaType": OCI_CONFIG, "digest": put(config), "size": len(config)},
                               "layers": layer_descs}).encode()
        d = put(manifest)
        manifests[platform] = d
        layer_digests[platform] = [x["digest"] for x in layer_descs]
        desc: dict[str, object] = {"mediaType": OCI_MANIFEST, "digest": d, "size": len(manifest)}
        if platform is not None and platforms_in_index:
            os_name, arch, *variant = platform.split("/")
            desc["platform"] = {"os": os_name, "architecture": arch, **({"variant": variant[0]} if variant else {})}
        descriptors.append(desc)
    files = {"oci-layout": json.dumps({"imageLayoutVersion": "1.0.0"}).encode(),
             "index.json": json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": descriptors}).encode()}
    files |= {f"blobs/sha256/{d.removeprefix('sha256:')}": data for d, data in blobs.items()}
    _write(dest, files, as_tar)
    return OCIImage(dest, manifests, layer_digests)


def docker_archive(dest: Path, layers: Sequence[bytes], tags: Sequence[str] = ("example/app:1",)) -> str:
    """A `docker save` tarball of one image; returns its image ID (the config's digest)."""
    config = _config(layers, None)
    config_name = digest(config).removeprefix("sha256:") + ".json"
    files = {config_name: config}
    names = []
    for data in layers:
        name = f"{digest(data).removeprefix('sha256:')}/layer.tar"
        files[name] = data
        names.append(name)
    files["manifest.json"] = json.dumps([{"Config": config_name, "RepoTags": list(tags), "Layers": names}]).encode()
    _write(dest, files, True)
    return digest(config)


def _write(dest: Path, files: dict[str, bytes], as_tar: bool) -> None:
    if as_tar:
        with tarfile.open(dest, "w") as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        return
    for name, data in files.items():
        path = dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
