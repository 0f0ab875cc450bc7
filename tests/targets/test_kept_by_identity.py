"""Files kept by their identity (device, inode, size, modification and change times): a file's SHA-256,
a distribution's metadata text. The same file hard-linked into another site directory is not read
again; a file whose bytes changed, in place or replaced, is read anew, and each site's RECORD check
and distribution say what that site holds."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest

from helpers.targets import install_into, make_project, make_wheel
from prstack.targets.base import TargetSpec, open_target
from prstack.targets.confined import sha256_confined
from prstack.targets.installed import InstalledDistribution
from prstack.targets.kept import RACY_NS, KeptByIdentity

OLD = time.time_ns() - 10 * RACY_NS


def _bytes_read() -> int:
    return int(dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())["rchar"])


def _aged(path: Path) -> None:
    os.utime(path, ns=(OLD, OLD))


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts the bytes read through /proc")
def test_a_file_hashed_before_is_not_read_again_through_another_link(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    data = os.urandom(4 << 20)
    (tmp_path / "a/big.bin").write_bytes(data)
    _aged(tmp_path / "a/big.bin")
    os.link(tmp_path / "a/big.bin", tmp_path / "b/big.bin")
    assert sha256_confined(str(tmp_path / "a"), "big.bin") == hashlib.sha256(data).digest()
    before = _bytes_read()
    assert sha256_confined(str(tmp_path / "b"), "big.bin") == hashlib.sha256(data).digest()
    assert _bytes_read() - before < len(data)


def test_a_file_rewritten_in_place_with_its_times_put_back_is_hashed_anew(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")
    _aged(path)
    assert sha256_confined(str(tmp_path), "m.py") == hashlib.sha256(b"x = 1\n").digest()
    with path.open("r+b") as f:  # the same inode, the same size
        f.write(b"x = 2\n")
    _aged(path)  # (the change time still moves)
    assert sha256_confined(str(tmp_path), "m.py") == hashlib.sha256(b"x = 2\n").digest()


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts the bytes read through /proc")
def test_a_file_just_written_is_read_again(tmp_path: Path) -> None:
    """Its times could stay as they are through a second write within the clock's tick."""
    data = os.urandom(4 << 20)
    (tmp_path / "big.bin").write_bytes(data)
    assert sha256_confined(str(tmp_path), "big.bin") == hashlib.sha256(data).digest()
    before = _bytes_read()
    assert sha256_confined(str(tmp_path), "big.bin") == hashlib.sha256(data).digest()
    assert _bytes_read() - before >= len(data)


def _site_copy(site: Path, copy: Path) -> None:
    shutil.copytree(site, copy, copy_function=os.link)


def test_sites_hard_linked_but_for_one_file_each_get_their_own_record_check(tmp_path: Path) -> None:
    """Two site directories sharing every file by hard link, but one replaced in the second: the
    first's RECORD check is clean after the second's, and the second's names that file edited."""
    _two_sites(tmp_path)
    edited = tmp_path / "copy/kvs/model.py"
    text = edited.read_bytes()
    edited.unlink()
    edited.write_bytes(text.replace(b"def ", b"def  ", 1))
    _aged(edited)
    paths = ["src/kvs/model.py"]
    targets = [open_target(TargetSpec("site-packages", str(tmp_path / name)), paths, paths) for name in
               ("site", "copy", "site")]
    assert all(isinstance(t, InstalledDistribution) for t in targets)
    first, copy, again = (t.evidence.record for t in targets)
    assert first is not None and copy is not None and again is not None
    assert first.clean and again.clean and first.checked == again.checked > 1
    assert copy.edited == ("kvs/model.py",)
    assert [t.sha256("kvs/model.py") for t in targets] == [
        hashlib.sha256(text).digest(), hashlib.sha256(text.replace(b"def ", b"def  ", 1)).digest(),
        hashlib.sha256(text).digest()]


def _two_sites(tmp_path: Path) -> tuple[Path, Path]:
    project = make_project(tmp_path / "project")
    site = tmp_path / "site"
    install_into(make_wheel(tmp_path / "dist", "kvs", "1.0.0", project.files_at(project.head)), site)
    for path in site.rglob("*"):
        if path.is_file():
            _aged(path)
    _site_copy(site, tmp_path / "copy")
    return site, tmp_path / "copy"


def _opened(site: Path) -> InstalledDistribution:
    target = open_target(TargetSpec("site-packages", str(site)), ["src/kvs/model.py"], ["src/kvs/model.py"])
    assert isinstance(target, InstalledDistribution)
    return target


def test_a_site_whose_record_differs_gets_its_own_files_and_metadata(tmp_path: Path) -> None:
    """Metadata read from one site directory is not taken for another's whose RECORD was replaced
    (one more file listed), nor for a METADATA rewritten in place since (the same size, times put
    back)."""
    site, copy = _two_sites(tmp_path)
    info = next(copy.glob("kvs-*.dist-info"))
    first = _opened(site)
    record = (info / "RECORD").read_text()
    (info / "RECORD").unlink()
    (info / "RECORD").write_text(record + "kvs/other.py,,\n")
    _aged(info / "RECORD")
    metadata = info / "METADATA"
    stamp = metadata.stat()
    with metadata.open("r+b") as f:  # the same inode and size
        f.write(metadata.read_bytes().replace(b"Version: 1.0.0", b"Version: 1.0.1"))
    os.utime(metadata, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    second, again = _opened(copy), _opened(site)
    assert "kvs/model.py" in first.files() and "kvs/other.py" not in first.files()
    assert second.files() == first.files() | {"kvs/other.py"}
    # (METADATA is hard-linked: the first site's, read before, holds the new version too)
    assert (first.info.version, second.info.version, again.info.version) == ("1.0.0", "1.0.1", "1.0.1")
    assert again.files() == first.files()


def test_what_is_kept_past_its_budget_is_forgotten_all_at_once(tmp_path: Path) -> None:
    files = []
    for name in ("a", "b", "c"):
        (tmp_path / name).write_text(name)
        _aged(tmp_path / name)
        files.append((tmp_path / name).stat())
    kept: KeptByIdentity[str] = KeptByIdentity(10, len)
    kept.keep(files[0], "x" * 11)  # (over the whole budget: not kept)
    assert kept.get(files[0]) is None
    kept.keep(files[0], "x" * 6)
    kept.keep(files[1], "y" * 4)
    assert (kept.get(files[0]), kept.get(files[1])) == ("x" * 6, "y" * 4)
    kept.keep(files[2], "z")
    assert (kept.get(files[0]), kept.get(files[1]), kept.get(files[2])) == (None, None, "z")
    assert kept.get(tmp_path.stat()) is None  # (a folder: never)
