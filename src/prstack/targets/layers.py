"""A container image's file system read from its layers, never unpacked: the layers applied in order into
one index of paths (headers only), as the OCI image spec's "Applying Changesets" and overlay2 apply them,
and a file's bytes read from the layer that last wrote it, on demand.

Path by path: an entry replaces whatever stood at its path in lower layers (a folder a layer makes, even
only by holding files in it, hides a lower layer's symlink or file there; a file or link hides a lower
folder and all below it); nothing is written through a lower layer's symlink; whiteouts (`.wh.NAME`)
and opaque folders (`.wh..wh..opq`) delete by path; a hard link has its target's content as of the link
entry. Each distinct blob is read once however often the manifest lists it, checked against its digest
as it streams (imageblobs.BlobHashes; a docker save layer's tar against its diff_id).

Everything is confined to the image: layer entries with `..` or absolute names and links leading out of
the image's root are refused, as are images over their budget (imageblobs.ImageBudget).
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from prstack.targets.confined import METADATA_CAP
from prstack.targets.imageblobs import Blobs, ImageBudget, ImageError, image_error
from prstack.targets.inflate import CHECKPOINT_EVERY, LAYER_CAP, LayerStream, open_layer
from prstack.targets.manifests import ImageManifest, Layer, find_manifest, host_platform
from prstack.targets.tarheaders import AHEAD, BLOCK, TarDamaged, headers

__all__ = ["CHECKPOINT_EVERY", "DIST_INFO_FILES", "LAYER_CAP", "Blobs", "Entry", "ImageBudget", "ImageError",
           "ImageManifest", "Layer", "LayerStream", "Merged", "OverCap", "find_manifest", "host_platform",
           "merge_layers", "open_layers", "read_file", "resolve"]

LINK_HOPS = 40
"""Symbolic links followed on one path before it is refused as a loop (Linux's own limit)."""

DIST_INFO_FILES = ("METADATA", "RECORD", "direct_url.json", "top_level.txt", "INSTALLER")
"""The files of a distribution's .dist-info an image target reads (kept as the merge passes them)."""
_DIST_INFO_FILE = re.compile(r"(?:^|/)(?:site|dist)-packages/[^/]+\.dist-info/(?:"
                             + "|".join(map(re.escape, DIST_INFO_FILES)) + ")$")


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
    """The image's file system as an index: path (no leading slash) -> entry, built from the headers.
    A folder that no layer names an entry for, but that holds entries, is there all the same."""

    entries: dict[str, Entry] = field(default_factory=dict)
    layers: tuple[Layer, ...] = ()
    streams: dict[int, IO[bytes]] = field(default_factory=dict)
    """Each distinct layer's stream as the merge left it (a compressed one keeps its saved inflate states),
    by the number of the first place the manifest lists it."""
    compressed: set[int] = field(default_factory=set)
    """The layers read through a decompressor (a file behind the stream's place costs a restart)."""
    held: dict[tuple[int, int], bytes] = field(default_factory=dict)
    """(layer, offset) -> bytes of the .dist-info files, read as the merge streamed past them: finding
    the environments and their distributions inflates no layer again (within the metadata budget)."""
    folders: set[str] = field(default_factory=set)
    """Every path some layer made a folder (a superset of those holding entries now)."""


@dataclass
class _Changes:
    """One layer's changeset, as its headers give it."""

    written: dict[str, Entry] = field(default_factory=dict)
    """Path -> entry, in the layer's order (a later entry at a path replaces an earlier one)."""
    folders: set[str] = field(default_factory=set)
    """Every path the layer makes a folder: its folder entries and the parents of all its entries."""
    whiteouts: list[str] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)


