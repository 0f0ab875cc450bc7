"""Golden cases: a scenario, its expected JSON and exit code, one parametrized test.

After a deliberate change of output, regenerate with:  PRSTACK_REGEN_GOLDEN=1 pytest tests/test_golden.py
and review the diff of tests/golden/ before committing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import ROOT
from prstack.cli import main
from prstack.demo.fixture import export_tree
from prstack.demo.run import DemoBuild

GOLDEN = ROOT / "tests" / "golden"
SCENARIOS = {
    "demo-40898-site-packages": (["40898"], "site-packages"),
    "demo-40898-wheel": (["40898"], "wheel"),
    "demo-40727-site-packages": (["40727"], "site-packages"),
    "demo-40898-head-tree": (["40898"], "head-tree"),
}


def target_args(demo: DemoBuild, kind: str, tmp: Path) -> list[str]:
    if kind == "site-packages":
        return ["--site-packages", str(demo.site_packages)]
    if kind == "wheel":
        return ["--wheel", str(demo.wheel)]
    tree = export_tree(demo.repo.path, demo.repo.heads[40898], tmp / "head-tree")
    return ["--tree", str(tree)]


def normalise(data: dict, demo: DemoBuild) -> dict:  # type: ignore[type-arg]
    """Temporary paths out; everything else (shas included: the fixture's dates are fixed) stays."""
    text = json.dumps(data, indent=2, sort_keys=True)
    for path, name in ((demo.site_packages, "<site-packages>"), (demo.wheel, "<wheel>")):
        text = text.replace(str(path), name)
    return json.loads(text)  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_golden(name: str, demo_build: DemoBuild, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prs, kind = SCENARIOS[name]
    code = main(["audit", *prs, "--git", str(demo_build.repo.path), *target_args(demo_build, kind, tmp_path),
                 "--format", "json"])
    data = normalise(json.loads(capsys.readouterr().out), demo_build)
    if kind == "head-tree":
        data["target"]["path"] = "<tree>"
    got = {"exit_code": code, "output": data}
    path = GOLDEN / f"{name}.json"
    if os.environ.get("PRSTACK_REGEN_GOLDEN"):
        path.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n")
    expected = json.loads(path.read_text())
    assert got == expected
