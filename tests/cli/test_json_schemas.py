"""Real JSON outputs of the CLI, run as a process, validated against the schemas shipped in the package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import jsonschema
import pytest

from prstack.demo.example import DemoBuild
from prstack.schemas import IDS, schema


def output(*args: str) -> Any:
    done = subprocess.run([sys.executable, "-m", "prstack", *args], capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("schema_id", IDS)
def test_each_schema_is_a_valid_json_schema(schema_id: str) -> None:
    data = schema(schema_id)
    jsonschema.Draft202012Validator.check_schema(data)
    assert data["title"] == schema_id and data["properties"]["schema"] == {"const": schema_id}


@pytest.mark.slow
def test_real_outputs_validate(demo_build: DemoBuild) -> None:
    git, site, wheel = str(demo_build.repo.path), str(demo_build.site_packages), str(demo_build.wheel)
    cases = [
        ("prstack.audit/2", ["audit", "40898", "--git", git, "--site-packages", site, "--format", "json"]),
        ("prstack.audit/2", ["audit", "40898", "--git", git, "--wheel", wheel, "--format", "json"]),
        ("prstack.audit/1", ["audit", "40898", "--git", git, "--wheel", wheel, "--format", "json",
                             "--schema", "prstack.audit/1"]),
        ("prstack.graph/1", ["graph", "40898", "--git", git, "--format", "json"]),
        ("prstack.hunks/1", ["hunks", "40898", "--git", git, "--format", "json"]),
        ("prstack.plan/1", ["plan", "40898", "--git", git, "--onto", "main", "--format", "json"]),
        ("prstack.plan/1", ["plan", "40898", "--git", git, "--site-packages", site, "--format", "json"]),
    ]
    for schema_id, args in cases:
        data = output(*args)
        assert data["schema"] == schema_id
        jsonschema.validate(data, schema(schema_id), cls=jsonschema.Draft202012Validator)


def test_a_broken_output_does_not_validate(demo_build: DemoBuild) -> None:
    data = output("audit", "40898", "--git", str(demo_build.repo.path), "--site-packages",
                  str(demo_build.site_packages), "--format", "json")
    data["hunks"][0]["status"] = "fine"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema("prstack.audit/2"))
