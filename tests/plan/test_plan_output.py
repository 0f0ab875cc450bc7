"""The plan's pure parts, its renderers (every format, escaped), the command line, and the demo
repository with a third PR that conflicts with #40727."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from conftest import GitRepo
from helpers.plan import CORE, Upstream
from prstack.cli import main
from prstack.demo.fixture import DemoRepo, build_repo, git
from prstack.models import FileChange, Hunk, HunkLine, PullRequest
from prstack.plan import (
    Conflict,
    Onto,
    Plan,
    PlanStatus,
    PRPlan,
    conflict_regions,
    fits,
    plan_order,
)
from prstack.plan.planning import PlanRequest, plan_stack
from prstack.render import OutputFormat
from prstack.render.plan import plan_script, render_plan
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone

# -- pure parts -------------------------------------------------------------------------------


def test_order_is_stack_order_then_the_order_given() -> None:
    parents = {1: (), 2: (1,), 3: (2,), 7: (), 5: ()}
    assert plan_order([7, 3, 5], parents) == (7, 1, 2, 3, 5)
    assert plan_order([5, 3, 7], parents) == (5, 1, 2, 3, 7)
    assert plan_order([3, 2], parents) == (1, 2, 3)
    # a cycle (contradictory evidence) does not loop forever
    assert set(plan_order([1], {1: (2,), 2: (1,)})) == {1, 2}


@given(st.data())
@pytest.mark.slow
def test_order_puts_parents_first_and_keeps_the_given_order(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 8))
    numbers = list(range(100, 100 + n))
    # a random forest: each PR's parent is an earlier one (or none)
    parents = {num: (() if i == 0 or data.draw(st.booleans()) else
                     (numbers[data.draw(st.integers(0, i - 1))],))
               for i, num in enumerate(numbers)}
    requested = data.draw(st.permutations(numbers))
    order = plan_order(requested, parents)
    assert sorted(order) == numbers
    for child, above in parents.items():
        assert all(order.index(p) < order.index(child) for p in above)
    # PRs that stand alone (no parent, no child) keep the order given
    alone = [r for r in requested if not parents[r] and all(r not in ps for ps in parents.values())]
    assert [r for r in order if r in alone] == alone
    # and the first PR given goes on right after what it builds on
    first = requested[0]
    assert order.index(first) == len({first, *_closure(first, parents)}) - 1


def _closure(number: int, parents: dict[int, tuple[int, ...]]) -> set[int]:
    seen: set[int] = set()
    todo = list(parents[number])
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo += parents[n]
    return seen


def test_conflict_regions_are_the_marker_lines() -> None:
    text = b"a\n<<<<<<< ours\nx\n||||||| base\ny\n=======\nz\n>>>>>>> theirs\nb\n<<<<<<< o\n=======\n>>>>>>> t\n"
    assert conflict_regions(text) == ((2, 8), (10, 12))
    assert conflict_regions(None) == ()
    assert conflict_regions(b"no markers\n") == ()


def _hunk(lines: list[tuple[str, str]], old_path: str | None = "f.py") -> Hunk:
    body = tuple(HunkLine(k, t) for k, t in lines)  # type: ignore[arg-type]
    return Hunk(1, "f.py", old_path, FileChange.MODIFIED, 1, 2, 1, 2, body)


def test_fits_needs_the_whole_pre_image_in_one_block() -> None:
    h = _hunk([(" ", "a"), ("-", "b"), ("+", "B")])
    assert fits(h, b"x\na\nb\ny\n")
    assert fits(h, b"a\r\nb\r\n")
    assert not fits(h, b"a\nc\nb\n")
    assert not fits(h, None)
    assert fits(_hunk([("+", "new")], old_path=None), None)


# -- renderers --------------------------------------------------------------------------------

EVIL = "[bold red]x[/] \x1b[31mred\x1b[0m | `` <b>"


def evil_plan() -> Plan:
    pr1 = PullRequest(1, "a" * 40, "b" * 40, title=EVIL)
    pr2 = PullRequest(2, "c" * 40, "a" * 40, title=EVIL, depends_on=(1,))
    hunk = Hunk(2, EVIL, EVIL, FileChange.MODIFIED, 3, 1, 3, 1,
                (HunkLine("-", EVIL), HunkLine("+", EVIL + "!")))
    conflict = Conflict(EVIL, "c" * 40, ((3, 9),), (hunk,), with_onto=True, with_prs=(1,),
                        message=f"CONFLICT (content): Merge conflict in {EVIL}")
    onto = Onto("ref", EVIL, "d" * 40, "e" * 40, "d" * 40)
    return Plan(onto, (
        PRPlan(pr1, PlanStatus.PRESENT, EVIL),
        PRPlan(pr2, PlanStatus.CONFLICT, EVIL, conflicts=(conflict,)),
    ), "e" * 40)


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_every_format_renders_and_is_escaped(fmt: OutputFormat) -> None:
    rendered = render_plan(evil_plan(), fmt)
    if isinstance(rendered, str):
        out = rendered
    else:
        console = Console(record=True, width=100, force_terminal=True)
        console.print(rendered)
        out = console.export_text(styles=False)
    assert "\x1b[31m" not in out
    if fmt is OutputFormat.JSON:
        data = json.loads(out)
        assert data["schema"] == "prstack.plan/1" and data["clean"] is False
        assert data["prs"][1]["conflicts"][0]["regions"] == [[3, 9]]
    elif fmt is OutputFormat.MARKDOWN:
        outside_code = "".join(out.split("````")[::2])  # inside a fence, text is literal
        assert "<b>" not in outside_code and "&lt;b&gt;" in outside_code
    else:
        assert "[bold red]x[/]" in out  # shown as text, never parsed as markup


def test_script_quotes_nothing_from_untrusted_text_into_commands() -> None:
    script = plan_script(evil_plan())
    commands = [line for line in script.splitlines() if line and not line.startswith("#")]
    assert all(EVIL not in line for line in commands)
    assert "\x1b" not in script


# -- the command line -------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_exit_codes_and_emitted_files(git_repo: GitRepo, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    up = Upstream(git_repo)
    up.pr(1, [(CORE, "VALUE_05 = 5\n", "VALUE_05 = 50\n")])
    up.pr(2, [(CORE, "VALUE_05 = 5\n", "VALUE_05 = 5000\n")])
    refs_before = up.repo.git("for-each-ref")
    script, patch = tmp_path / "apply.sh", tmp_path / "combined.patch"
    args = ["plan", "1", "--git", str(up.path), "--onto", "v1.1"]
    assert main([*args, "--emit-script", str(script), "--emit-patch", str(patch), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["clean"] and data["prs"][0]["status"] == "clean"
    assert "git cherry-pick -x" in script.read_text()
    # main's work tree is v1.1: the patch applies there (checked only, nothing written)
    check = subprocess.run(["git", "-C", str(up.path), "apply", "--check", str(patch)], capture_output=True)
    assert check.returncode == 0, check.stderr
    assert b"+VALUE_05 = 50" in patch.read_bytes()
    assert main(["plan", "1", "2", "--git", str(up.path), "--onto", "v1.1", "--format", "markdown"]) == 1
    assert "**conflict**" in capsys.readouterr().out
    assert main(["plan", "1", "--git", str(up.path), "--onto", "no-such-tag"]) == 2
    assert "no-such-tag" in capsys.readouterr().err
    assert main(["plan", "1", "--git", str(up.path)]) == 2
    assert "--onto REF" in capsys.readouterr().err
    assert main(["plan", "1", "--git", str(up.path), "--onto", "v1.1", "--tree", str(tmp_path)]) == 2
    assert main(["plan", "1", "--onto", "v1.1"]) == 2
    # the user's work tree, index and branches are untouched
    assert up.repo.git("status", "--porcelain") == ""
    assert up.repo.git("rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert up.repo.git("for-each-ref") == refs_before


# -- the demo repository with a conflicting third PR ------------------------------------------

RUNNER = "src/kvserve/runner.py"


def demo_with_conflict(dest: Path) -> DemoRepo:
    """The demo's repository plus PR #41703, which renames the cache slots on the very line
    #40727 fixes (the runner's cache_key)."""
    repo = build_repo(dest)
    git(repo.path, "checkout", "--quiet", "-b", "slot-names", repo.fork_point)
    runner = (repo.path / RUNNER).read_text()
    (repo.path / RUNNER).write_text(runner.replace('return f"kv.{layer_id}"', 'return f"kv/{layer_id:03d}"'))
    git(repo.path, "-c", "commit.gpgsign=false", "commit", "--quiet", "-am",
        "Name cache slots kv/NNN so they sort")
    git(repo.path, "update-ref", "refs/pull/41703/head", "HEAD")
    git(repo.path, "checkout", "--quiet", "main")
    return repo


