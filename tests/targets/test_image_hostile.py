"""Hostile images: links leading out, `..` entries, huge and truncated layers, absolute whiteouts, blobs
linked out of the layout. Each is one line and exit 2, never a traceback, never a read outside the image."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path

import pytest

from helpers.imagebuild import E, docker_archive, files_of, layer, oci_layout
from prstack.cli import main
from prstack.demo.example import DemoBuild

ENV = "opt/venv/lib/python3.12/site-packages"
SECRET = b"secret outside the image\n"


def env_layer(demo: DemoBuild) -> bytes:
    return layer(files_of(demo.site_packages, ENV), compress=True)


def refused(demo: DemoBuild, image: Path, capsys: pytest.CaptureFixture[str], *words: str) -> str:
    code = main(["audit", "40898", "--git", str(demo.repo.path), "--image", str(image)])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("prstack: error: --image ") and "Traceback" not in err
    assert SECRET.decode().strip() not in out + err
    for word in words:
        assert word in err, err
    return err


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "runner.py").write_bytes(SECRET)
    return outside


def test_a_link_leading_out_of_the_image(demo_build: DemoBuild, tmp_path: Path, secret: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    climb = "../" * 12 + str(secret / "runner.py").lstrip("/")
    hostile = layer([E("symlink", f"{ENV}/kvserve/runner.py", link=climb)])
    oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build), hostile]})
    refused(demo_build, tmp_path / "img", capsys, "outside the image", "hostile")


def test_an_absolute_link_stays_inside_the_image(demo_build: DemoBuild, tmp_path: Path, secret: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A link to /x is the image's /x (as in a container), never the host's file: here the image
    has nothing there, so the file is missing."""
    hostile = layer([E("symlink", f"{ENV}/kvserve/runner.py", link=str(secret / "runner.py"))])
    oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build), hostile]})
    code = main(["audit", "40898", "--git", str(demo_build.repo.path), "--image", str(tmp_path / "img"),
                 "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert SECRET.decode().strip() not in out
    statuses = {h["status"] for h in json.loads(out)["hunks"] if h["path"] == "src/kvserve/runner.py"}
    assert statuses == {"file-missing"}


@pytest.mark.parametrize("name", ["../../escape.py", f"{ENV}/../../../../../../../escape.py", "/etc/passwd"])
def test_an_entry_leaving_the_image(demo_build: DemoBuild, tmp_path: Path, name: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    hostile = layer([E("file", name, SECRET)])
    oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build), hostile]})
    refused(demo_build, tmp_path / "img", capsys, "hostile")


def test_a_hard_link_leaving_the_image(demo_build: DemoBuild, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    hostile = layer([E("hardlink", f"{ENV}/kvserve/runner.py", link="../../../../etc/passwd")])
    docker_archive(tmp_path / "img.tar", [env_layer(demo_build), hostile])
    refused(demo_build, tmp_path / "img.tar", capsys, "hostile")


@pytest.mark.parametrize("name", ["/.wh.etc", "/opt/.wh..wh..opq", "../.wh.x"])
def test_an_absolute_or_climbing_whiteout(demo_build: DemoBuild, tmp_path: Path, name: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(tarfile.TarInfo(name))
    oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build), buffer.getvalue()]})
    refused(demo_build, tmp_path / "img", capsys, "hostile")


def test_a_huge_layer_is_refused_unread(demo_build: DemoBuild, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A layer whose descriptor declares a terabyte is refused before a byte of it is read."""
    oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build), layer([E("file", "x", b"x")])]},
               sizes={1: 1 << 40})
    refused(demo_build, tmp_path / "img", capsys, "too big")


def test_a_truncated_layer(demo_build: DemoBuild, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A layer blob cut short of its declared size."""
    built = oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build)]})
    blob = tmp_path / "img" / "blobs" / "sha256" / built.layers["linux/amd64"][0].removeprefix("sha256:")
    blob.write_bytes(blob.read_bytes()[: blob.stat().st_size // 2])
    refused(demo_build, tmp_path / "img", capsys, "truncated")


@pytest.mark.parametrize("compress", [True, False, "zstd"])
@pytest.mark.slow
def test_a_truncated_layer_in_a_docker_save_tarball(demo_build: DemoBuild, tmp_path: Path, compress: bool | str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """No size is declared there: the cut shows in the gzip stream or inside the tar (zstd stops short)."""
    whole = layer(files_of(demo_build.site_packages, ENV), compress=compress)
    content = len(whole.rstrip(b"\0"))  # (a tar's zero padding cut off is no loss)
    docker_archive(tmp_path / "img.tar", [whole[: content * 2 // 3]])
    refused(demo_build, tmp_path / "img.tar", capsys)


def test_a_blob_linked_out_of_the_layout(demo_build: DemoBuild, tmp_path: Path, secret: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    built = oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build)]})
    blob = tmp_path / "img" / "blobs" / "sha256" / built.layers["linux/amd64"][0].removeprefix("sha256:")
    fake = gzip.compress(SECRET)
    (secret / "blob").write_bytes(fake)
    blob.unlink()
    os.symlink(secret / "blob", blob)
    refused(demo_build, tmp_path / "img", capsys, "outside")


def test_a_manifest_that_does_not_match_its_digest(demo_build: DemoBuild, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    built = oci_layout(tmp_path / "img", {"linux/amd64": [env_layer(demo_build)]})
    path = tmp_path / "img" / "blobs" / "sha256" / built.manifests["linux/amd64"].removeprefix("sha256:")
    path.write_bytes(path.read_bytes().replace(b'"schemaVersion": 2', b'"schemaVersion": 3'))
    assert "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest() != built.manifests["linux/amd64"]
    refused(demo_build, tmp_path / "img", capsys, "does not match its digest")


@pytest.mark.parametrize("content", [b"", b"not a tar at all" * 100])
def test_not_an_image(demo_build: DemoBuild, tmp_path: Path, content: bytes,
                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x.tar").write_bytes(content)
    refused(demo_build, tmp_path / "x.tar", capsys)
