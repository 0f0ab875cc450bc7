"""The project's own checks run with the tests: ruff and mypy (strict) as configured in pyproject.toml."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def test_ruff_is_clean() -> None:
    # next to this interpreter first: the test extra's ruff, with or without the venv activated
    ruff = shutil.which("ruff", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    assert ruff, "ruff is part of the test extra: pip install -e '.[test]'"
    dirs = [d for d in ("src", "tests", "bench") if (ROOT / d).is_dir()]
    done = subprocess.run([ruff, "check", *dirs], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_mypy_strict_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
