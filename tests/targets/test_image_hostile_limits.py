"""Hostile images that try to hang prstack or exhaust its memory or file handles: tar headers with
negative, overflowing or non-numeric sizes (in a layer and in the image's own tar), JSON nested past
any real file, too many layers, metadata bombs, a big blob listed again and again, too many entries.
Each run is a real `prstack audit` process: it ends within 30 s, under 1 GB, with one line and exit 2
(or a verdict, where the image is merely big), never a traceback or "internal error"."""

from __future__ import annotations

import gzip
import io
import json
import os
import resource
import sys
import tarfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.imagebuild import E, docker_archive, files_of, layer, oci_layout
from prstack.demo.example import DemoBuild
from prstack.targets.imageblobs import ImageBudget, ImageError
from prstack.targets.layers import Blobs, find_manifest, merge_layers

ENV = "opt/venv/lib/python3.12/site-packages"
LIMIT_S = 30
LIMIT_RSS = 1 << 30


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float
    peak_rss: int
    """Bytes (the child's own ru_maxrss)."""


def run_audit(demo: DemoBuild, image: Path, tmp_path: Path, *, open_files: int | None = None) -> Run:
    """`prstack audit` of `image` in its own process, killed past LIMIT_S; its peak memory measured."""
    out, err = tmp_path / "stdout", tmp_path / "stderr"

    def limits() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    started = time.monotonic()
    with out.open("wb") as o, err.open("wb") as e:
        import subprocess

        child = subprocess.Popen([sys.executable, "-m", "prstack", "audit", "40898", "--git", str(demo.repo.path),
                                  "--image", str(image), "--format", "json"], stdout=o, stderr=e,
                                 stdin=subprocess.DEVNULL, preexec_fn=limits)
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > LIMIT_S:
                child.kill()
                child.wait()
                pytest.fail(f"prstack ran past {LIMIT_S} s on {image.name}")
            time.sleep(0.05)
    child.returncode = os.waitstatus_to_exitcode(status)
    return Run(child.returncode, out.read_text(), err.read_text(), time.monotonic() - started, usage.ru_maxrss * 1024)


def refused(run: Run, *words: str) -> None:
    assert run.code == 2, (run.out, run.err)
    assert run.err.count("\n") == 1 and run.err.startswith("prstack: error: --image "), run.err
    assert "Traceback" not in run.err and "internal error" not in run.err
    assert run.peak_rss < LIMIT_RSS
    for word in words:
        assert word in run.err, run.err


def env_layer(demo: DemoBuild, compress: bool | str = True) -> bytes:
    return layer(files_of(demo.site_packages, ENV), compress=compress)


def raw_tar(members: Sequence[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def negative_pax_size() -> bytes:
    """A layer whose PAX header gives a member the size -1536: read naively, the reader goes back to
    the PAX header (1,536 bytes before the member's data) again and again."""
    info = tarfile.TarInfo("opt/x.py")
    info.pax_headers = {"size": "-1536"}
    after = tarfile.TarInfo("opt/y.py")
    after.size = 3
    return raw_tar([(info, b""), (after, b"abc")])


def with_header_field(at: int, value: bytes) -> bytes:
    """A one-member layer whose header field at `at` (the size: 124) holds `value`, checksum fixed."""
    info = tarfile.TarInfo("opt/x.py")
    info.size = 3
    data = bytearray(raw_tar([(info, b"abc")]))
    start = next(i for i in range(0, len(data), 512) if data[i + 156 : i + 157] == b"0")
    data[start + at : start + at + len(value)] = value
    data[start + 148 : start + 156] = b" " * 8
    data[start + 148 : start + 155] = f"{sum(data[start : start + 512]):06o}\0".encode()
    return bytes(data)


@pytest.mark.parametrize("form", ["docker-save", "oci-gzip", "oci-zstd"])
@pytest.mark.parametrize("hostile", ["pax-negative", "octal-negative", "base256-negative", "base256-overflow",
                                     "pax-not-a-number"])
@pytest.mark.slow
def test_a_layer_header_with_a_hostile_size(demo_build: DemoBuild, tmp_path: Path, form: str, hostile: str) -> None:
    bad = {"pax-negative": negative_pax_size,
           "octal-negative": lambda: with_header_field(124, b"-0001000\0\0\0\0"),  # (-512: its own header)
           "base256-negative": lambda: with_header_field(124, b"\xff" * 12),
           "base256-overflow": lambda: with_header_field(124, b"\x80" + b"\x7f" * 11),
           "pax-not-a-number": lambda: raw_tar([(_pax_sized("0x400"), b"")])}[hostile]()
    if form == "docker-save":
        docker_archive(tmp_path / "img.tar", [env_layer(demo_build, False), bad])
        image = tmp_path / "img.tar"
    else:
        packed = gzip.compress(bad) if form == "oci-gzip" else _zstd(bad)
        oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build), packed]})
        image = tmp_path / "img"
    refused(run_audit(demo_build, image, tmp_path), "not a readable tar")


def _pax_sized(size: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo("opt/x.py")
    info.pax_headers = {"size": size}
    return info


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


def test_the_images_own_tar_with_a_negative_size(demo_build: DemoBuild, tmp_path: Path) -> None:
    """The outer tar (a docker save tarball) with a member of PAX size -1536 before manifest.json:
    Python's tarfile loops on it with memory growing; prstack refuses it."""
    docker_archive(tmp_path / "good.tar", [env_layer(demo_build, False)])
    with tarfile.open(tmp_path / "good.tar") as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar]  # type: ignore[union-attr]
    hostile = tarfile.TarInfo("junk")
    hostile.pax_headers = {"size": "-1536"}
    (tmp_path / "img.tar").write_bytes(raw_tar([(hostile, b""), *members]))
    refused(run_audit(demo_build, tmp_path / "img.tar", tmp_path), "not a tar file")


