"""Several targets in one audit: a PR x target matrix in every format, each target's report the one it
gets alone, one exit code for all (0 only when every target holds every shipped hunk)."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from helpers.imagebuild import files_of, layer, oci_layout
from prstack.audit import audit_targets
from prstack.audit.same_content import RecordingTarget, judged, same_content
from prstack.cli import main
from prstack.demo.example import DemoBuild
from prstack.render.json_report import audit_json
from prstack.render.matrix import matrix_dict, matrix_json
from prstack.schemas import schema
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets.base import TargetSpec, open_target

ENV = "opt/venv/lib/python3.12/site-packages"


@pytest.fixture(scope="module")
def head_tree(demo_build: DemoBuild, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The upstream tree at #40898's head: every hunk of the stack present."""
    dest = tmp_path_factory.mktemp("head") / "tree"
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(demo_build.repo.path), "archive", demo_build.repo.heads[40898]],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


@pytest.fixture(scope="module")
def image(demo_build: DemoBuild, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("img") / "layout"
    oci_layout(path, {"linux/amd64": [layer(files_of(demo_build.site_packages, ENV), compress=True)]})
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["audit", *args])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    return code, out


@pytest.mark.slow
def test_json_matrix_holds_each_targets_own_report(demo_build: DemoBuild, head_tree: Path, image: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    git = ("40898", "--git", str(demo_build.repo.path))
    targets = [("--site-packages", str(demo_build.site_packages)), ("--wheel", str(demo_build.wheel)),
               ("--tree", str(head_tree)), ("--image", str(image))]
    code, out = run(capsys, *git, *(a for t in targets for a in t), "--format", "json")
    data = json.loads(out)
    jsonschema.validate(data, schema("prstack.matrix/1"))
    for report in data["reports"]:
        jsonschema.validate(report, schema("prstack.audit/2"))
    assert code == 1 and data["all_present"] is False
    assert [t["kind"] for t in data["targets"]] == ["site-packages", "wheel", "tree", "image"]
    assert [t["all_present"] for t in data["targets"]] == [False, False, True, False]
    assert data["matrix"] == [{"pr": 40727, "statuses": ["partial", "partial", "applied", "partial"]},
                              {"pr": 40898, "statuses": ["applied", "applied", "applied", "applied"]}]
    for (option, path), report in zip(targets, data["reports"], strict=True):
        _, alone = run(capsys, *git, option, path, "--format", "json")
        assert [(h["path"], h["status"]) for h in report["hunks"]] == \
            [(h["path"], h["status"]) for h in json.loads(alone)["hunks"]]


def test_every_target_holding_everything_exits_zero(demo_build: DemoBuild, head_tree: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "40898", "--git", str(demo_build.repo.path), "--tree", str(head_tree),
                    "--tree", str(head_tree), "--format", "markdown")
    assert code == 0
    assert "| PR | 1. tree tree | 2. tree tree |" in out and "Every shipped hunk is in every target" in out


def test_table_and_junit_have_a_column_and_suites_per_target(
        demo_build: DemoBuild, head_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "m.xml"
    code, out = run(capsys, "40898", "--git", str(demo_build.repo.path), "--wheel", str(demo_build.wheel),
                    "--tree", str(head_tree), "--format", "junit", "--output", str(out_file))
    assert code == 1
    assert "1. wheel" in out and "2. tree" in out and "Not fully in 1 of the 2 targets" in out
    header = next(line for line in out.splitlines() if "1. wheel" in line)
    assert "2. tree" in header
    root = ET.fromstring(out_file.read_bytes())
    suites = root.findall("testsuite")
    assert len(suites) == 4
    assert [s.find("properties/property[@name='target']").attrib["value"].split()[0] for s in suites] == \
        ["wheel", "wheel", "tree", "tree"]
    assert root.attrib["failures"] == "1"


def test_patch_with_several_targets_is_one_line(demo_build: DemoBuild, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x.diff").write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    code = main(["audit", "--patch", str(tmp_path / "x.diff"), "--wheel", str(demo_build.wheel),
                 "--tree", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "one target" in err


def copied_tree(head_tree: Path, dest: Path, runner: bytes | None = None) -> Path:
    """A copy of the head tree, its runner.py replaced by `runner` when given."""
    subprocess.run(["cp", "-r", str(head_tree), str(dest)], check=True)
    if runner is not None:
        (dest / "src" / "kvserve" / "runner.py").write_bytes(runner)
    return dest


def base_runner(demo: DemoBuild) -> bytes:
    """kvserve/runner.py as the stack's base has it: no hunk of the stack applied."""
    rev = f"{demo.repo.heads[40727]}~1:src/kvserve/runner.py"
    return subprocess.run(["git", "-C", str(demo.repo.path), "show", rev], capture_output=True, check=True).stdout


def test_a_target_is_the_same_content_only_when_every_file_read_holds_the_same_bytes(
        demo_build: DemoBuild, head_tree: Path, tmp_path: Path) -> None:
    first = RecordingTarget(open_target(TargetSpec("tree", str(head_tree)), (), ()))
    assert first.read("src/kvserve/runner.py") is not None and first.size("src/kvserve/__init__.py") is not None
    before = judged(first, ())
    same = copied_tree(head_tree, tmp_path / "same")
    other = copied_tree(head_tree, tmp_path / "other", base_runner(demo_build))
    assert same_content(before, open_target(TargetSpec("tree", str(same)), (), ()))
    assert not same_content(before, open_target(TargetSpec("tree", str(other)), (), ()))
    (same / "src" / "kvserve" / "extra.py").write_text("x = 1\n")
    assert not same_content(before, open_target(TargetSpec("tree", str(same)), (), ()))


@pytest.mark.slow
def test_targets_of_the_same_bytes_and_of_other_bytes_each_get_their_own_verdicts(
        demo_build: DemoBuild, head_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git = ("40898", "--git", str(demo_build.repo.path))
    trees = [head_tree, copied_tree(head_tree, tmp_path / "base", base_runner(demo_build)),
             copied_tree(head_tree, tmp_path / "same")]
    _, out = run(capsys, *git, *(a for t in trees for a in ("--tree", str(t))), "--format", "json")
    data = json.loads(out)
    assert [t["all_present"] for t in data["targets"]] == [True, False, True]
    for tree, report in zip(trees, data["reports"], strict=True):
        _, alone = run(capsys, *git, "--tree", str(tree), "--format", "json")
        assert [(h["path"], h["old_start"], h["status"]) for h in report["hunks"]] == \
            [(h["path"], h["old_start"], h["status"]) for h in json.loads(alone)["hunks"]]


@pytest.mark.slow
def test_the_matrix_json_is_its_document_each_report_written_as_the_audit_writes_it(
        demo_build: DemoBuild, head_tree: Path, tmp_path: Path) -> None:
    """The matrix's JSON text reads as `matrix_dict`'s document, and each target's report in it is,
    line for line, the audit's own JSON of that report (one hunk a line): for targets judged alike
    (their rows written once) as for a target judged apart."""
    trees = [head_tree, copied_tree(head_tree, tmp_path / "base", base_runner(demo_build)),
             copied_tree(head_tree, tmp_path / "same")]
    reports = audit_targets(ClonePRs(GitClone(demo_build.repo.path), [40898]),
                            [TargetSpec("tree", str(t)) for t in trees])
    assert reports[0].results is reports[2].results and reports[1].results is not reports[0].results
    text = matrix_json(reports)
    assert json.loads(text) == json.loads(json.dumps(matrix_dict(reports)))
    lines = text.split("\n")
    for report in reports:
        own = [f"    {line}" for line in audit_json(report).rstrip("\n").split("\n")]
        at = lines.index(own[4]) - 4  # (found by its target's path, the one line no other report has)
        assert own[4].strip().startswith('"path"')
        written = lines[at : at + len(own)]
        assert written[:-1] == own[:-1] and written[-1].removesuffix(",") == own[-1]  # (a comma between reports)
    assert text.endswith("  ]\n}\n") and len(text.split('"hunks": [')) == 4
