"""Which manifest of an image is audited (by platform, nested indexes followed) and its layers: an OCI
layout's manifest, or a `docker save` tarball's manifest.json with its config's diff_ids (each layer's
tar is checked against its own)."""

from __future__ import annotations

import hashlib
import platform as host
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from prstack.errors import Option, Part
from prstack.targets.imageblobs import JSON_CAP, Blobs, blob_name, descriptor_digest, image_error

INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")


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
    diff_id: str | None = None
    """What the layer's tar hashes to, where the image says it apart from the blob's digest (docker save)."""


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
        raise image_error(blobs.shown, "an index without a list of manifests; the image is damaged.")
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
        return _oci_manifest(blobs, wanted)
    if blobs.has("manifest.json"):
        if wanted is not None:
            raise image_error(blobs.shown, "a docker save tarball holds one platform; leave ", Option("platform"),
                              " out.")
        return _docker_manifest(blobs)
    raise image_error(blobs.shown, "neither index.json (OCI image layout) nor manifest.json (docker save) in it; "
                      "give a `docker save` tar or an OCI image layout.")


def _oci_manifest(blobs: Blobs, wanted: str | None) -> ImageManifest:
    index = blobs.json("index.json")
    found = [(d, p) for d, p in _manifests(blobs, index.get("manifests") if isinstance(index, dict) else None)
             if p != "unknown/unknown"]  # (build attestations)
    if not found:
        raise image_error(blobs.shown, "its index.json lists no image manifest.")
    offered = tuple(p for _, p in found if p)
    if len(found) == 1 and wanted is None:
        chosen = found[0]
    else:
        goal = wanted or host_platform()
        picked = [f for f in found if f[1] == goal] or [f for f in found if f[1] and f[1].startswith(goal + "/")]
        if not picked:
            how: tuple[Part, ...] = ((Option("platform"),) if wanted
                                     else (f"the host's platform {goal}; give ", Option("platform")))
            raise image_error(blobs.shown, f"no manifest for {goal}; it offers {', '.join(offered) or 'no platform'} "
                              "(chosen by ", *how, " one of them).")
        chosen = picked[0]
    manifest, digest = blobs.blob_json(chosen[0])
    layers = manifest.get("layers") if isinstance(manifest, dict) else None
    if not isinstance(layers, list):
        raise image_error(blobs.shown, f"the manifest {digest} has no layers; the image is damaged.")
    _not_too_many(blobs, len(layers))
    out = []
    for d in layers:
        ld = descriptor_digest(d, blobs.shown)
        size = d.get("size")
        media = str(d.get("mediaType", ""))
        out.append(Layer(ld, blob_name(ld, blobs.shown), size if isinstance(size, int) else -1, media))
    return ImageManifest(digest, "manifest", chosen[1], tuple(out), offered)


def _docker_manifest(blobs: Blobs) -> ImageManifest:
    """A `docker save` tarball's image: its layers named by the config's diff_ids (what each layer's tar
    hashes to), in the order manifest.json lists them."""
    entries = blobs.json("manifest.json")
    if not isinstance(entries, list) or not entries or not isinstance(entries[0], dict):
        raise image_error(blobs.shown, "its manifest.json lists no image; the tarball is damaged.")
    if len(entries) > 1:
        tags = ", ".join(str(t) for e in entries if isinstance(e, dict) for t in e.get("RepoTags") or [])
        raise image_error(blobs.shown, f"the tarball holds {len(entries)} images ({tags[:400] or 'untagged'}); "
                          "save one image per tarball.")
    entry = entries[0]
    config = entry.get("Config")
    layers = entry.get("Layers")
    if not isinstance(config, str) or not isinstance(layers, list) or not all(isinstance(x, str) for x in layers):
        raise image_error(blobs.shown, "its manifest.json has no Config and Layers; the tarball is damaged.")
    _not_too_many(blobs, len(layers))
    stream, size = blobs.open(config)
    if size > JSON_CAP:
        raise image_error(blobs.shown, f"{config} is over the {JSON_CAP}-byte limit for image JSON.")
    data = stream.read(size)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    parsed = blobs.json(config)
    rootfs = parsed.get("rootfs") if isinstance(parsed, dict) else None
    diff_ids = rootfs.get("diff_ids") if isinstance(rootfs, dict) else None
    if not isinstance(diff_ids, list) or len(diff_ids) != len(layers) or not all(
            isinstance(d, str) for d in diff_ids):
        raise image_error(blobs.shown, f"its config {config} does not name a diff_id for each of its "
                          f"{len(layers)} layers; the tarball is damaged.")
    for d in diff_ids:
        blob_name(d, blobs.shown)  # (a sha256 digest, or refused)
    named = tuple(Layer(d, name, None, diff_id=d) for name, d in zip(layers, diff_ids, strict=True))
    return ImageManifest(digest, "config", None, named)


def _not_too_many(blobs: Blobs, count: int) -> None:
    if count > blobs.budget.layers:
        raise image_error(blobs.shown, f"its manifest lists {count} layers, more than the {blobs.budget.layers} "
                          "read; refused.")
