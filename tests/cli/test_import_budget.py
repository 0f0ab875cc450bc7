"""What a command imports is what it uses: `--version`, `--help` and an offline audit of a clone import
neither PyGithub nor the graph, git or terminal libraries they have no use for, and the audit's imports
stay within a budget (modules counted; time measured beside a baseline in the same test)."""

from __future__ import annotations

import statistics
import subprocess
import sys

import pytest

from prstack.demo.run import DemoBuild

UNUSED_BY_AN_OFFLINE_CLONE_AUDIT = ("github", "networkx", "git", "gitdb", "rich")
"""PyGithub, networkx, GitPython (and its object database), rich: a JSON audit of a clone uses none."""
MODULE_BUDGET = 170
"""Modules outside the standard library (prstack's own included) an offline JSON audit may import."""
TIME_BUDGET = 4.5
"""The audit's import time at most this many times a bare `import typer` (the command line's own
floor), each measured by `python -X importtime`, medians of runs alternating in one test. About 3
today; 6 to 8 with networkx and GitPython imported, as they were."""


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


def _total(times: dict[str, int]) -> int:
    return sum(times.values())


def _audit_args(demo: DemoBuild) -> list[str]:
    return ["audit", "40898", "--git", str(demo.repo.path), "--site-packages", str(demo.site_packages),
            "--format", "json", "--offline"]


def _tops(times: dict[str, int]) -> set[str]:
    return {name.split(".")[0] for name in times}


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["audit", "--help"]])
def test_version_and_help_import_no_pygithub_nor_audit_libraries(args: list[str]) -> None:
    tops = _tops(_imports(*args))
    assert "prstack" in tops
    assert not tops & {*UNUSED_BY_AN_OFFLINE_CLONE_AUDIT, "unidiff"}


def test_offline_clone_audit_imports_only_what_it_uses(demo_build: DemoBuild) -> None:
    times = _imports(*_audit_args(demo_build))
    tops = _tops(times)
    assert "prstack.sources.git.repo" in times and "prstack.audit" in times
    assert not tops & set(UNUSED_BY_AN_OFFLINE_CLONE_AUDIT)
    outside_stdlib = [n for n in times if n.split(".")[0] not in sys.stdlib_module_names]
    assert len(outside_stdlib) <= MODULE_BUDGET, sorted(outside_stdlib)


def test_offline_clone_audit_import_time_within_budget(demo_build: DemoBuild) -> None:
    """Alternating runs, so a loaded machine slows both sides alike; the budget leaves room for noise
    and still fails when one of the heavy libraries comes back (each costs about a typer)."""
    audit, floor = [], []
    for _ in range(7):
        audit.append(_total(_imports(*_audit_args(demo_build))))
        floor.append(_total(_importtime("-c", "import typer")))
    ratio = statistics.median(audit) / statistics.median(floor)
    assert ratio <= TIME_BUDGET, f"imports {statistics.median(audit) / 1000:.0f} ms, {ratio:.1f}x typer's"
