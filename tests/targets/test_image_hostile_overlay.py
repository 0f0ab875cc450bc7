"""Hostile images that would make a reader see another file system than the container: the layers are
applied as overlay2 applies them (a folder a layer makes hides a lower layer's symlink; whiteouts and
opaque folders delete by path; a hard link keeps its target's content as of the link), and every blob
is checked against its digest (a docker save layer's tar against its diff_id). A plain good image
passes (exit 0) and one with the fix dropped fails (exit 1), as controls."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from helpers.imagebuild import E, digest, docker_archive, files_of, layer, oci_layout
from prstack.cli import main
from prstack.demo.example import DemoBuild
from prstack.targets.layers import Blobs, find_manifest, merge_layers, read_file

ENV = "opt/venv/lib/python3.12/site-packages"
RUNNER = f"{ENV}/kvserve/runner.py"


def fixed_runner(demo: DemoBuild) -> bytes:
    """kvserve/runner.py with every hunk of the stack applied."""
    return subprocess.run(["git", "-C", str(demo.repo.path), "show", f"{demo.repo.heads[40898]}:src/kvserve/runner.py"],
                          capture_output=True, check=True).stdout


def unfixed_runner(demo: DemoBuild) -> bytes:
    """kvserve/runner.py as the fork's build ships it: a hunk of the stack missing."""
    return (demo.site_packages / "kvserve" / "runner.py").read_bytes()


def env_entries(demo: DemoBuild, runner: bytes) -> list[E]:
    return [e if e.name != RUNNER else E("file", e.name, runner) for e in files_of(demo.site_packages, ENV)]


def linked_env(demo: DemoBuild) -> list[E]:
    """The environment with its kvserve package at /opt/pkg (fixed) and a symlink to it where it belongs."""
    out = []
    for e in env_entries(demo, fixed_runner(demo)):
        if e.name == f"{ENV}/kvserve":
            out += [E("dir", "opt/pkg"), E("symlink", e.name, link="/opt/pkg")]
        elif e.name.startswith(f"{ENV}/kvserve/"):
            out.append(E(e.kind, "opt/pkg/" + e.name.removeprefix(f"{ENV}/kvserve/"), e.data, e.link))
        else:
            out.append(e)
    return out


