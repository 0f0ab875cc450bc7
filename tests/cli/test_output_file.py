"""`-o/--output FILE` as pip writes: the report file holds its old content or the whole new report
whenever the process is killed; a link there is replaced, never written through; an input of the run
is never overwritten with the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prstack.cli import main

LINES = 40_000
STEP = 8


def big_audit(tmp_path: Path) -> tuple[Path, Path]:
    """A tree and a patch of LINES / STEP one-line hunks, all applied: a report of megabytes."""
    old = [f"value_{i} = {i}\n" for i in range(LINES)]
    new = [line.replace(" = ", " = 1") if i % STEP == 4 else line for i, line in enumerate(old)]
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "mod.py").write_text("".join(new))
    hunks = []
    for i in range(4, LINES, STEP):
        hunks.append(f"@@ -{i},3 +{i},3 @@\n {old[i - 1]}-{old[i]}+{new[i]} {old[i + 1]}")
    patch = tmp_path / "fix.diff"
    patch.write_text("diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n" + "".join(hunks))
    return tree, patch


@pytest.mark.slow
def test_output_naming_an_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree, patch = big_audit(tmp_path)
    before = patch.read_bytes()
    code = main(["audit", "--patch", str(patch), "--tree", str(tree), "--format", "json", "-o", str(patch)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "an input of this run" in err
    assert patch.read_bytes() == before


@pytest.mark.slow
def test_output_to_a_link_replaces_the_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree, patch = big_audit(tmp_path)
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH=/usr/bin\n")
    out = tmp_path / "report.json"
    os.symlink(victim, out)
    assert main(["audit", "--patch", str(patch), "--tree", str(tree), "--format", "json", "-o", str(out)]) == 0
    capsys.readouterr()
    assert victim.read_text() == "export PATH=/usr/bin\n"
    assert not out.is_symlink() and json.loads(out.read_text())["hunks"]


@pytest.mark.slow
def test_a_report_killed_as_it_is_written_is_old_or_whole(tmp_path: Path) -> None:
    """`prstack audit -o report.json` killed the moment report.json first changes (and at random moments
    after): the file is still the old one, or the complete report, never a part of it."""
    tree, patch = big_audit(tmp_path)
    out = tmp_path / "report.json"
    command = [sys.executable, "-m", "prstack", "audit", "--patch", str(patch), "--tree", str(tree),
               "--format", "json", "-o", str(out)]
    assert subprocess.run(command, capture_output=True, timeout=120).returncode == 0
    whole = out.read_bytes()
    assert len(whole) > 1 << 20
    for attempt in range(6):
        out.write_bytes(b"old report\n")
        seen = os.stat(out)
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while child.poll() is None and time.monotonic() < deadline:
            now = os.stat(out)
            if (now.st_ino, now.st_size, now.st_mtime_ns) != (seen.st_ino, seen.st_size, seen.st_mtime_ns):
                time.sleep(0.002 * attempt)
                break
        child.kill()
        child.wait(timeout=30)
        got = out.read_bytes()
        assert got in (b"old report\n", whole), f"a part of the report ({len(got)} bytes) after the kill {attempt}"