def _clean_name(name: str, shown: str, layer: Layer) -> str:
    if not name.startswith((".", "/")) and "/." not in name and "//" not in name and not name.endswith("/") \
            and "\0" not in name:
        return name  # (no empty, "." or ".." part: as it is)
    raw = name
    if name.startswith("/"):
        raise image_error(shown, f"the layer {layer.digest} holds the absolute path {raw[:200]!r}; refused as hostile.")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts or "\0" in name:
        raise image_error(shown, f"the layer {layer.digest} holds the path {raw[:200]!r}, which leaves the image; "
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


def _parents(path: str, into: set[str]) -> None:
    """Add every folder above `path` to `into` (stopping at one already there)."""
    parent = path.rpartition("/")[0]
    while parent and parent not in into:
        into.add(parent)
        parent = parent.rpartition("/")[0]


def open_layers(blobs: Blobs, manifest: ImageManifest) -> dict[int, LayerStream]:
    """Each distinct layer opened, by the number of the first place the manifest lists it; the blobs'
    checks against their digests started (imageblobs.BlobHashes), to run while the caller goes on."""
    if len(manifest.layers) > blobs.budget.layers:
        raise image_error(blobs.shown, f"its manifest lists {len(manifest.layers)} layers, more than the "
                          f"{blobs.budget.layers} read; refused.")
    first: set[str] = set()
    opened: dict[int, LayerStream] = {}
    for number, layer in enumerate(manifest.layers):
        if layer.name not in first:
            first.add(layer.name)
            opened[number] = open_layer(blobs, layer, hash_tar=layer.diff_id is not None)
            if not opened[number].compressed:
                blobs.hashes.add(layer.digest, opened[number].blob, layer.diff_id or layer.digest)
            elif layer.diff_id is None:
                blobs.hashes.add(layer.digest, opened[number].blob, layer.digest)
    blobs.hashes.start()
    return opened


def merge_layers(blobs: Blobs, manifest: ImageManifest, *, verified: bool = True,
                 opened: dict[int, LayerStream] | None = None) -> Merged:
    """Every layer's changeset applied in order; no file content is read but the .dist-info files.

    The layers are those `opened` (open_layers), else opened now. Each distinct blob is hashed apart
    meanwhile; with `verified`, the merge waits for it (else the caller does, by `blobs.verify()`, before
    it reports anything read from the image)."""
    if opened is None:
        opened = open_layers(blobs, manifest)
    merged = Merged(layers=manifest.layers)
    listed = Counter(layer.name for layer in manifest.layers)
    first = {manifest.layers[number].name: number for number in opened}
    again: dict[str, _Changes] = {}  # (a blob listed more than once: its changeset, read once)
    for layer in manifest.layers:
        at = first[layer.name]
        changes = again.get(layer.name)
        if changes is None:
            changes = _read_changes(blobs, merged, at, opened[at])
            if listed[layer.name] > 1:
                again[layer.name] = changes
            _check_tar_digest(blobs, layer, opened[at])
        _apply(merged, changes)
    if verified:
        blobs.verify()
    return merged


def _check_tar_digest(blobs: Blobs, layer: Layer, opened: LayerStream) -> None:
    """A compressed docker save layer: its tar (read whole by now) against the config's diff_id."""
    if layer.diff_id is not None and opened.compressed and opened.inflated_digest() != layer.diff_id:
        raise image_error(blobs.shown, f"the layer {layer.digest} does not match its diff_id: its content is not "
                          "what the image's config names; refused.")


def _read_changes(blobs: Blobs, merged: Merged, number: int, opened: LayerStream) -> _Changes:
    """A layer's changeset from its headers; its .dist-info files held as they stream by."""
    layer, stream, spent = merged.layers[number], opened.tar, blobs.spent
    changes = _Changes()
    written, folders = changes.written, changes.folders
    try:
        for member in headers(stream, BLOCK if opened.compressed else AHEAD):  # (seeking back in a plain tar is free)
            spent.entry()
            name = _clean_name(member.name, blobs.shown, layer)
            if not name:
                continue
            _parents(name, folders)
            folder, _, base = name.rpartition("/")
            if base == ".wh..wh..opq":
                changes.opaque.append(folder)
                continue
            if base.startswith(".wh."):
                changes.whiteouts.append(f"{folder}/{base[4:]}" if folder else base[4:])
                continue
            if member.kind == "file":
                written[name] = Entry(number, "file", member.offset, member.size)
                if member.size <= METADATA_CAP and ".dist-info/" in name and _DIST_INFO_FILE.search(name) \
                        and spent.held + member.size <= blobs.budget.metadata:
                    stream.seek(member.offset)
                    merged.held[(number, member.offset)] = stream.read(member.size)
                    spent.held += member.size
            elif member.kind == "symlink":
                if _link_leaves(name, member.link):
                    raise image_error(blobs.shown, f"the layer {layer.digest} links {name} to {member.link[:200]!r}, "
                                      "outside the image; refused as hostile.")
                written[name] = Entry(number, "symlink", link=member.link)
            elif member.kind == "hardlink":
                target = _clean_name(member.link, blobs.shown, layer)
                written[name] = _hard_link(blobs, merged, changes, layer, (name, target))
            else:
                written[name] = Entry(number, member.kind)
                if member.kind == "dir":
                    folders.add(name)
        end = stream.seek(0, 2)
    except TarDamaged as exc:
        raise image_error(blobs.shown, f"the layer {layer.digest} is {exc}; it is truncated or damaged.") from None
    except (EOFError, OSError) as exc:
        raise image_error(blobs.shown, f"the layer {layer.digest} is truncated ({exc}).") from None
    for name, entry in written.items():
        if entry.kind == "file" and entry.layer == number and entry.offset + entry.size > end:
            raise image_error(blobs.shown, f"the layer {layer.digest} is truncated inside {name}.")
    merged.streams[number] = stream
    if opened.compressed:
        merged.compressed.add(number)
    return changes


def _hard_link(blobs: Blobs, merged: Merged, changes: _Changes, layer: Layer, link: tuple[str, str]) -> Entry:
    """A hard link (its path, its target's) as the file it links to holds it now: what this layer wrote
    there so far, else the lower layers' file (as `tar -x` makes the link when it reads it)."""
    name, target = link
    source = changes.written.get(target) or merged.entries.get(target)
    if source is None or source.kind != "file":
        raise image_error(blobs.shown, f"the layer {layer.digest} hard-links {name} to {target[:200]!r}, which it "
                          "does not hold; refused.")
    return Entry(source.layer, "file", source.offset, source.size)


def _apply(merged: Merged, changes: _Changes) -> None:
    """A layer's changeset over the lower layers' index, as overlay2 shows the two: whiteouts and opaque
    folders delete by path; a folder of this layer hides a lower non-folder at its path; a non-folder of
    this layer hides whatever stood at its path, and below it."""
    entries = merged.entries
    below: set[str] = set()  # (paths everything below which the lower layers lose)
    for gone in changes.whiteouts:
        entries.pop(gone, None)
        below.add(gone)
    below.update(changes.opaque)
    for folder in changes.folders:
        old = entries.get(folder)
        if old is not None and old.kind != "dir":
            del entries[folder]
    below.update(name for name, entry in changes.written.items() if entry.kind != "dir")
    _remove_under(entries, {path for path in below if path == "" or path in merged.folders})
    for name, entry in changes.written.items():
        if entry.kind == "dir" or name not in changes.folders:  # (a path this layer also made a folder stays one)
            entries[name] = entry
    merged.folders |= changes.folders


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
                raise image_error(shown, f"{path} leads outside the image; refused.")
            done.pop()
            continue
        here = "/".join([*done, part])
        entry = merged.entries.get(here)
        if entry is None and not parts:
            return None
        if entry is not None and entry.kind == "symlink":  # (a folder a layer names no entry for is implied)
            hops += 1
            if hops > LINK_HOPS:
                raise image_error(shown, f"{path}: too many levels of links in the image.")
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
        stream = streams[entry.layer] = open_layer(blobs, merged.layers[entry.layer]).tar
    stream.seek(entry.offset)
    data = stream.read(entry.size)
    if len(data) != entry.size:
        raise image_error(blobs.shown, f"the layer {merged.layers[entry.layer].digest} is truncated inside {path}.")
    return data


class OverCap(Exception):
    """A file over the read cap (its size)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size