def audit(demo: DemoBuild, image: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict | None, str]:
    code = main(["audit", "40898", "--git", str(demo.repo.path), "--image", str(image), "--format", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    return code, (json.loads(out) if code in (0, 1) else None), err


def runner_statuses(data: dict) -> set[str]:
    return {h["status"] for h in data["hunks"] if h["path"] == "src/kvserve/runner.py"}


def test_a_good_image_passes(demo_build: DemoBuild, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    oci_layout(tmp_path / "img", {"linux/amd64": [layer(env_entries(demo_build, fixed_runner(demo_build)), True)]})
    code, data, err = audit(demo_build, tmp_path / "img", capsys)
    assert code == 0, err
    assert data is not None and runner_statuses(data) == {"applied"}


def test_an_image_with_the_fix_dropped_fails(demo_build: DemoBuild, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    docker_archive(tmp_path / "img.tar", [layer(env_entries(demo_build, unfixed_runner(demo_build)))])
    code, data, err = audit(demo_build, tmp_path / "img.tar", capsys)
    assert code == 1, err
    assert data is not None and "missing" in runner_statuses(data)


def test_the_linked_package_alone_is_read_through_its_link(demo_build: DemoBuild, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Control for the cases below: a package folder that is a symlink within the image is followed."""
    oci_layout(tmp_path / "img", {"linux/amd64": [layer(linked_env(demo_build), True)]})
    code, data, err = audit(demo_build, tmp_path / "img", capsys)
    assert code == 0, err
    assert data is not None and runner_statuses(data) == {"applied"}


@pytest.mark.parametrize("upper", ["file", "whiteout", "opaque"])
@pytest.mark.slow
def test_a_later_layer_hides_a_symlinked_folder(demo_build: DemoBuild, tmp_path: Path, upper: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A later layer that writes kvserve/runner.py, whites it out or makes kvserve opaque, where a lower
    layer made kvserve a symlink to /opt/pkg (the fixed package): overlay2 shows a real folder holding
    only what the later layer put there, so the fixed runner.py is never read (no exit 0)."""
    top = {"file": [E("file", RUNNER, unfixed_runner(demo_build))],
           "whiteout": [E("whiteout", RUNNER)],
           "opaque": [E("opaque", f"{ENV}/kvserve")]}[upper]
    oci_layout(tmp_path / "img", {"linux/amd64": [layer(linked_env(demo_build), True), layer(top)]})
    code, data, err = audit(demo_build, tmp_path / "img", capsys)
    assert code == 1, err
    assert data is not None
    if upper == "file":
        assert "missing" in runner_statuses(data)
    else:
        assert runner_statuses(data) == {"file-missing"}
    blobs = Blobs(tmp_path / "img")
    merged = merge_layers(blobs, find_manifest(blobs, None))
    assert merged.entries.get(f"{ENV}/kvserve") is None or merged.entries[f"{ENV}/kvserve"].kind == "dir"
    assert read_file(blobs, merged, merged.streams, "opt/pkg/runner.py", 1 << 20) == fixed_runner(demo_build)
    blobs.close()


def test_a_later_symlink_hides_a_lower_folder(tmp_path: Path) -> None:
    """A link at a path where a lower layer had a folder replaces the folder and all below it."""
    lower = layer([E("dir", "a"), E("file", "a/x.py", b"lower\n"), E("dir", "b"), E("file", "b/x.py", b"b\n")])
    oci_layout(tmp_path / "img", {"linux/amd64": [lower, layer([E("symlink", "a", link="b")])]})
    blobs = Blobs(tmp_path / "img")
    merged = merge_layers(blobs, find_manifest(blobs, None))
    assert "a/x.py" not in merged.entries and merged.entries["a"].kind == "symlink"
    assert read_file(blobs, merged, merged.streams, "a/x.py", 100) == b"b\n"
    blobs.close()


def test_a_hard_link_keeps_its_targets_content_as_of_the_link(demo_build: DemoBuild, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """runner.py hard-linked to a staged file that the same layer rewrites afterwards: `tar -x` leaves
    runner.py with the staged content (the unfixed one), not the rewrite (the fixed one)."""
    env = [e for e in env_entries(demo_build, b"") if e.name != RUNNER]
    env += [E("dir", "tmp"), E("file", "tmp/runner.py", unfixed_runner(demo_build)),
            E("hardlink", RUNNER, link="tmp/runner.py"), E("file", "tmp/runner.py", fixed_runner(demo_build))]
    docker_archive(tmp_path / "img.tar", [layer(env)])
    code, data, err = audit(demo_build, tmp_path / "img.tar", capsys)
    assert code == 1, err
    assert data is not None and "missing" in runner_statuses(data)


def test_a_swapped_layer_blob_is_refused(demo_build: DemoBuild, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A layer blob replaced by other content of the same size (here: the build's runner.py where the
    fixed one was, same length) is refused naming the layer, never audited."""
    fixed, unfixed = fixed_runner(demo_build), unfixed_runner(demo_build)
    padded = unfixed + b"#" * (len(fixed) - len(unfixed)) if len(fixed) >= len(unfixed) else unfixed[: len(fixed)]
    good = layer(env_entries(demo_build, fixed))
    built = oci_layout(tmp_path / "img", {"linux/amd64": [good]})
    swapped = layer(env_entries(demo_build, padded))
    assert len(swapped) == len(good) and swapped != good
    name = built.layers["linux/amd64"][0]
    (tmp_path / "img" / "blobs" / "sha256" / name.removeprefix("sha256:")).write_bytes(swapped)
    code, data, err = audit(demo_build, tmp_path / "img", capsys)
    assert code == 2 and data is None
    assert err.count("\n") == 1 and name in err and "does not match its digest" in err


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.slow
def test_a_docker_save_layer_that_is_not_its_diff_id_is_refused(demo_build: DemoBuild, tmp_path: Path,
                                                                compress: bool,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    good = layer(env_entries(demo_build, fixed_runner(demo_build)), compress)
    docker_archive(tmp_path / "img.tar", [good])
    other = layer(env_entries(demo_build, unfixed_runner(demo_build)), compress)
    forged = tmp_path / "forged.tar"
    _replace_member(tmp_path / "img.tar", forged, f"{digest(good).removeprefix('sha256:')}/layer.tar", other)
    code, data, err = audit(demo_build, forged, capsys)
    assert code == 2 and data is None
    assert err.count("\n") == 1 and "does not match" in err
    diff_id = digest(good if not compress else _gunzip(good))
    assert diff_id in err


def _gunzip(data: bytes) -> bytes:
    import gzip

    return gzip.decompress(data)


def _replace_member(src: Path, dest: Path, name: str, data: bytes) -> None:
    import io
    import tarfile

    with tarfile.open(src) as old, tarfile.open(dest, "w") as new:
        for member in old:
            body = data if member.name == name else old.extractfile(member).read()  # type: ignore[union-attr]
            member.size = len(body)
            new.addfile(member, io.BytesIO(body))


def test_a_blob_listed_many_times_is_read_once(demo_build: DemoBuild, tmp_path: Path) -> None:
    """The same layer listed again and again is merged as often as listed, its blob read once."""
    env = layer(env_entries(demo_build, fixed_runner(demo_build)), True)
    top = layer([E("file", "etc/motd", b"hello\n")], True)
    oci_layout(tmp_path / "img", {"linux/amd64": [env, top] * 20})
    blobs = Blobs(tmp_path / "img")
    manifest = find_manifest(blobs, None)
    merged = merge_layers(blobs, manifest)
    assert len(manifest.layers) == 40 and len(merged.streams) == 2
    assert blobs.bytes_read[0] < 3 * (len(env) + len(top)) + 100_000
    assert merged.entries[RUNNER].layer == 0 and merged.entries["etc/motd"].layer == 1
    blobs.close()
