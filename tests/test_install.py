"""prstack installs as people install a CLI tool (pipx, uv tool): a wheel built from the sdist,
installed (not editable) into a fresh environment, runs `prstack demo` and `python -m prstack`."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest

from helpers.venvs import fresh_venv

ROOT = Path(__file__).resolve().parents[1]


def _build(args: list[str], cwd: Path) -> None:
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow
def test_the_wheel_built_from_the_sdist_installs_and_runs(tmp_path: Path) -> None:
    _build(["-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path / "dist")], ROOT)
    (sdist,) = (tmp_path / "dist").glob("prstack-*.tar.gz")
    # as pipx and uv do from an sdist: build its wheel (offline: the backend of this environment)
    _build(["-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w",
            str(tmp_path / "dist"), str(sdist)], tmp_path)
    (wheel,) = (tmp_path / "dist").glob("prstack-*.whl")

    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = HeaderParser().parsestr(zf.read(meta_name).decode())
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in zf.namelist())
        assert "prstack/py.typed" in zf.namelist()
    assert meta["License-Expression"] == "MIT"
    assert meta["Requires-Python"] == ">=3.11"
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    assert "Environment :: Console" in (meta.get_all("Classifier") or [])

    venv = fresh_venv(tmp_path / "venv", prstack_source=False)  # its dependencies only
    _build(["-m", "pip", "--python", str(venv.python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
           tmp_path)
    assert not (venv.site / "prstack" / "__init__.py").is_symlink()
    assert (venv.site / "prstack" / "__init__.py").is_file()  # a real install, not a path into src/

    version = venv.run("-m", "prstack", "--version", cwd=tmp_path)
    assert (version.returncode, version.stdout) == (0, f"prstack {meta['Version']}\n")
    where = venv.run("-c", "import prstack; print(prstack.__file__)", cwd=tmp_path)
    assert where.stdout.strip().startswith(str(venv.site))

    demo = subprocess.run([str(venv.root / "bin" / "prstack"), "demo"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert demo.returncode == 1, demo.stderr  # the demo finds its dropped hunk: exit 1 by design
    assert "#40727" in demo.stdout and "demo took" in demo.stdout
