"""An image's blobs are checked against their digests apart from the audit: in a process of their own
(a thread where no process can be started), begun before the PRs load. Whatever way they are hashed,
a blob is reported only as checked, unreadable or not matching; a hasher that dies or is left behind
is never taken for a check."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import tarfile
from io import FileIO
from pathlib import Path

import pytest

from prstack.cli import main
from prstack.demo.example import DemoBuild
from prstack.targets.imageblobs import BlobHashes, ImageError, Window


def children() -> list[int]:
    """The processes this one started that are not reaped yet (running or finished), gits aside: a
    git an earlier test's reader left to finish on its own is not a hasher."""
    mine = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            name, _, fields = stat.partition("(")[2].rpartition(")")
            if int(fields.split()[1]) == os.getpid() and not name.startswith("git"):
                mine.append(int(entry))
    return mine


def hashes_of(blob: Path, window: int, expected: bytes) -> tuple[BlobHashes, FileIO]:
    """A check of the first `window` bytes of `blob` against the sha256 of `expected`, started."""
    raw = blob.open("rb", buffering=0)
    hashes = BlobHashes("img")
    hashes.add("sha256:" + "a" * 64, Window(raw, 0, window, [0]), "sha256:" + hashlib.sha256(expected).hexdigest())
    hashes.start()
    return hashes, raw


@pytest.mark.parametrize("apart", ["process", "thread"])
def test_a_blob_is_checked_in_a_process_or_a_thread(tmp_path: Path, apart: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A blob whose bytes hash to its digest passes and one whose bytes do not is refused naming its
    layer, hashed in a child process, or on a thread where no interpreter can be started."""
    if apart == "thread":
        monkeypatch.setattr(sys, "executable", "")
    blob = tmp_path / "blob"
    blob.write_bytes(os.urandom(3 << 20))
    before = set(children())
    good, raw = hashes_of(blob, 3 << 20, blob.read_bytes())
    assert (set(children()) - before != set()) == (apart == "process")
    good.check()
    good.stop()
    bad, raw2 = hashes_of(blob, 3 << 20, blob.read_bytes()[:-1] + b"!")
    with pytest.raises(ImageError, match=f"the layer sha256:{'a' * 64} does not match its digest"):
        bad.check()
    bad.stop()
    assert not set(children()) - before
    raw.close()
    raw2.close()


def test_a_blob_its_file_is_too_short_for_is_unreadable(tmp_path: Path) -> None:
    """A blob's window past the end of its file (the file cut short after the image was opened) is
    refused as unreadable, naming the layer; never as checked."""
    blob = tmp_path / "blob"
    blob.write_bytes(b"x" * 4096)
    hashes, raw = hashes_of(blob, 8192, b"x" * 8192)
    with pytest.raises(ImageError, match=r"sha256:a{64} cannot be read \(the file ends inside it\)"):
        hashes.check()
    hashes.stop()
    raw.close()


def test_a_hasher_that_dies_is_no_check(tmp_path: Path) -> None:
    """The hashing process killed before it answers: the image is refused as not all checked."""
    blob = tmp_path / "blob"
    with blob.open("wb") as f:
        f.truncate(1 << 30)  # (sparse: hashing it takes a while, writing it does not)
    before = set(children())
    hashes, raw = hashes_of(blob, 1 << 30, b"")
    (hasher,) = set(children()) - before
    os.kill(hasher, signal.SIGKILL)
    with pytest.raises(ImageError, match="its layers were not all checked against their digests"):
        hashes.check()
    hashes.stop()
    raw.close()


def sparse_image(dest: Path, size: int) -> None:
    """A docker save tarball whose one layer is `size` bytes of zeros (an empty tar, its diff_id not
    what they hash to), written sparse: hashing it takes a while, writing it does not."""
    def member(name: str, data: bytes = b"", length: int | None = None) -> bytes:
        info = tarfile.TarInfo(name)
        info.size = len(data) if length is None else length
        return info.tobuf(tarfile.GNU_FORMAT) + data + bytes(-len(data) % 512)

    layer_name = "0" * 64 + "/layer.tar"
    config = json.dumps({"rootfs": {"type": "layers", "diff_ids": ["sha256:" + "0" * 64]}}).encode()
    manifest = json.dumps([{"Config": "config.json", "Layers": [layer_name]}]).encode()
    head = member("config.json", config) + member("manifest.json", manifest) + member(layer_name, length=size)
    with dest.open("wb") as f:
        f.write(head)
        f.truncate(len(head) + size + 1024)  # (the layer, then the end-of-archive blocks: zeros)


def test_an_audit_that_fails_on_its_prs_leaves_no_hasher_behind(demo_build: DemoBuild, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The image's blobs start being checked before the PRs load; a PR that is not in the clone ends
    the audit (one line, exit 2) and the hashing with it."""
    sparse_image(tmp_path / "img.tar", 2 << 30)
    before = set(children())
    code = main(["audit", "99999", "--git", str(demo_build.repo.path), "--image", str(tmp_path / "img.tar")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "PR #99999 is not in the clone" in err
    assert not set(children()) - before
