"""A file's blob id is git's, for SHA-1 and SHA-256 ids, whether its bytes were hashed before, are
among many hashed since, or are too big to be kept."""

from __future__ import annotations

import subprocess
from pathlib import Path

from prstack.match import text
from prstack.match.text import blob_id, names_blob


def _git_id(tmp_path: Path, data: bytes, fmt: str = "sha1") -> str:
    repo = tmp_path / fmt
    if not repo.exists():
        subprocess.run(["git", "init", "-q", f"--object-format={fmt}", str(repo)], check=True)
    (repo / "f").write_bytes(data)
    return subprocess.run(["git", "hash-object", "f"], capture_output=True, text=True, check=True,
                          cwd=repo).stdout.strip()


def test_blob_ids_asked_again_and_after_many_others_are_gits(tmp_path: Path) -> None:
    data = b"def f():\n    return 1\n"
    want, want256 = _git_id(tmp_path, data), _git_id(tmp_path, data, "sha256")
    assert blob_id(data) == want and blob_id(data, 64) == want256
    assert blob_id(data) == want and blob_id(data, 64) == want256  # (asked again)
    assert names_blob(want[:7], data) and names_blob(want256, data) and not names_blob(want256[:-1] + "x", data)
    for n in range(300):  # (more bytes than are kept: the first ones go)
        blob_id(bytes([n % 256]) * 40_000 + str(n).encode())
    assert blob_id(bytes(data)) == want
    big = b"x" * (text._BlobIds.KEPT_BYTES + 1)
    assert blob_id(big) == _git_id(tmp_path, big) == blob_id(big)
