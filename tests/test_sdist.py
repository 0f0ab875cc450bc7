"""The sdist carries what its tests need: built with the project's backend, unpacked, and tests run from it."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_sdists_tests_find_their_files(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path)], cwd=ROOT,
                   check=True, capture_output=True)
    (sdist,) = tmp_path.glob("prstack-*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    (top,) = (tmp_path / "unpacked").iterdir()
    for needed in ("bench/bench_stack.py", "bench/benchgen.py", "tests/cases", "fixtures/demo", "docs",
                   "src/prstack/schemas/prstack.audit-1.json", "src/prstack/schemas/prstack.audit-2.json"):
        assert (top / needed).exists(), needed
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           "tests/sources/git/test_detect_at_scale.py", "tests/test_cases.py"], cwd=top,
                          capture_output=True,
                          text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stdout[-2000:]


@pytest.mark.slow
def test_the_wheel_ships_the_schemas_and_fixtures(tmp_path: Path) -> None:
    import zipfile

    subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path)], cwd=ROOT,
                   check=True, capture_output=True)
    (wheel,) = tmp_path.glob("prstack-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema_id in ("audit", "graph", "hunks", "plan"):
        assert f"prstack/schemas/prstack.{schema_id}-1.json" in names
    assert "prstack/schemas/prstack.audit-2.json" in names
    assert any(n.startswith("prstack/_fixtures/demo/") for n in names)
