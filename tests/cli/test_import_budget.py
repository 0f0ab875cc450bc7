"""What a command imports is what it uses: `--version`, `--help` and an offline audit of a clone import
neither PyGithub nor the graph, git or terminal libraries they have no use for, and the audit's imports
stay within a budget (modules counted; CPU time measured beside a baseline in the same test)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from prstack.demo.example import DemoBuild

UNUSED_BY_AN_OFFLINE_CLONE_AUDIT = ("github", "networkx", "git", "gitdb", "rich", "platformdirs")
"""PyGithub, networkx, GitPython (and its object database), rich, platformdirs (the cache's folder):
a JSON audit of a clone uses none."""
UNUSED_MODULES = ("importlib.metadata", "email.parser", "tomllib", "ctypes", "packaging.requirements")
"""Modules of libraries it does use that an offline JSON audit of a clone has no use for (it reads
METADATA's fields and finds distributions with our own few lines, and reads no requirements)."""
MODULE_BUDGET = 150
"""Modules outside the standard library (prstack's own included) an offline JSON audit may import."""
TIME_BUDGET = 4.0
"""The CPU time of importing what the audit imports, at most this many times that of a bare `import
typer` (the command line's own floor), each in a fresh process, the fastest of runs alternating in
one test (CPU time, and the fastest run: a loaded machine adds to both, never takes away). About 3.1
today on a loaded machine (3.8 with importlib.metadata, email's parser and packaging's requirements
imported); 6 to 7 with networkx and GitPython imported, as they were."""
IMPORT_CPU = ("import importlib, sys, time\nstarted = time.process_time()\nfor name in sys.argv[1:]:\n"
              "    importlib.import_module(name)\nprint(time.process_time() - started)")


def _imports(*args: str) -> dict[str, int]:
    """Every module a `python -m prstack ARGS` process imports -> its cumulative import time (us)."""
    return _importtime("-m", "prstack", *args)


def _importtime(*args: str) -> dict[str, int]:
    done = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True, text=True,
                          check=False)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    times: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = line.split("|")
            if not name.startswith("  "):  # a top-level import: its time holds those below it
                times[name.strip()] = int(cumulative)
            else:
                times.setdefault(name.strip(), 0)
    return times


def _audit_args(demo: DemoBuild) -> list[str]:
    return ["audit", "40898", "--git", str(demo.repo.path), "--site-packages", str(demo.site_packages),
            "--format", "json", "--offline"]


def _tops(times: dict[str, int]) -> set[str]:
    return {name.split(".")[0] for name in times}


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["audit", "--help"]])
@pytest.mark.slow
def test_version_and_help_import_no_pygithub_nor_audit_libraries(args: list[str]) -> None:
    tops = _tops(_imports(*args))
    assert "prstack" in tops
    assert not tops & {*UNUSED_BY_AN_OFFLINE_CLONE_AUDIT, "unidiff"}


def test_version_imports_nothing_help_does_not_and_names_the_installed_version() -> None:
    """`--version` costs what `--help` costs: every module it imports, `--help` imports too (no
    package metadata read), and the version it prints is the installed distribution's."""
    from importlib.metadata import version

    assert set(_imports("--version")) <= set(_imports("--help"))
    done = subprocess.run([sys.executable, "-m", "prstack", "--version"], capture_output=True, text=True, check=True)
    assert done.stdout == f"prstack {version('prstack')}\n"


@pytest.mark.slow
def test_offline_clone_audit_imports_only_what_it_uses(demo_build: DemoBuild) -> None:
    times = _imports(*_audit_args(demo_build))
    tops = _tops(times)
    assert "prstack.sources.git.repo" in times and "prstack.audit.judging" in times
    assert not tops & set(UNUSED_BY_AN_OFFLINE_CLONE_AUDIT)
    assert not set(times) & set(UNUSED_MODULES)
    outside_stdlib = [n for n in times if n.split(".")[0] not in sys.stdlib_module_names]
    assert len(outside_stdlib) <= MODULE_BUDGET, sorted(outside_stdlib)


def _import_cpu(modules: list[str], env: dict[str, str]) -> float:
    done = subprocess.run([sys.executable, "-c", IMPORT_CPU, *modules], capture_output=True, text=True, check=True,
                          env=env)
    return float(done.stdout)


@pytest.mark.slow
def test_offline_clone_audit_import_time_within_budget(demo_build: DemoBuild, tmp_path: Path) -> None:
    """What the audit imports (its top-level imports, in order: each brings those below it),
    imported again in a fresh process, bytecode compiled beforehand as an installation has it; the
    budget leaves room for noise and still fails when one of the heavy libraries comes back (each
    costs about a typer or more)."""
    tops = [name for name, cumulative in _imports(*_audit_args(demo_build)).items()
            if cumulative and name != "__main__" and not name.endswith(".__main__")]
    assert "prstack.audit" in tops
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "bytecode")  # (written there by the first runs, not in the tree)
    for modules in (tops, ["typer"]):  # (the first runs write the bytecode)
        _import_cpu(modules, env)
    audit, floor = [], []
    for _ in range(5):
        audit.append(_import_cpu(tops, env))
        floor.append(_import_cpu(["typer"], env))
    ratio = min(audit) / min(floor)
    assert ratio <= TIME_BUDGET, f"imports {min(audit) * 1000:.0f} ms of CPU, {ratio:.1f}x typer's"


@pytest.mark.slow
def test_a_patch_audit_imports_no_git_source_nor_stack_graph(tmp_path: Path) -> None:
    """Patches are their own PR source: auditing them loads neither the clone's source (its git
    readers, stack detection and lineage) nor the stack graph, which only a clone's PRs need."""
    tree = tmp_path / "tree" / "pkg"
    tree.mkdir(parents=True)
    (tree / "mod.py").write_text("def f():\n    return 2\n")
    patch = tmp_path / "fix.patch"
    patch.write_text("--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n")
    times = _imports("audit", "--patch", str(patch), "--tree", str(tmp_path / "tree"), "--format", "json")
    assert "prstack.sources.patch.source" in times and "prstack.audit.judging" in times
    assert not [n for n in times if n.startswith(("prstack.sources.git", "prstack.stack", "git."))]
