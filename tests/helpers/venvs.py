"""Fresh virtual environments for tests that run prstack as a user would, in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import prstack

SOURCE = Path(prstack.__file__).resolve().parents[1]
"""The folder holding the prstack package under test (src/)."""


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def site(self) -> Path:
        """Its own site-packages, where tests install what the environment holds."""
        return next((self.root / "lib").glob("python3*/site-packages"))

    def run(self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """`python ARGS` in this environment (no PYTHONPATH, no user site)."""
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        return subprocess.run([str(self.python), *args], capture_output=True, text=True, timeout=timeout,
                              env={**clean, "PYTHONNOUSERSITE": "1", **(env or {})}, cwd=cwd)


def fresh_venv(root: Path, *, prstack_source: bool = True) -> Venv:
    """A new venv without pip whose site-packages is empty but for one path file: the test
    environment's site-packages (prstack's dependencies; its own path files are not run, so an
    editable prstack there is not importable) and, with `prstack_source`, the prstack under test."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, capture_output=True)
    venv = Venv(root)
    deps = sysconfig.get_paths()["purelib"]
    lines = [str(SOURCE)] if prstack_source else []
    (venv.site / "_prstack_tests_deps.pth").write_text("\n".join([*lines, deps]) + "\n")
    return venv
