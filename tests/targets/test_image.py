"""Container images as targets: docker save tarballs and OCI image layouts (folder and tar) built here
with the standard library, read layer by layer with whiteouts and opaque folders, never unpacked;
the verdicts are those of the site-packages the image holds; the report names the manifest, the
platform, the environment and the layer behind each file read."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from helpers.imagebuild import E, docker_archive, files_of, layer, oci_layout
from prstack.cli import main
from prstack.demo.example import DemoBuild
from prstack.targets.layers import CHECKPOINT_EVERY, Blobs, find_manifest, host_platform, merge_layers, read_file

ENV = "opt/venv/lib/python3.12/site-packages"
SYSTEM = "usr/lib/python3/dist-packages"


def audit_json(demo: DemoBuild, *target: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main(["audit", "40898", "--git", str(demo.repo.path), *target, "--format", "json"])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    return code, json.loads(captured.out)


def verdicts(data: dict) -> list[tuple[int, str, int, str]]:
    return [(h["pr"], h["path"], h["old_start"], h["status"]) for h in data["hunks"]]


def fixed_runner(demo: DemoBuild) -> bytes:
    """kvserve/runner.py as #40898's head has it: every hunk of the stack applied."""
    return subprocess.run(["git", "-C", str(demo.repo.path), "show", f"{demo.repo.heads[40898]}:src/kvserve/runner.py"],
                          capture_output=True, check=True).stdout


def base_layer() -> bytes:
    """A distribution's interpreter: a standard library, no project."""
    return layer([E("dir", "usr"), E("dir", "usr/lib"), E("dir", "usr/lib/python3.12"),
                  E("file", "usr/lib/python3.12/os.py", b"import sys\n"), E("dir", "etc"),
                  E("file", "etc/motd", b"hello\n"), E("dir", "var/cache/apt"),
                  E("file", "var/cache/apt/pkgcache.bin", b"\0" * 4096)], compress=True)


def layers_of(demo: DemoBuild) -> list[bytes]:
    """Base; the venv with the fixed runner.py; a last layer that writes the build's runner.py back
    (a file a later layer rewrites), whites out /etc/motd and empties /var/cache/apt (opaque)."""
    site = demo.site_packages
    env = [e if e.name != f"{ENV}/kvserve/runner.py" else E("file", e.name, fixed_runner(demo))
           for e in files_of(site, ENV)]
    last = [E("file", f"{ENV}/kvserve/runner.py", (site / "kvserve" / "runner.py").read_bytes()),
            E("whiteout", "etc/motd"), E("opaque", "var/cache/apt"), E("file", "var/cache/apt/new", b"n\n")]
    return [base_layer(), layer(env, compress=True), layer(last)]


@pytest.fixture(scope="module")
def site_verdicts(demo_build: DemoBuild, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[int, str, int, str]]:
    out = tmp_path_factory.mktemp("site") / "site.json"
    code = main(["audit", "40898", "--git", str(demo_build.repo.path), "--site-packages",
                 str(demo_build.site_packages), "--format", "json", "--output", str(out)])
    assert code == 1
    return verdicts(json.loads(out.read_text()))