def deep(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


@pytest.mark.parametrize("where", ["index.json", "manifest.json"])
@pytest.mark.slow
def test_image_json_nested_past_any_real_file(demo_build: DemoBuild, tmp_path: Path, where: str) -> None:
    if where == "index.json":
        oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build)]})
        (tmp_path / "img" / "index.json").write_bytes(b'{"manifests": ' + deep(100_000) + b"}")
        image = tmp_path / "img"
    else:
        members = [(_info("manifest.json", 200_000), deep(100_000))]
        (tmp_path / "img.tar").write_bytes(raw_tar(members))
        image = tmp_path / "img.tar"
    refused(run_audit(demo_build, image, tmp_path), "nests its JSON past")


def _info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    return info


@pytest.mark.slow
def test_a_direct_url_nested_past_any_real_file_says_nothing(demo_build: DemoBuild, tmp_path: Path) -> None:
    """A direct_url.json nested 100,000 deep is no provenance: the audit goes on (a verdict, no crash)."""
    entries = files_of(demo_build.site_packages, ENV)
    info = next(e.name for e in entries if e.name.endswith(".dist-info/METADATA")).rpartition("/")[0]
    entries.append(E("file", f"{info}/direct_url.json", deep(100_000)))
    oci_layout(tmp_path / "img", {"linux/amd64": [layer(entries, True)]})
    run = run_audit(demo_build, tmp_path / "img", tmp_path)
    assert run.code == 1, run.err
    assert "internal error" not in run.err and json.loads(run.out)["target"]["kind"] == "image"


@pytest.mark.slow
def test_too_many_layers(demo_build: DemoBuild, tmp_path: Path) -> None:
    tiny = [layer([E("file", f"opt/f{i}", b"x")], True) for i in range(5000)]
    oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build), *tiny]})
    refused(run_audit(demo_build, tmp_path / "img", tmp_path), "5001 layers")


@pytest.mark.slow
def test_more_layers_than_file_handles(demo_build: DemoBuild, tmp_path: Path) -> None:
    """Under `ulimit -n 64`, an image of 300 distinct layers: one line, not "Too many open files"."""
    tiny = [layer([E("file", f"opt/f{i}", b"x")], True) for i in range(300)]
    oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build), *tiny]})
    refused(run_audit(demo_build, tmp_path / "img", tmp_path, open_files=64), "too many files open")


def zeros_layer(files: Sequence[tuple[str, int]]) -> bytes:
    """A gzip layer of files of zeros, as a gzip of many members (a valid gzip stream): each header, and
    the zeros in members of 1 MiB compressed once, so that a gigabyte costs nothing to build."""
    mib = gzip.compress(bytes(1 << 20), compresslevel=1)
    out = []
    for name, size in files:
        out.append(gzip.compress(_info(name, size).tobuf(tarfile.USTAR_FORMAT)))
        out += [mib] * (size >> 20)
        out.append(gzip.compress(bytes((size & ((1 << 20) - 1)) + (-size % 512))))
    out.append(gzip.compress(bytes(1024)))
    return b"".join(out)


@pytest.mark.slow
def test_dist_info_files_past_the_metadata_budget(demo_build: DemoBuild, tmp_path: Path) -> None:
    """40 distributions whose RECORD is 16 MB of zeros each (640 MB inflated, 600 KB on disk): refused
    past the metadata budget, never held whole."""
    site = "usr/lib/python3/dist-packages"
    files = [(f"{site}/bomb{i}-1.0.dist-info/{name}", 16 << 20 if name == "RECORD" else 0)
             for i in range(40) for name in ("METADATA", "RECORD")]
    bomb = zeros_layer(files)
    oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build), bomb]})
    refused(run_audit(demo_build, tmp_path / "img", tmp_path), "metadata")


@pytest.mark.slow
def test_a_big_blob_listed_forty_times(demo_build: DemoBuild, tmp_path: Path) -> None:
    """A 1 GB (inflated) layer listed 40 times: read once, the audit ends with its verdict."""
    big = zeros_layer([("var/big.bin", 1 << 30)])
    oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build), *[big] * 40]})
    run = run_audit(demo_build, tmp_path / "img", tmp_path)
    assert run.code == 1, run.err
    assert run.peak_rss < LIMIT_RSS


@pytest.mark.slow
def test_entries_past_the_budget(tmp_path: Path) -> None:
    """Past the budget of entries (headers) or of inflated bytes, an image is refused as it streams."""
    many = layer([E("file", f"opt/{i}") for i in range(3000)], True)
    oci_layout(tmp_path / "img", {"linux/amd64": [many]})
    blobs = Blobs(tmp_path / "img", ImageBudget(entries=2000))
    with pytest.raises(ImageError, match="more than 2000 entries"):
        merge_layers(blobs, find_manifest(blobs, None))
    blobs.close()
    blobs = Blobs(tmp_path / "img", ImageBudget(inflated=100_000))
    with pytest.raises(ImageError, match="inflate past 100000 bytes"):
        merge_layers(blobs, find_manifest(blobs, None))
    blobs.close()