@pytest.mark.slow
def test_demo_plan_shows_the_conflict_with_40727(tmp_path: Path) -> None:
    repo = demo_with_conflict(tmp_path / "upstream")
    plan = plan_stack(PlanRequest(ClonePRs(GitClone(repo.path), [40898, 41703]), onto="main"))
    assert [(p.pr.number, p.status) for p in plan.prs] == [
        (40727, PlanStatus.CLEAN), (40898, PlanStatus.CLEAN), (41703, PlanStatus.CONFLICT)]
    (conflict,) = plan.prs[2].conflicts
    assert conflict.path == RUNNER and conflict.with_prs == (40727,) and not conflict.with_onto
    assert [h.added for h in conflict.hunks] == [('        return f"kv/{layer_id:03d}"',)]
    console = Console(record=True, width=100)
    console.print(render_plan(plan, OutputFormat.TABLE))
    table = console.export_text()
    assert "#41703" in table and "conflict" in table and f"{RUNNER}:" in table
    markdown = render_plan(plan, OutputFormat.MARKDOWN)
    assert isinstance(markdown, str) and "with #40727" in markdown
    assert '\n-        return f"kv.{layer_id}"\n+        return f"kv/{layer_id:03d}"\n' in markdown
    assert "| Name cache slots kv/NNN so they sort (subject of the first commit) |" in markdown  # no title in a clone