@pytest.mark.parametrize("form", ["oci-dir", "oci-tar", "docker-save"])
@pytest.mark.slow
def test_an_image_gives_the_verdicts_of_its_site_packages(
        demo_build: DemoBuild, tmp_path: Path, form: str, site_verdicts: list,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Whatever the form, the image's verdicts are the unpacked site-packages': runner.py is read
    from the last layer that wrote it (the build's, missing a hunk), not from the venv's layer."""
    layers = layers_of(demo_build)
    if form == "docker-save":
        image_id = docker_archive(tmp_path / "image.tar", layers)
        path = tmp_path / "image.tar"
    else:
        path = tmp_path / ("image.tar" if form == "oci-tar" else "layout")
        built = oci_layout(path, {"linux/amd64": layers}, as_tar=form == "oci-tar")
    code, data = audit_json(demo_build, "--image", str(path), capsys=capsys)
    assert code == 1
    assert verdicts(data) == site_verdicts
    assert ("missing" in {s for *_, s in site_verdicts})
    image = data["target"]["image"]
    assert data["target"]["kind"] == "image" and data["target"]["distribution"] == "kvserve"
    assert image["environment"] == "/" + ENV and image["environments"] == ["/" + ENV]
    if form == "docker-save":
        assert image["digest"] == image_id and image["digest_kind"] == "config"
        layer_digests = image["layers"]
    else:
        assert image["digest"] == built.manifests["linux/amd64"] and image["digest_kind"] == "manifest"
        assert image["platform"] == "linux/amd64"
        layer_digests = built.layers["linux/amd64"]
        assert image["layers"] == layer_digests
    assert image["files"]["kvserve/runner.py"] == layer_digests[2]
    assert image["files"]["kvserve/model.py"] == layer_digests[1]


def test_whiteouts_and_opaque_folders_hide_lower_layers(tmp_path: Path) -> None:
    """A whiteout removes a file or a whole folder of the layers below; an opaque folder hides all
    they held in it but keeps what its own layer writes; a file replacing a folder drops its contents;
    a hard link reads its target's bytes."""
    lower = layer([E("file", "a/keep.py", b"keep\n"), E("file", "a/gone.py", b"gone\n"), E("dir", "b"),
                   E("file", "b/x.py", b"x\n"), E("file", "b/sub/y.py", b"y\n"), E("file", "c/z.py", b"z\n"),
                   E("dir", "d"), E("file", "d/in.py", b"in\n"), E("file", "e/old.py", b"old\n")], compress=True)
    upper = layer([E("whiteout", "a/gone.py"), E("opaque", "b"), E("file", "b/new.py", b"new\n"),
                   E("whiteout", "c"), E("file", "d", b"now a file\n"), E("file", "e/old.py", b"rewritten\n"),
                   E("hardlink", "e/link.py", link="e/old.py")])
    oci_layout(tmp_path / "img", {None: [lower, upper]})
    blobs = Blobs(tmp_path / "img")
    merged = merge_layers(blobs, find_manifest(blobs, None))
    files = {p for p, e in merged.entries.items() if e.kind == "file"}
    assert files == {"a/keep.py", "b/new.py", "d", "e/old.py", "e/link.py"}
    streams: dict = {}
    assert read_file(blobs, merged, streams, "e/old.py", 1 << 20) == b"rewritten\n"
    assert read_file(blobs, merged, streams, "e/link.py", 1 << 20) == b"rewritten\n"
    assert read_file(blobs, merged, streams, "a/keep.py", 1 << 20) == b"keep\n"
    assert read_file(blobs, merged, streams, "a/gone.py", 1 << 20) is None
    assert merged.entries["e/old.py"].layer == 1 and merged.entries["a/keep.py"].layer == 0


@pytest.mark.slow
def test_a_compressed_layer_reads_back_in_any_order(tmp_path: Path) -> None:
    """Files of a gzip layer several MB long, read last first: each comes back whole (the reader
    restarts from a saved inflate state rather than from the start each time)."""
    import random

    rng = random.Random(7)
    contents = {f"pkg/m{i:03}.py": bytes(rng.getrandbits(8) for _ in range(40_000)) for i in range(120)}
    oci_layout(tmp_path / "img", {None: [layer([E("file", n, d) for n, d in contents.items()], compress=True)]})
    blobs = Blobs(tmp_path / "img")
    merged = merge_layers(blobs, find_manifest(blobs, None))
    streams: dict = {}
    for name in sorted(contents, reverse=True)[::7] + sorted(contents)[::11]:
        assert read_file(blobs, merged, streams, name, 1 << 20) == contents[name], name


@pytest.mark.parametrize("compress", ["gzip", "zstd"])
def test_a_compressed_layer_of_many_distributions_is_inflated_once(tmp_path: Path, compress: str) -> None:
    """The merge keeps every distribution's metadata as the layer streams by, wherever the reads fall
    against the stream's buffer: never a seek back that inflates the layer again from further up."""
    import random

    rng = random.Random(5)
    entries = []
    for i in range(400):
        folder = f"{ENV}/dist{i}-1.0.dist-info"
        entries += [E("file", f"{folder}/METADATA", b"Name: d\n" + rng.randbytes(rng.randrange(100, 3000))),
                    E("file", f"{ENV}/dist{i}/data.bin", rng.randbytes(rng.randrange(0, 2000)))]
    built = oci_layout(tmp_path / "img", {None: [layer(entries, compress=compress)]})
    blob = tmp_path / "img" / "blobs" / "sha256" / built.layers[None][0].removeprefix("sha256:")
    blobs = Blobs(tmp_path / "img")
    merged = merge_layers(blobs, find_manifest(blobs, None))
    assert len(merged.held) == 400
    assert blobs.bytes_read[0] < blob.stat().st_size + (1 << 16)
    blobs.close()


@pytest.mark.parametrize("compress", ["gzip", "zstd"])
@pytest.mark.slow
def test_a_compressed_layer_is_streamed_once(demo_build: DemoBuild, tmp_path: Path, compress: str) -> None:
    """A compressed layer is streamed once to index it, its distributions' metadata kept on the way
    (the environment is found and chosen without reading the layer again); a file of a gzip layer read
    afterwards starts from the inflate state saved nearest it, not from the layer's first byte."""
    import random

    from prstack.targets.base import TargetSpec
    from prstack.targets.image import open_image

    rng = random.Random(3)
    big = [E("file", f"usr/share/blob{i}.bin", rng.randbytes(1 << 20)) for i in range(6)]
    built = oci_layout(tmp_path / "img", {None: [layer(big + files_of(demo_build.site_packages, ENV),
                                                       compress=compress)]})
    blob = tmp_path / "img" / "blobs" / "sha256" / built.layers[None][0].removeprefix("sha256:")
    target = open_image(TargetSpec("image", str(tmp_path / "img")), ["src/kvserve/runner.py"],
                        ["src/kvserve/runner.py", "src/kvserve/model.py"])
    assert blob.stat().st_size <= target.bytes_read < blob.stat().st_size + (1 << 16)
    if compress == "zstd":  # (no state to start again from: the distribution's files are read in one pass)
        names = sorted(p.relative_to(demo_build.site_packages).as_posix()
                       for p in (demo_build.site_packages / "kvserve").rglob("*.py"))
        for name in reversed(names):
            assert target.read(name) == (demo_build.site_packages / name).read_bytes()
        assert len(names) > 3 and target.bytes_read < 2 * blob.stat().st_size + (1 << 16)
        return
    assert target.read("kvserve/runner.py") == (demo_build.site_packages / "kvserve" / "runner.py").read_bytes()
    assert target.read("kvserve/__init__.py") is not None
    restarts = 3  # (the metadata, then each file behind where the stream stands: a spacing and a read each)
    assert blob.stat().st_size < target.bytes_read < blob.stat().st_size + restarts * (CHECKPOINT_EVERY + (1 << 16))


def test_a_zstd_layer_reads_back_in_any_order(tmp_path: Path) -> None:
    """A zstd layer (several frames) is read like a gzip one: every file whole, last first too."""
    import random

    rng = random.Random(11)
    contents = {f"pkg/m{i:03}.py": bytes(rng.getrandbits(8) for _ in range(30_000)) for i in range(40)}
    built = oci_layout(tmp_path / "img", {None: [layer([E("file", n, d) for n, d in contents.items()],
                                                       compress="zstd")]})
    index = json.loads((tmp_path / "img" / "index.json").read_text())
    manifest = (tmp_path / "img" / "blobs" / "sha256" / index["manifests"][0]["digest"].removeprefix("sha256:"))
    assert json.loads(manifest.read_text())["layers"][0]["mediaType"].endswith("tar+zstd"), built
    blobs = Blobs(tmp_path / "img")
    merged = merge_layers(blobs, find_manifest(blobs, None))
    streams: dict = {}
    for name in sorted(contents, reverse=True)[::3] + sorted(contents)[::5]:
        assert read_file(blobs, merged, streams, name, 1 << 20) == contents[name], name


def test_an_image_of_zstd_layers_gives_the_verdicts_of_its_site_packages(
        demo_build: DemoBuild, tmp_path: Path, site_verdicts: list, capsys: pytest.CaptureFixture[str]) -> None:
    """The venv's layer and the last one zstd-compressed (as buildx's compression=zstd writes them)."""
    site = demo_build.site_packages
    env = [e if e.name != f"{ENV}/kvserve/runner.py" else E("file", e.name, fixed_runner(demo_build))
           for e in files_of(site, ENV)]
    last = [E("file", f"{ENV}/kvserve/runner.py", (site / "kvserve" / "runner.py").read_bytes())]
    oci_layout(tmp_path / "layout", {"linux/amd64": [base_layer(), layer(env, compress="zstd"),
                                                     layer(last, compress="zstd")]})
    code, data = audit_json(demo_build, "--image", str(tmp_path / "layout"), capsys=capsys)
    assert code == 1 and verdicts(data) == site_verdicts


def test_a_multi_platform_index_is_read_for_the_host_or_for_platform(demo_build: DemoBuild, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Without --platform the host's manifest is read and the answer names it; --platform reads
    another; a platform the index lacks is one line naming those it has, exit 2."""
    other = "linux/arm64" if host_platform() != "linux/arm64" else "linux/amd64"
    runner = E("file", f"{ENV}/kvserve/runner.py", fixed_runner(demo_build))
    good = [base_layer(), layer([e if e.name != runner.name else runner
                                 for e in files_of(demo_build.site_packages, ENV)], compress=True)]
    built = oci_layout(tmp_path / "multi", {host_platform(): layers_of(demo_build), other: good})
    code, data = audit_json(demo_build, "--image", str(tmp_path / "multi"), capsys=capsys)
    assert code == 1 and data["target"]["image"]["platform"] == host_platform()
    assert data["target"]["image"]["digest"] == built.manifests[host_platform()]
    assert sorted(data["target"]["image"]["platforms"]) == sorted([host_platform(), other])
    code, data = audit_json(demo_build, "--image", str(tmp_path / "multi"), "--platform", other, capsys=capsys)
    assert code == 0 and data["target"]["image"]["platform"] == other
    assert {h["status"] for h in data["hunks"]} <= {"applied", "not-shipped"}
    code = main(["audit", "40898", "--git", str(demo_build.repo.path), "--image", str(tmp_path / "multi"),
                 "--platform", "linux/riscv64"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "linux/riscv64" in err and other in err


def test_several_environments_holding_the_project_are_named_and_python_path_picks(
        demo_build: DemoBuild, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixed = [e if e.name != f"{SYSTEM}/kvserve/runner.py" else E("file", e.name, fixed_runner(demo_build))
             for e in files_of(demo_build.site_packages, SYSTEM)]
    image = [base_layer(), layer(fixed, compress=True), layer(files_of(demo_build.site_packages, ENV))]
    docker_archive(tmp_path / "two.tar", image)
    code = main(["audit", "40898", "--git", str(demo_build.repo.path), "--image", str(tmp_path / "two.tar")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"/{ENV}" in err and f"/{SYSTEM}" in err and "--python-path" in err
    code, data = audit_json(demo_build, "--image", str(tmp_path / "two.tar"), "--python-path", f"/{SYSTEM}",
                            capsys=capsys)
    assert code == 0 and data["target"]["image"]["environment"] == f"/{SYSTEM}"
    code, data = audit_json(demo_build, "--image", str(tmp_path / "two.tar"), "--python-path", f"/{ENV}/",
                            capsys=capsys)
    assert code == 1 and data["target"]["image"]["environment"] == f"/{ENV}"


def test_only_what_the_audit_needs_is_read(demo_build: DemoBuild, tmp_path: Path) -> None:
    """Of an uncompressed docker save tarball with a big unrelated layer, the audit reads the
    headers and the few files it judges: a small part of the bytes."""
    from prstack.audit import audit_stack
    from prstack.sources.git.repo import GitClone
    from prstack.targets.base import TargetSpec

    big = layer([E("file", f"usr/share/blob{i}.bin", bytes([i]) * (1 << 20)) for i in range(8)])
    docker_archive(tmp_path / "img.tar", [big, *layers_of(demo_build)[1:]])
    from prstack.targets.image import ImageTarget, open_image

    target = open_image(TargetSpec("image", str(tmp_path / "img.tar")), ["src/kvserve/runner.py"],
                        ["src/kvserve/runner.py", "src/kvserve/model.py"])
    assert isinstance(target, ImageTarget)
    assert target.read("kvserve/runner.py") == (demo_build.site_packages / "kvserve" / "runner.py").read_bytes()
    size = (tmp_path / "img.tar").stat().st_size
    assert target.bytes_read < size / 8, (target.bytes_read, size)
    report = audit_stack(GitClone(demo_build.repo.path), [40898], TargetSpec("image", str(tmp_path / "img.tar")))
    assert report.target.image is not None and not report.all_present
