"""`prstack upkeep N --repo O/R` against the local GitHub server: the PRs read from GitHub into
prstack's cache, as audit reads them, and the releases given as wheels."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import GitRepo
from helpers.ghserver import GitHubServer
from helpers.targets import make_wheel
from prstack.cli import main
from prstack.schemas import schema


@pytest.mark.slow
def test_prs_from_github_across_wheel_releases(
        gh: tuple[GitHubServer, GitRepo], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PR #1 read from GitHub (its title from the API), judged in two released wheels: not in 0.1,
    in 0.2, so its first release is 0.2 and it retires on 0.2 (the newest wheel)."""
    server, repo = gh

    def files(rev: str) -> dict[str, bytes]:
        core = repo.git("show", f"{rev}:src/widget/core.py") + "\n"
        return {"widget/__init__.py": b"", "widget/core.py": core.encode()}

    old = make_wheel(tmp_path / "wheels", "widget", "0.1", files("main"))
    new = make_wheel(tmp_path / "wheels", "widget", "0.2", files("refs/pull/1/head"))
    code = main(["upkeep", "1", "--repo", "acme/widget", "--api-url", server.base_url, "--release-wheel", str(new),
                 "--release-wheel", str(old), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    jsonschema.validate(data, schema("prstack.upkeep/1"), cls=jsonschema.Draft202012Validator)
    assert code == 0
    assert [r["name"] for r in data["releases"]] == ["0.1", "0.2"]
    (item,) = data["items"]
    assert (item["pr"], item["title"], item["first_release"], item["verdict"]) == (1, "Fix the offsets", "0.2",
                                                                                   "retire")
    assert [h["landed_in"] for h in item["hunks"]] == ["0.2"]
    assert server.counted() > 0  # GitHub was asked
