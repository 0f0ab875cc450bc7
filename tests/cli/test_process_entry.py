"""The process entry (`prstack`, `python -m prstack`): main's exit code, the objects left for the exit."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points


def test_the_process_entry_exits_as_main_does_its_objects_frozen_for_the_exit() -> None:
    """`run` returns `main`'s exit code with every object left out of the cycle collector's sight (the
    process ends next); `main` itself, called in a process that goes on, freezes nothing. Both ways
    of running prstack as a process go through `run`."""
    probe = ("import gc, sys\nfrom prstack.cli import main, run\nsys.argv = ['prstack', 'audit', '--nope']\n"
             "print(main(), gc.get_freeze_count())\nprint(run(), gc.get_freeze_count() > 0)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-2:] == ["2 0", "2 True"]
    done = subprocess.run([sys.executable, "-m", "prstack", "audit", "--nope"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 2 and done.stderr.startswith("prstack: ")
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "prstack"]
    assert script.value == "prstack.cli:run"
