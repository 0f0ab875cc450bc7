"""The table report as a person reads it: in a real pseudo-terminal of 80 and 120 columns, and piped
with COLUMNS, the PR, status and count columns are whole, a PR takes at most two lines, panel
headings keep the file name, diff lines are cut rather than wrapped, and the report ends with the
next step. The expected screens are in tests/golden/ (regenerate: PRSTACK_REGENERATE_CASES=1)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from rich.console import Console

from conftest import ROOT
from prstack.demo.example import DemoBuild
from prstack.models import FileChange, Hunk, HunkLine, HunkResult, HunkStatus
from prstack.render.panels import HunkPanel

GOLDEN = ROOT / "tests" / "golden"
REGENERATE = bool(os.environ.get("PRSTACK_REGENERATE_CASES"))
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
AUDIT = ("audit", "40898", "--git", "clone", "--site-packages", "site-packages")
COMMANDS = ("  prstack ", "  git apply ")
"""Lines of the closing summary: commands to copy, printed whole however narrow the terminal."""


def in_terminal(args: tuple[str, ...], columns: int, cwd: Path | None = None) -> tuple[int, str]:
    """Run prstack with its output on a pseudo-terminal of `columns` columns; its screen, colours
    taken out."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | {"TERM": "xterm-256color"}
    proc = subprocess.Popen([sys.executable, "-m", "prstack", *args], stdin=subprocess.DEVNULL, stdout=follower,
                            stderr=subprocess.DEVNULL, cwd=cwd, env=env)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return proc.wait(), _ANSI.sub("", seen.decode()).replace("\r\n", "\n")


@pytest.fixture(scope="module")
def demo_dir(demo_build: DemoBuild, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where the demo's clone and install go by short names, so that the screen does not
    depend on where the test's temporary folder is."""
    here = tmp_path_factory.mktemp("screen")
    (here / "clone").symlink_to(demo_build.repo.path)
    (here / "site-packages").symlink_to(demo_build.site_packages)
    return here


def table_rows(screen: str) -> list[str]:
    """The PR table's body: the lines between its header rule and the first line after it that
    is not a row (a footnote, a panel)."""
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if set(line.strip()) == {"─"}) + 1
    rows = []
    for line in lines[start:]:
        if line.startswith(("*", "╭", "Not fully", "Every shipped")) or not line.strip():
            break
        rows.append(line)
    return rows


def check_screen(screen: str, columns: int, prs: list[dict[str, object]]) -> None:
    for line in screen.splitlines():
        assert len(line) <= columns or line.startswith(COMMANDS), line
    rows = table_rows(screen)
    assert len(rows) <= 2 * len(prs)
    for pr in prs:
        counts = pr["counts"]
        assert isinstance(counts, dict)
        cells = (pr["status"], counts["applied"] + counts["relocated"], counts["missing"],
                 counts["partial"] + counts["diverged"] + counts["conflict"] + counts["file-missing"],
                 counts["not-shipped"] + counts["unverifiable"])
        row = next(line for line in rows if line.startswith(f"#{pr['number']} "))
        assert re.search(r"\s{}\s+{}\s+{}\s+{}\s+{}$".format(*cells), row), row  # whole, never "parti…"
    headings = [line for line in screen.splitlines() if line.startswith("╭─")]
    assert headings and all("runner.py" in line for line in headings)
    assert "prstack plan 40898 --git clone --site-packages site-packages --emit-patch missing.patch" in screen
    assert "--verbose" in screen.split("Not fully in the target: #40727")[1]


def golden(name: str, screen: str) -> None:
    path = GOLDEN / name
    if REGENERATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(screen)
    assert path.is_file(), f"no {path}: run PRSTACK_REGENERATE_CASES=1 pytest {__file__}"
    assert screen == path.read_text()


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.slow
def test_audit_in_a_terminal(demo_dir: Path, columns: int) -> None:
    data = json.loads(subprocess.run([sys.executable, "-m", "prstack", *AUDIT, "--format", "json"], cwd=demo_dir,
                                     capture_output=True, text=True).stdout)
    code, screen = in_terminal(AUDIT, columns, demo_dir)
    assert code == 1
    check_screen(screen, columns, data["prs"])
    cut = '(from 1)."…' if columns == 80 else '(from 1)."""'
    assert cut in screen  # a long diff line: cut with a marker at 80 columns, whole at 120
    assert screen.count("* no title from GitHub") == 1 and "(subject of the first commit)" not in screen
    golden(f"audit-demo-{columns}.txt", screen)


@pytest.mark.slow
def test_piped_with_columns_is_the_terminals_screen(demo_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | {"COLUMNS": "80"}
    piped = subprocess.run([sys.executable, "-m", "prstack", *AUDIT], cwd=demo_dir, capture_output=True, text=True,
                           env=env)
    assert piped.returncode == 1
    assert piped.stdout == (GOLDEN / "audit-demo-80.txt").read_text()


@pytest.mark.slow
def test_the_demos_table_fits_80_columns() -> None:
    code, screen = in_terminal(("demo",), 80)
    assert code == 1
    rows = table_rows(screen)
    assert [line[:7].strip() for line in rows if line.startswith("#")] == ["#40727", "#40898"]
    assert len(rows) <= 4 and all(len(line) <= 80 for line in rows)
    header = screen[screen.index("PRs in stack order"):screen.index(rows[0])]
    assert all(len(line) <= 80 for line in header.splitlines())
    assert "prstack demo --verbose" in screen  # the next step, even here


def _result(path: str, installed: str) -> HunkResult:
    hunk = Hunk(3, path, path, FileChange.MODIFIED, 1, 1, 1, 1,
                (HunkLine("-", "x = 1"), HunkLine("+", "x = " + "2" * 200)), ("a" * 40,))
    return HunkResult(hunk, HunkStatus.MISSING, installed_path=installed)


@pytest.mark.parametrize("width", [60, 80])
def test_a_panel_heading_keeps_the_file_names(width: int) -> None:
    deep = "src/" + "/".join(f"level{i}" for i in range(12)) + "/the_module.py"
    console = Console(record=True, width=width)
    console.print(HunkPanel(_result(deep, deep.removeprefix("src/"))))
    lines = console.export_text().splitlines()
    assert lines[0].count("the_module.py") == 2 and "…/" in lines[0] and len(lines[0]) == width
    assert lines[0].startswith("╭─ missing PR #3 src")  # the start of each path, its middle left out
    body = [line for line in lines if "x = 2" in line]
    assert len(body) == 1 and body[0].endswith("… │")  # cut with a marker, not wrapped
    assert not any(line.startswith("│ 2222") for line in lines)
