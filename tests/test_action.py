"""The GitHub Action's audit step, run as the runner runs it (bash, its env from the inputs) with a fake
GITHUB_STEP_SUMMARY and GITHUB_OUTPUT: the markdown report lands in the summary, the asked format in
its file, and the step fails on exit 1."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from prstack.demo.example import DemoBuild

ACTION = Path(__file__).resolve().parent.parent / "action.yml"


def steps() -> dict[str, str]:
    """Each step's name -> its `run` script, as the action file holds them (indented block scalars)."""
    text = ACTION.read_text()
    out = {}
    for m in re.finditer(r"- name: (.+)\n(?:.*\n)*?\s+run: \|\n((?:\s{8}.*\n|\n)+)", text):
        out[m.group(1).strip()] = "\n".join(line[8:] for line in m.group(2).splitlines()) + "\n"
    return out


def run_step(script: str, tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    summary, output = tmp_path / "summary.md", tmp_path / "github_output"
    summary.write_text("earlier step\n")
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
           "RUNNER_TEMP": str(tmp_path), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           **{f"PRSTACK_{k.upper()}": v for k, v in inputs.items()}}
    done = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300)
    return done, summary, output


def test_the_action_is_composite_with_an_install_and_an_audit_step() -> None:
    text = ACTION.read_text()
    assert "using: composite" in text
    assert set(steps()) == {"Install prstack", "Audit"}
    assert "pip install" in steps()["Install prstack"]
    for name in ("prs", "target", "git", "format", "output", "args", "version"):
        assert re.search(rf"^  {name}:\n", text, re.M), name
        assert f"${{{{ inputs.{name} }}}}" in text


@pytest.mark.slow
def test_a_missing_hunk_fails_the_step_with_the_report_in_the_summary(demo_build: DemoBuild, tmp_path: Path) -> None:
    done, summary, output = run_step(steps()["Audit"], tmp_path, prs="40898", git=str(demo_build.repo.path),
                                     target=f"--wheel {demo_build.wheel}", format="junit",
                                     output=str(tmp_path / "report.xml"), args="")
    assert done.returncode == 1, done.stderr
    text = summary.read_text()
    assert text.startswith("earlier step\n### prstack audit: kvserve")
    assert "runner.py" in text
    assert ET.parse(tmp_path / "report.xml").getroot().attrib["failures"] == "1"
    assert output.read_text() == "exit-code=1\n"
    assert "::error title=prstack::" in done.stdout


@pytest.mark.parametrize("fmt", ["markdown", "json"])
@pytest.mark.slow
def test_everything_present_passes(demo_build: DemoBuild, tmp_path: Path, fmt: str) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(demo_build.repo.path), "archive", demo_build.repo.heads[40898]],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    done, summary, output = run_step(steps()["Audit"], tmp_path, prs="40898", git=str(demo_build.repo.path),
                                     target=f"--tree {tree}", format=fmt, output=str(tmp_path / "out"), args="")
    assert done.returncode == 0, done.stderr
    assert "Every shipped hunk" in summary.read_text()
    assert output.read_text() == "exit-code=0\n"
    written = (tmp_path / "out").read_text()
    assert written.startswith("{") if fmt == "json" else written.startswith("### prstack audit")


@pytest.mark.slow
def test_bad_input_fails_with_exit_2_and_no_summary(demo_build: DemoBuild, tmp_path: Path) -> None:
    done, summary, output = run_step(steps()["Audit"], tmp_path, prs="40898", git=str(demo_build.repo.path),
                                     target=f"--image {tmp_path / 'nope.tar'}", format="markdown",
                                     output=str(tmp_path / "out"), args="")
    assert done.returncode == 2
    assert summary.read_text() == "earlier step\n" and output.read_text() == "exit-code=2\n"
    assert done.stderr.count("prstack: error:") == 1
