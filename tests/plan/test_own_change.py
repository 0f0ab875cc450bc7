"""`plan`, `hunks` and `audit` share one definition of a PR's own change and one audit: a PR that
merged the default branch plans only its own change; a squash-merged stack is already present;
`plan` onto a target judges the PRs as `audit` does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.plan import CORE, UTIL, Upstream
from prstack.audit import audit_stack
from prstack.cli import main
from prstack.demo.fixture import export_tree
from prstack.diff.hunks import parse_diff
from prstack.models import PRStatus
from prstack.plan import PlanStatus
from prstack.plan.planning import PlanRequest, combined_patch, plan_stack
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets import TargetSpec


@pytest.fixture
def upstream(git_repo: GitRepo) -> Upstream:
    return Upstream(git_repo)


def _child_that_merged_main(up: Upstream) -> None:
    """#21 on v1.0; #22 on #21, which then merges main (v1.1 and a change to util.py, a file
    neither PR touches) and goes on; a branch `other` changes util.py's line its own way."""
    up.pr(21, [(CORE, "VALUE_05 = 5\n", "VALUE_05 = 50\n")])
    up.main_commit("util: note", UTIL, "2 * x", "2 * x  # main")
    up.repo.branch("pr22", "pr21")
    up.repo.commit("PR 22: value 20", up.edit(CORE, "VALUE_20 = 20\n", "VALUE_20 = 200\n"))
    up.repo.git("-c", "commit.gpgsign=false", "merge", "--quiet", "--no-edit", "main")
    up.repo.commit("PR 22: value 22", up.edit(CORE, "VALUE_22 = 22\n", "VALUE_22 = 220\n"))
    up.repo.pr_ref(22)
    up.repo.branch("other", "v1.1")
    up.repo.commit("util: other note", up.edit(UTIL, "2 * x", "2 * x  # other"))
    up.repo.git("checkout", "--quiet", "main")


@pytest.mark.slow
def test_a_child_that_merged_main_plans_only_its_own_change(upstream: Upstream) -> None:
    _child_that_merged_main(upstream)
    src = GitClone(upstream.path)
    plan = plan_stack(PlanRequest(ClonePRs(src, [22]), onto="other"))
    assert {p.pr.number: p.status for p in plan.prs} == {21: PlanStatus.CLEAN, 22: PlanStatus.CLEAN}
    patch = combined_patch(src, plan).decode()
    assert "util.py" not in patch
    assert "VALUE_22 = 220" in patch and "VALUE_05 = 50" in patch


@pytest.mark.slow
def test_the_hunks_range_reproduces_the_hunks_with_git_diff(
        upstream: Upstream, capsys: pytest.CaptureFixture[str]) -> None:
    _child_that_merged_main(upstream)
    assert main(["hunks", "22", "--git", str(upstream.path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for pr in data["prs"]:
        diff = subprocess.run(["git", "-C", str(upstream.path), "diff", pr["change_base"], pr["head_sha"]],
                              capture_output=True, check=True).stdout
        again = [(h.path, h.old_start, h.new_start, len(h.added)) for h in parse_diff(diff, pr["number"])]
        listed = [(h["path"], h["old_start"], h["new_start"], h["added"]) for h in data["hunks"]
                  if h["pr"] == pr["number"]]
        assert again == listed
    (child,) = [p for p in data["prs"] if p["number"] == 22]
    assert child["change_base"] != child["base_sha"]


@pytest.mark.slow
def test_a_squash_merged_stack_whose_child_merged_main_is_present(upstream: Upstream) -> None:
    up = upstream
    _child_that_merged_main(up)
    for branch in ("pr21", "pr22"):
        up.repo.git("merge", "--squash", "--quiet", branch)
        up.repo.commit(f"squash {branch}", {})
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [22]), onto="main"))
    assert {p.pr.number: p.status for p in plan.prs} == {21: PlanStatus.PRESENT, 22: PlanStatus.PRESENT}
    assert plan.clean and not plan.picks


@pytest.mark.slow
def test_plan_onto_a_target_judges_the_prs_as_the_audit_does(upstream: Upstream, tmp_path: Path) -> None:
    """The child rewrote its parent's line: the audit calls the parent present (as rewritten), and
    so does the plan onto the same tree."""
    up = upstream
    up.pr(31, [(CORE, "VALUE_09 = 9\n", "VALUE_09 = 90\n")])
    up.pr(32, [(CORE, "VALUE_09 = 90\n", "VALUE_09 = 900\n")], start="pr31")
    tree = export_tree(up.path, "pr32", tmp_path / "top")
    spec = TargetSpec("tree", str(tree))
    report = audit_stack(GitClone(up.path), [32], spec)
    assert {p.pr.number: p.status for p in report.prs} == {31: PRStatus.APPLIED, 32: PRStatus.APPLIED}
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [32]), target=spec))
    assert {p.pr.number: p.status for p in plan.prs} == {31: PlanStatus.PRESENT, 32: PlanStatus.PRESENT}
