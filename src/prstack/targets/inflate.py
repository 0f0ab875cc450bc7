"""A layer's bytes as a seekable stream of its tar: plain, gzip inflated with saved inflate states for
random reads, or zstd. The first pass over a compressed layer counts what it inflates against the
image's budget and, when asked, hashes it (a `docker save` layer is checked against its diff_id)."""

from __future__ import annotations

import bisect
import hashlib
import io
import zlib
from dataclasses import dataclass
from typing import IO, Any, cast

from prstack.targets.imageblobs import Blobs, Spent, Window, _Positioned, image_error
from prstack.targets.manifests import Layer

LAYER_CAP = 64 << 30
"""The largest layer read, compressed or not (bytes): a bigger one is refused, never inflated."""
CHECKPOINT_EVERY = 1 << 20
"""Uncompressed bytes between two saved inflate states of a compressed layer (random reads restart there)."""


class _FirstPass:
    """What a compressed layer's first pass produces, counted (and hashed, when asked) once: a re-read
    after a restart counts nothing."""

    def __init__(self, spent: Spent, hashed: bool) -> None:
        self._spent, self.seen = spent, 0
        self.sha256 = hashlib.sha256() if hashed else None

    def produced(self, at: int, data: bytes) -> None:
        if at != self.seen or not data:
            return
        self.seen += len(data)
        self._spent.inflate(len(data))
        if self.sha256 is not None:
            self.sha256.update(data)


class _Inflated(io.RawIOBase):
    """A gzip stream as a seekable file of its uncompressed bytes. Reading forward inflates; a seek
    back restarts from the nearest saved inflate state (one every CHECKPOINT_EVERY bytes)."""

    def __init__(self, raw: IO[bytes], shown: str, first: _FirstPass) -> None:
        self._raw, self._shown, self._first = raw, shown, first
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
                    raise image_error(self._shown, "a compressed layer is truncated (its gzip stream ends early).")
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
            raise image_error(self._shown, f"a compressed layer is damaged ({exc}).") from None
        self._pending = self._z.unconsumed_tail or self._z.unused_data
        self._first.produced(self._out, out)
        self._out += len(out)
        if self._out > LAYER_CAP:
            raise image_error(self._shown, f"a layer inflates past {LAYER_CAP} bytes; refused as too big.")
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
                raise image_error(self._shown, "a compressed layer cannot be re-read.")
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

    def __init__(self, raw: IO[bytes], shown: str, first: _FirstPass) -> None:
        self._raw, self._shown, self._first = raw, shown, first
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
            raise image_error(self._shown, f"a zstd-compressed layer is damaged ({exc}).") from None
        self._first.produced(self._pos, data)
        self._pos += len(data)
        if self._pos > LAYER_CAP:
            raise image_error(self._shown, f"a layer inflates past {LAYER_CAP} bytes; refused as too big.")
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


@dataclass
class LayerStream:
    """A layer opened: its tar as a seekable stream, and its blob's own bytes."""

    tar: IO[bytes]
    blob: Window
    first: _FirstPass | None = None
    """A compressed layer's first pass (None for a plain tar, which is its own blob)."""

    @property
    def compressed(self) -> bool:
        return self.first is not None

    def inflated_digest(self) -> str:
        """sha256:HEX of the layer's tar (after the first pass has read all of it)."""
        if self.first is None or self.first.sha256 is None:
            raise ValueError("the layer was not opened to hash its tar")
        return "sha256:" + self.first.sha256.hexdigest()


def open_layer(blobs: Blobs, layer: Layer, *, hash_tar: bool = False) -> LayerStream:
    """A layer's tar as a seekable stream (decompressed when gzip or zstd-compressed); with `hash_tar`
    a compressed layer's tar is hashed as its first pass goes."""
    blob, size = blobs.open(layer.name)
    raw = cast(IO[bytes], blob)
    if size > LAYER_CAP or (layer.size or 0) > LAYER_CAP:
        raise image_error(blobs.shown, f"the layer {layer.digest} is over {LAYER_CAP} bytes; refused as too big.")
    if layer.size is not None and layer.size >= 0 and layer.size != size:
        what = "truncated" if size < layer.size else "longer than its descriptor says"
        raise image_error(blobs.shown, f"the layer {layer.digest} is {size} bytes but its descriptor says "
                          f"{layer.size}: {what}; refused.")
    head = raw.read(4)
    raw.seek(0)
    if head[:2] == b"\x1f\x8b":
        first = _FirstPass(blobs.spent, hash_tar)
        return LayerStream(io.BufferedReader(_Inflated(raw, blobs.shown, first), 1 << 16), blob, first)
    if head == b"\x28\xb5\x2f\xfd":
        first = _FirstPass(blobs.spent, hash_tar)
        return LayerStream(io.BufferedReader(_Unzstd(raw, blobs.shown, first), 1 << 16), blob, first)
    blobs.spent.inflate(size)
    return LayerStream(raw, blob)
