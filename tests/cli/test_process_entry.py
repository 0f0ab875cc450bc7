"""The process entry (`prstack`, `python -m prstack`): main's exit code, the objects left for the exit."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points


def test_the_process_entry_exits_as_main_does_its_objects_frozen_for_the_exit() -> None:
    """`run` returns `main`'s exit code, the cycle collector off and every object left out of its
    sight (the process ends next); `main` itself, called in a process that goes on, leaves the
    collector as it was and freezes nothing. Both ways
    of running prstack as a process go through `run`."""
    probe = ("import gc, sys\nfrom prstack.cli import main, run\nsys.argv = ['prstack', 'audit', '--nope']\n"
             "print(main(), gc.get_freeze_count(), gc.isenabled())\n"
             "print(run(), gc.get_freeze_count() > 0, gc.isenabled())")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-2:] == ["2 0 True", "2 True False"]
    done = subprocess.run([sys.executable, "-m", "prstack", "audit", "--nope"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 2 and done.stderr.startswith("prstack: ")
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "prstack"]
    assert script.value == "prstack.cli:run"
