"""prstack plan on real repositories: each scenario a plan meets (clean, conflicting, already in,
onto an installed target), with the emitted script and patch
run in a scratch clone and the result audited."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.plan import CORE, UTIL, Upstream, apply_patch, audit_tree, run_script
from prstack.demo.example import DemoBuild
from prstack.demo.fixture import export_tree
from prstack.demo.wheel import build_wheel, install_wheel
from prstack.models import PRStatus
from prstack.plan import Plan, PlanStatus
from prstack.plan.planning import PlanRequest, combined_patch, plan_stack
from prstack.render.plan import plan_script
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets import TargetSpec


@pytest.fixture
def upstream(git_repo: GitRepo) -> Upstream:
    return Upstream(git_repo)


def statuses(plan: Plan) -> dict[int, PlanStatus]:
    return {p.pr.number: p.status for p in plan.prs}


def check_emitted(up: Upstream, plan: Plan, numbers: list[int], tmp_path: Path) -> None:
    """The script and the patch, each run in a scratch clone, give a tree whose audit is all-applied."""
    src = GitClone(up.path)
    scripted = run_script(up.path, plan_script(plan), tmp_path / "by-script" / "clone")
    patched = apply_patch(up.path, plan.onto.start, combined_patch(src, plan), tmp_path / "by-patch" / "clone")
    for tree in (scripted, patched):
        report = audit_tree(up.path, numbers, tree)
        assert report.all_present, [(r.hunk.pr, r.hunk.path, r.status) for r in report.results]
        assert {p.status for p in report.prs} == {PRStatus.APPLIED}


def stack_1_2(up: Upstream) -> None:
    up.pr(1, [(CORE, "VALUE_05 = 5\n", "VALUE_05 = 50\n")])
    up.pr(2, [(UTIL, "2 * x", "x + x"), (CORE, "VALUE_20 = 20\n", "VALUE_20 = 200\n")], start="pr1")


@pytest.mark.slow
def test_clean_stack_onto_a_release_tag(upstream: Upstream, tmp_path: Path) -> None:
    stack_1_2(upstream)
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(upstream.path), [2]), onto="v1.1"))
    assert [p.pr.number for p in plan.prs] == [1, 2]
    assert statuses(plan) == {1: PlanStatus.CLEAN, 2: PlanStatus.CLEAN}
    assert plan.clean
    assert [len(p.picks) for p in plan.prs] == [1, 2]
    assert plan.onto.sha == upstream.v11
    check_emitted(upstream, plan, [2], tmp_path)


@pytest.mark.slow
def test_pr_already_merged_upstream_by_squash(upstream: Upstream, tmp_path: Path) -> None:
    up = upstream
    up.pr(3, [(CORE, "VALUE_07 = 7\n", "VALUE_07 = 70\n"), (UTIL, "2 * x", "2 * int(x)")])
    up.pr(4, [(CORE, "VALUE_25 = 25\n", "VALUE_25 = 250\n")], start="pr3")
    # upstream squashes #3 into one commit of its own (different sha, same content)
    up.repo.git("checkout", "--quiet", "main")
    up.repo.git("merge", "--squash", "--quiet", "pr3")
    squash = up.repo.commit("kvlite: bigger value 7 and int() in double (#3)", {})
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [4]), onto="main"))
    assert statuses(plan) == {3: PlanStatus.PRESENT, 4: PlanStatus.CLEAN}
    assert "squash-merged" in plan.prs[0].reason and squash[:10] in plan.prs[0].reason
    assert plan.clean
    check_emitted(up, plan, [4], tmp_path)


@pytest.mark.slow
def test_stack_squashed_as_one_commit_is_present(upstream: Upstream) -> None:
    up = upstream
    up.pr(14, [(CORE, "VALUE_17 = 17\n", "VALUE_17 = 170\n")])
    up.pr(15, [(UTIL, "2 * x", "2 * x  # doubled")], start="pr14")
    up.repo.git("checkout", "--quiet", "main")
    up.repo.git("merge", "--squash", "--quiet", "pr15")
    up.repo.commit("Value 17 and a comment (#14, #15)", {})
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [15]), onto="main"))
    assert statuses(plan) == {14: PlanStatus.PRESENT, 15: PlanStatus.PRESENT}
    assert "reverse-applies" in plan.prs[0].reason
    assert "with the PRs under it" in plan.prs[1].reason
    assert plan.clean and not plan.picks


@pytest.mark.slow
def test_rebased_pr_is_present_by_patch_ids(upstream: Upstream) -> None:
    up = upstream
    up.pr(5, [(CORE, "VALUE_03 = 3\n", "VALUE_03 = 30\n"), (CORE, "VALUE_04 = 4\n", "VALUE_04 = 40\n")])
    up.repo.git("checkout", "--quiet", "main")
    up.repo.git("-c", "commit.gpgsign=false", "cherry-pick", "pr5~1", "pr5")
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [5]), onto="main"))
    assert statuses(plan) == {5: PlanStatus.PRESENT}
    assert "patch-id" in plan.prs[0].reason


@pytest.mark.slow
def test_two_independent_prs_conflict_with_each_other(upstream: Upstream, tmp_path: Path) -> None:
    up = upstream
    up.pr(6, [(CORE, "VALUE_12 = 12\n", "VALUE_12 = 120\n")])
    up.pr(7, [(UTIL, "2 * x", "x * 2"), (CORE, "VALUE_12 = 12\n", "VALUE_12 = -12\n")])
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [6, 7]), onto="v1.1"))
    assert [p.pr.number for p in plan.prs] == [6, 7]
    assert statuses(plan) == {6: PlanStatus.CLEAN, 7: PlanStatus.CONFLICT}
    assert not plan.clean
    (conflict,) = plan.prs[1].conflicts
    assert conflict.path == CORE
    assert conflict.with_prs == (6,) and not conflict.with_onto
    assert [h.added for h in conflict.hunks] == [("VALUE_12 = -12",)]
    (region,) = conflict.regions
    merged = (up.path / CORE).read_text().splitlines()  # main's core.py: header + values
    assert region[0] == merged.index("VALUE_12 = 12") + 1
    assert conflict.commit == plan.prs[1].pr.commits[1].sha
    # in the other order the other PR is the one that conflicts
    other = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [7, 6]), onto="v1.1"))
    assert statuses(other) == {7: PlanStatus.CLEAN, 6: PlanStatus.CONFLICT}
    # what is clean still goes on: the script and patch carry #6 only
    assert [p.pr.number for p in plan.prs if p.picks] == [6]
    check_emitted(up, plan, [6], tmp_path)


@pytest.mark.slow
def test_pr_conflicting_with_the_base(upstream: Upstream) -> None:
    up = upstream
    up.pr(8, [(CORE, "VALUE_15 = 15\n", "VALUE_15 = 150\n")])
    up.pr(9, [(CORE, "VALUE_28 = 28\n", "VALUE_28 = 280\n")], start="pr8")
    up.main_commit("Retire value 15", CORE, "VALUE_15 = 15\n", "VALUE_15 = None  # retired\n")
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [9]), onto="main"))
    assert statuses(plan) == {8: PlanStatus.CONFLICT, 9: PlanStatus.BLOCKED}
    (conflict,) = plan.prs[0].conflicts
    assert conflict.path == CORE and conflict.with_onto and conflict.with_prs == ()
    assert plan.prs[1].blocked_by == (8,)
    assert "main" in plan.prs[0].reason
    assert not plan.picks


@pytest.mark.slow
def test_stale_parent_conflicts_with_the_new_parent(upstream: Upstream) -> None:
    up = upstream
    up.pr(10, [(CORE, "VALUE_09 = 9\n", "VALUE_09 = 90\n")])
    up.pr(11, [(CORE, "VALUE_22 = 22\n", "VALUE_22 = 220\n")], start="pr10")
    # the parent is force-pushed with a different fix; #11 still holds the old copy
    up.pr(10, [(CORE, "VALUE_09 = 9\n", "VALUE_09 = 9 * 10\n")], start="v1.0", branch="pr10-v2")
    src = GitClone(up.path)
    plan = plan_stack(PlanRequest(ClonePRs(src, [10, 11]), onto="v1.1"))
    assert [p.pr.number for p in plan.prs] == [10, 11]
    assert plan.prs[0].status is PlanStatus.CLEAN
    child = plan.prs[1]
    if child.status is PlanStatus.CONFLICT:
        # stack detection by ancestry alone: #11 owns its stale copy of #10, which conflicts
        (conflict,) = child.conflicts
        assert conflict.path == CORE and conflict.with_prs == (10,) and not conflict.with_onto
    else:
        # detection that knows #11 sits on a stale copy of #10 starts #11's own change after
        # the copy: then the new #10 goes on, and only #11's own commit on top of it
        assert child.status is PlanStatus.CLEAN and len(child.picks) == 1
        core = src.objects.file_at(plan.result_tree, CORE) or b""
        assert b"VALUE_09 = 9 * 10\n" in core and b"VALUE_22 = 220\n" in core
    # never the old copy over the new parent
    assert b"VALUE_09 = 90\n" not in (src.objects.file_at(plan.result_tree, CORE) or b"")


@pytest.mark.slow
def test_pick_already_there_is_left_out(upstream: Upstream, tmp_path: Path) -> None:
    up = upstream
    up.pr(12, [(CORE, "VALUE_02 = 2\n", "VALUE_02 = 20\n"), (UTIL, "2 * x", "x << 1")])
    up.repo.git("checkout", "--quiet", "main")
    up.repo.git("-c", "commit.gpgsign=false", "cherry-pick", "pr12~1")
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [12]), onto="main"))
    (p,) = plan.prs
    assert p.status is PlanStatus.CLEAN
    assert len(p.picks) == 1 and len(p.redundant) == 1
    check_emitted(up, plan, [12], tmp_path)


def _install(up: Upstream, rev: str, version: str, where: Path) -> Path:
    tree = export_tree(up.path, rev, where / "tree")
    wheel = build_wheel(tree / "src", "kvlite", version, where / "dist")
    site = where / "venv" / "site-packages"
    install_wheel(wheel, site)
    return site


@pytest.mark.parametrize(("kind", "with_commit"), [
    ("site-packages", True), ("site-packages", False), ("wheel", True), ("wheel", False),
    ("tree", False),
])
@pytest.mark.slow
def test_installed_target_holding_part_of_the_stack(
    upstream: Upstream, tmp_path: Path, kind: str, with_commit: bool
) -> None:
    up = upstream
    stack_1_2(up)
    pr1 = up.repo.git("rev-parse", "pr1")
    version = f"1.0+g{pr1[:9]}" if with_commit else "1.0"
    site = _install(up, pr1, version, tmp_path / "built")
    where = {
        "site-packages": site,
        "wheel": tmp_path / "built" / "dist" / f"kvlite-{version}-py3-none-any.whl",
        "tree": tmp_path / "built" / "tree",
    }[kind]
    src = GitClone(up.path)
    plan = plan_stack(PlanRequest(ClonePRs(src, [2]), target=TargetSpec(kind, str(where))))
    assert statuses(plan) == {1: PlanStatus.PRESENT, 2: PlanStatus.CLEAN}
    assert plan.onto.kind == "installed" and plan.onto.start == pr1
    if with_commit:
        assert plan.onto.sha == pr1 and "history" in plan.prs[0].reason
    else:
        assert plan.onto.sha != pr1 and "every shipped hunk" in plan.prs[0].reason
    check_emitted(up, plan, [2], tmp_path / "emitted")


@pytest.mark.slow
def test_installed_files_edited_after_the_build_are_what_is_planned_onto(
    upstream: Upstream, tmp_path: Path
) -> None:
    up = upstream
    stack_1_2(up)
    site = _install(up, "v1.0", "1.0", tmp_path / "built")
    core = site / "kvlite" / "core.py"
    core.write_text(core.read_text().replace("VALUE_20 = 20\n", "VALUE_20 = 21  # local fix\n"))
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [2]), target=TargetSpec("site-packages", str(site))))
    assert statuses(plan) == {1: PlanStatus.CLEAN, 2: PlanStatus.CONFLICT}
    (conflict,) = plan.prs[1].conflicts
    assert conflict.path == CORE and conflict.with_onto


@pytest.mark.slow
def test_pr_holding_a_merge_commit_is_picked_as_one_diff(upstream: Upstream, tmp_path: Path) -> None:
    up = upstream
    up.repo.branch("pr13", "v1.0")
    up.repo.commit("PR 13: value 11", up.edit(CORE, "VALUE_11 = 11\n", "VALUE_11 = 110\n"))
    up.repo.git("-c", "commit.gpgsign=false", "merge", "--quiet", "--no-edit", "main")
    up.repo.commit("PR 13: triple", up.edit(UTIL, "2 * x", "3 * x"))
    up.repo.pr_ref(13)
    up.repo.git("checkout", "--quiet", "main")
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [13]), onto="v1.1"))
    (p,) = plan.prs
    assert p.status is PlanStatus.CLEAN
    assert [k.squash for k in p.picks] == [True]
    check_emitted(up, plan, [13], tmp_path)


@pytest.mark.slow
def test_installed_build_that_dropped_a_hunk_gets_it_picked_again(
    demo_build: DemoBuild, tmp_path: Path
) -> None:
    """The demo's fork build descends from #40898's head but lost #40727's runner hunk: history
    alone would call #40727 present; the audit of the installed files overrules it."""
    repo = demo_build.repo
    src = GitClone(repo.path)
    spec = TargetSpec("site-packages", str(demo_build.site_packages))
    plan = plan_stack(PlanRequest(ClonePRs(src, [40898]), target=spec))
    assert plan.onto.sha == repo.fork_build
    assert statuses(plan) == {40727: PlanStatus.CLEAN, 40898: PlanStatus.PRESENT}
    # its whole commits would conflict (in docs and tests, which #40898 changed after them):
    # just the file holding the missing hunk is picked again
    (fix,) = plan.prs[0].picks
    assert fix.paths == ("src/kvserve/runner.py",) and fix.commit == repo.heads[40727]
    assert "lacks 1 of its shipped hunk(s), in src/kvserve/runner.py" in plan.prs[0].reason
    for tree in (
        run_script(repo.path, plan_script(plan), tmp_path / "by-script" / "clone"),
        apply_patch(repo.path, plan.onto.start, combined_patch(src, plan), tmp_path / "by-patch" / "clone"),
    ):
        report = audit_tree(repo.path, [40898], tree)
        assert report.all_present, [(r.hunk.pr, r.hunk.path, r.status) for r in report.results]


def test_file_deleted_upstream_is_a_conflict_without_markers(upstream: Upstream) -> None:
    up = upstream
    up.pr(16, [(UTIL, "2 * x", "2 * x + 0")])
    up.repo.git("checkout", "--quiet", "main")
    up.repo.commit("Drop util", {UTIL: None})
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(up.path), [16]), onto="main"))
    (conflict,) = plan.prs[0].conflicts
    assert conflict.path == UTIL and conflict.with_onto and conflict.regions == ()
    assert conflict.message is not None and "modify/delete" in conflict.message
