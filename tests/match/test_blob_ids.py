"""A file's blob id is git's, for SHA-1 and SHA-256 ids, and a diff's abbreviated id names it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from prstack.match import text
from prstack.match.text import blob_id, names_blob


def _git_id(tmp_path: Path, data: bytes, fmt: str = "sha1") -> str:
    repo = tmp_path / fmt
    if not repo.exists():
        subprocess.run(["git", "init", "-q", f"--object-format={fmt}", str(repo)], check=True)
    (repo / "f").write_bytes(data)
    return subprocess.run(["git", "hash-object", "f"], capture_output=True, text=True, check=True,
                          cwd=repo).stdout.strip()


def test_blob_ids_are_gits_and_an_abbreviated_id_names_its_bytes(tmp_path: Path) -> None:
    data = b"def f():\n    return 1\n"
    want, want256 = _git_id(tmp_path, data), _git_id(tmp_path, data, "sha256")
    assert blob_id(data) == want and blob_id(data, 64) == want256
    assert names_blob(want[:7], data) and names_blob(want256, data) and not names_blob(want256[:-1] + "x", data)
    big = b"x" * (1 << 20)
    assert blob_id(big) == _git_id(tmp_path, big)


def test_bytes_hashed_again_get_the_id_kept_for_them_by_kind_within_a_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same bytes asked again are not hashed again, a SHA-256 id is not taken for a SHA-1 one of
    the same bytes, and the ids kept cover at most BLOB_IDS_KEPT_BYTES of files."""
    data = b"x = 1\n"
    assert blob_id(data) == _git_id(tmp_path, data)
    assert (data, 40) in text._blob_ids.by_data
    assert blob_id(data, 64) == _git_id(tmp_path, data, "sha256") != blob_id(data)
    monkeypatch.setattr(text, "BLOB_IDS_KEPT_BYTES", 1_000)
    for n in range(50):
        blob_id(b"%d\n" % n * 40)
        assert text._blob_ids.size <= 1_000
    assert (data, 40) not in text._blob_ids.by_data
    assert blob_id(data) == _git_id(tmp_path, data)