def test_the_plan_table_gives_reasons_whole_and_cuts_long_diff_lines_at_80_columns() -> None:
    """Each PR's reason is a line of its own at the full width (not a cell of five narrow lines),
    and a conflict's diff line wider than the terminal is cut with "…", never wrapped."""
    reason = "conflicts in src/kvs/core.py (with #1): the onto-point rewrote these lines"
    long_line = "    value = compute(" + ", ".join(f"argument_{i}" for i in range(20)) + ")"
    pr1 = PullRequest(1, "a" * 40, "b" * 40, title="one")
    pr2 = PullRequest(2, "c" * 40, "a" * 40, title="two", depends_on=(1,))
    hunk = Hunk(2, "src/kvs/core.py", "src/kvs/core.py", FileChange.MODIFIED, 3, 1, 3, 1,
                (HunkLine("-", "    value = 0"), HunkLine("+", long_line)))
    conflict = Conflict("src/kvs/core.py", "c" * 40, ((3, 3),), (hunk,), with_onto=False, with_prs=(1,))
    plan = Plan(Onto("ref", "main", "d" * 40, "e" * 40, "d" * 40),
                (PRPlan(pr1, PlanStatus.CLEAN, "1 commit(s) pick cleanly"),
                 PRPlan(pr2, PlanStatus.CONFLICT, reason, conflicts=(conflict,))), "e" * 40)
    console = Console(record=True, width=80)
    console.print(render_plan(plan, OutputFormat.TABLE))
    lines = console.export_text().splitlines()
    assert f"#2: {reason}" in lines
    assert any("…" in line and "argument_3" in line for line in lines)
    assert not any("argument_19" in line for line in lines)


@pytest.mark.slow
def test_emit_patch_writes_no_file_when_the_plan_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                                 ) -> None:
    """A PR already in the onto-point leaves nothing to apply: --emit-patch writes no file (never a
    file of prose `git apply` refuses) and says so on stderr."""
    r = GitRepo(tmp_path / "repo")
    r.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": "x = 1\n"})
    r.branch("fix")
    r.commit("fix", {"pkg/mod.py": "x = 2\n"})
    r.pr_ref(3)
    r.git("checkout", "-q", "main")
    r.git("-c", "commit.gpgsign=false", "merge", "-q", "--no-ff", "-m", "Merge pull request #3", "fix")
    out = tmp_path / "missing.patch"
    code = main(["plan", "3", "--git", str(r.path), "--onto", "main", "--emit-patch", str(out)])
    assert code == 0
    assert not out.exists()
    assert "not written: the plan changes nothing" in capsys.readouterr().err
