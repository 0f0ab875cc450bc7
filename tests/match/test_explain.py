"""A hunk's block found in another module is a move only when nothing else explains it: the
package at the PR's base, another audited hunk, or a rewritten place."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from helpers.matcher import judge, make_hunks
from prstack.match.file import Elsewhere, Explainer, PackageIndex, match_file
from prstack.models import FileChange, Hunk, HunkLine, HunkResult, HunkStatus

MOD, OTHER = "pkg/mod_a.py", "pkg/mod_b.py"
POOL = [f"    stmt_{k}(x)" for k in range(60)] + ["", "    pass"] * 4
LINE = st.sampled_from(POOL)


def text(lines: list[str]) -> str:
    return "".join(f"{x}\n" for x in lines)


def audit(hunks_a: list[Hunk], target_a: str, target_b: str, *, base_b: str,
          hunks_b: list[Hunk] = ()) -> list[HunkResult]:  # type: ignore[assignment]
    """The hunks of MOD judged against the target, the package at the base holding OTHER as
    `base_b` (and MOD as the diff's old side), OTHER's own audited hunks `hunks_b`."""
    package = PackageIndex(lambda: {MOD: target_a.encode(), OTHER: target_b.encode()})
    base = PackageIndex(lambda: {OTHER: base_b.encode()})
    explain = Explainer({MOD: hunks_a, OTHER: list(hunks_b)}, lambda pr: base)
    return match_file(hunks_a, target_a.encode(), installed_path=MOD, elsewhere=Elsewhere(package, explain))


@st.composite
def scenario(draw: st.DrawFn) -> dict[str, object]:
    a = draw(st.lists(LINE, min_size=4, max_size=40))
    b = draw(st.lists(LINE, min_size=4, max_size=40))
    n = draw(st.integers(0, 10**6))
    block = [f"    block_{n}_{i}(x, {i})" for i in range(draw(st.integers(3, 5)))]
    at = draw(st.integers(0, len(a)))
    at_b = draw(st.integers(0, len(b)))
    return {"a": a, "b": b, "block": block, "at": at, "at_b": at_b,
            "place": draw(st.sampled_from(["dropped", "rewritten"])),
            "copy": draw(st.sampled_from(["base", "other PR", "target only"])),
            "replace": draw(st.booleans())}


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(scenario())
@example({"a": ["", "    stmt_0(x)", "    stmt_0(x)", "    stmt_0(x)"], "b": ["    stmt_0(x)"] * 4,
          "block": [f"    block_0_{i}(x, {i})" for i in range(5)], "at": 1, "at_b": 0, "place": "rewritten",
          "copy": "target only", "replace": False})
@pytest.mark.slow
def test_a_copied_block_never_makes_a_dropped_or_rewritten_hunk_present(case: dict[str, object]) -> None:
    a, b, block = list(case["a"]), list(case["b"]), list(case["block"])  # type: ignore[call-overload]
    at, at_b = int(case["at"]), int(case["at_b"])  # type: ignore[call-overload]
    removed = a[at : at + 1] if case["replace"] and at < len(a) else []
    head_a = a[:at] + block + a[at + len(removed):]
    b_copy = b[:at_b] + block + b[at_b:]
    if case["copy"] == "target only" and (case["place"] == "dropped" or not 0 < at < len(a) - 1
                                          or not a[at - 1].strip()):
        # (a drop plus an unexplained copy is a move: tested below; so is a place at either
        # end of the file or after a blank line, where the other line put there cannot be told
        # from an unrelated line added beside a dropped hunk)
        case["copy"] = "base"
    base_b = text(b_copy) if case["copy"] == "base" else text(b)
    hunks_b = make_hunks(text(b), text(b_copy), path=OTHER, pr=2) if case["copy"] == "other PR" else []
    if case["place"] == "dropped":
        target_a = a
    else:
        target_a = [*a[:at], f"    rewritten_{at}(y)", *a[at + len(removed):]]
    hunks_a = make_hunks(text(a), text(head_a), path=MOD, pr=1)
    results = audit(hunks_a, text(target_a), text(b_copy), base_b=base_b, hunks_b=hunks_b)
    assert not any(r.status in (HunkStatus.APPLIED, HunkStatus.RELOCATED) for r in results), (
        [(r.status, r.evidence.note) for r in results])


BLOCK = ["    log.debug('enter %s', self.name)", "    metrics.incr('calls.' + self.kind)",
         "    self.trail.append((self.name, clock()))"]
A = [f"    stmt_{k}(x)" for k in range(12)]
B = [f"    other_{k}(x)" for k in range(12)]
HEAD_A = A[:6] + BLOCK + A[6:]
COPY_B = B[:3] + BLOCK + B[3:]


def test_dropped_hunk_with_an_unexplained_copy_elsewhere_is_relocated() -> None:
    (result,) = audit(make_hunks(text(A), text(HEAD_A), path=MOD), text(A), text(COPY_B), base_b=text(B))
    assert result.status is HunkStatus.RELOCATED
    assert (result.found_path, result.found_line) == (OTHER, 4)
    assert result.evidence.normalisation is None


def test_a_copy_there_at_the_base_is_not_a_move_and_the_note_says_why() -> None:
    (result,) = audit(make_hunks(text(A), text(HEAD_A), path=MOD), text(A), text(COPY_B),
                      base_b=text(COPY_B))
    assert result.status is HunkStatus.MISSING
    assert result.evidence.note is not None
    assert f"the same text is in {OTHER}:4, explained by the base; not counted" in result.evidence.note


def test_a_copy_another_pr_put_there_is_not_a_move() -> None:
    other = make_hunks(text(B), text(COPY_B), path=OTHER, pr=7)
    (result,) = audit(make_hunks(text(A), text(HEAD_A), path=MOD), text(A), text(COPY_B),
                      base_b=text(B), hunks_b=other)
    assert result.status is HunkStatus.MISSING
    assert "explained by #7; not counted" in (result.evidence.note or "")


def test_a_later_unexplained_copy_still_counts_as_the_move() -> None:
    """The first place is explained by #7; a second copy in a third file is the move."""
    third = "pkg/mod_c.py"
    other = make_hunks(text(B), text(COPY_B), path=OTHER, pr=7)
    hunks = make_hunks(text(A), text(HEAD_A), path=MOD)
    package = PackageIndex(lambda: {MOD: text(A).encode(), OTHER: text(COPY_B).encode(),
                                    third: text(["x = 1", *BLOCK]).encode()})
    explain = Explainer({MOD: hunks, OTHER: other}, lambda pr: PackageIndex(lambda: {}))
    (result,) = match_file(hunks, text(A).encode(), installed_path=MOD, elsewhere=Elsewhere(package, explain))
    assert (result.status, result.found_path, result.found_line) == (HunkStatus.RELOCATED, third, 2)


def test_a_rewritten_place_is_diverged_even_with_an_unexplained_copy() -> None:
    head = A[:6] + BLOCK + A[7:]  # (replaces stmt_6)
    target = [*A[:6], "    something_else(y, z)", *A[7:]]
    (result,) = audit(make_hunks(text(A), text(head), path=MOD), text(target), text(COPY_B), base_b=text(B))
    assert result.status is HunkStatus.DIVERGED


def test_relocated_names_the_normalisation_its_match_used() -> None:
    loose = [line.replace("'", '"') for line in BLOCK]
    copy = B[:3] + loose + B[3:]
    (result,) = audit(make_hunks(text(A), text(HEAD_A), path=MOD), text(A), text(copy), base_b=text(B))
    assert result.status is HunkStatus.RELOCATED
    assert result.evidence.normalisation == "quotes"


# -- notes and normalisations say only what is true ----------------------------

NUMBERS = [f"value_{i} = compute({i})" for i in range(30)]


def test_a_diverged_note_names_an_added_line_the_file_holds_elsewhere() -> None:
    head = [*NUMBERS[:10], "value_10 = fresh(10)", "value_10b = fresh(11)", *NUMBERS[11:]]
    target = [*NUMBERS[:10], "unrelated = 1", *NUMBERS[11:25], "value_10 = fresh(10)", *NUMBERS[25:]]
    (result,) = judge(text(NUMBERS), text(head), text(target))
    assert result.status is HunkStatus.DIVERGED
    note = result.evidence.note or ""
    assert "none of the added lines are there" not in note
    assert "1 of them is in the file verbatim, elsewhere in the file (first at line 26)" in note
    assert target[25] == "value_10 = fresh(10)"
    assert result.evidence.normalisation is None  # (every line compared was the same, verbatim)


def test_a_region_verdict_names_a_normalisation_only_when_a_line_needed_it() -> None:
    head = [*NUMBERS[:10], "value_10 = fresh(10)", *NUMBERS[11:14], "value_14 = fresh(14)", *NUMBERS[15:]]
    partial = [*NUMBERS[:10], "value_10 = fresh(10)", *NUMBERS[11:]]
    (result,) = judge(text(NUMBERS), text(head), text(partial))
    assert result.status is HunkStatus.PARTIAL
    assert result.evidence.normalisation is None
    spaced = [line.replace(" = ", " =  ") if line.startswith("value_12") else line for line in partial]
    (result,) = judge(text(NUMBERS), text(head), text(spaced))
    assert result.status is HunkStatus.PARTIAL
    assert result.evidence.normalisation == "whitespace"


# -- applied: more than what was there at the base ---------------------------------------

K = ["    log.debug('enter')", "    metrics.incr('calls')", "    self.trail.append(1)"]
BODY = ["    a = 1", "    b = 2", "    c = 3"]
TAIL = ["    d = 4", "    e = 5", "    g = 6"]
G = ["", "def g():", *BODY, *K, *K, *TAIL]
DUP_BASE = ["def f():", *BODY, *K, *TAIL, *G]
DUP_HEAD = ["def f():", *BODY, *K, *K, *TAIL, *G]


def test_a_pure_addition_of_lines_already_there_needs_more_of_them_than_the_base() -> None:
    """The PR doubles f's block; g had it doubled at the base. With f rewritten or dropped, the
    doubled block matched in g (or f's one copy) is what was there before: missing."""
    for target in (["def f():", "    pass", *G], ["def f():", *BODY, "    x = 0", *K, *TAIL, *G]):
        (result,) = judge(text(DUP_BASE), text(DUP_HEAD), text(target), with_sides=True)
        assert result.status is HunkStatus.MISSING, target
        assert "was in the file 3 times before the PR" in (result.evidence.note or "")


def test_a_new_function_with_a_docstring_like_the_others_is_applied_where_the_others_changed() -> None:
    """The PR adds a function whose docstring has the `Args:` and `Returns:` lines every function
    of the file has; its `def` line is its own. A later release rewrote another function's
    docstring (no more `Args:` lines than the base had): the new function is there, applied."""
    doc = ['    """', "    Do it.", "", "    Args:", "        x (`int`): the input.", "", "    Returns:",
           "        `int`: the output.", '    """']
    old = ["def one(x):", *doc, "    return x", "", "", "def two(x):", *doc, "    return 2 * x"]
    new_fn = ["", "", "def check_if_peft_model(name):", *doc, "    return bool(name)"]
    release = ["def one(x):", '    """Do it."""', "    return x", *old[len(doc) + 2:], *new_fn]
    (result,) = judge(text(old), text(old + new_fn), text(release), with_sides=True)
    assert result.status is HunkStatus.APPLIED
    (result,) = judge(text(old), text(old + new_fn), text(old), with_sides=True)
    assert result.status is HunkStatus.MISSING


def test_a_pure_addition_of_repeated_lines_is_applied_when_the_target_holds_more() -> None:
    for target in (["def f():", *BODY, "    x = 0", *K, *K, *TAIL, *G], ["x = 1", "y = 2", *DUP_HEAD]):
        (result,) = judge(text(DUP_BASE), text(DUP_HEAD), text(target), with_sides=True)
        assert result.status is HunkStatus.APPLIED, target


REPLACED_BASE = ["def score(group):", "    kwargs = dict(", "        completions=group.completions,",
                 "        prompt=group.prompt,", "        prompts=[group.prompt] * len(group),",
                 "        ids=group.ids,", "        **group.extra,", "    )", "    return rewards(**kwargs)"]
REPLACED_HEAD = [*REPLACED_BASE[:3], "        prompts=group.prompts,", *REPLACED_BASE[5:]]


def test_replaced_lines_with_a_foreign_line_in_their_place_are_not_applied() -> None:
    """Two lines replaced by one: a target holding the new line and, where the removed lines
    were, a line of neither side (a commit of the PR's own taken back) was rewritten there."""
    target = [*REPLACED_BASE[:3], "        prompt=group.prompts[0],", *REPLACED_HEAD[3:]]
    (result,) = judge(text(REPLACED_BASE), text(REPLACED_HEAD), text(target), with_sides=True)
    assert result.status is HunkStatus.DIVERGED
    assert "1 other lines among them" in (result.evidence.note or "")
    (result,) = judge(text(REPLACED_BASE), text(REPLACED_HEAD), text(REPLACED_HEAD), with_sides=True)
    assert result.status is HunkStatus.APPLIED


def test_a_foreign_line_in_the_context_leaves_a_replacement_applied() -> None:
    """The same replacement with a line added later two lines after it, in the hunk's context:
    what patch would take as fuzz is no rewrite of the change."""
    target = [*REPLACED_HEAD[:5], "        seed=group.seed,", *REPLACED_HEAD[5:]]
    (result,) = judge(text(REPLACED_BASE), text(REPLACED_HEAD), text(target), with_sides=True)
    assert result.status is HunkStatus.APPLIED


def test_new_code_in_the_place_of_replaced_lines_leaves_the_replacement_applied() -> None:
    """A line unlike the removed ones where they were (code added there later, as a release
    does): the change is there, with more beside it."""
    target = [*REPLACED_BASE[:3], "        seed=group.seed,", *REPLACED_HEAD[3:]]
    (result,) = judge(text(REPLACED_BASE), text(REPLACED_HEAD), text(target), with_sides=True)
    assert result.status is HunkStatus.APPLIED


def test_the_lines_added_by_others_are_those_of_the_files_other_prs_as_the_file_grows() -> None:
    """A line counts as added by others for a PR when another PR's hunk of the file adds it (also
    when that PR adds it too), never for the line only the PR itself adds; hunks added to the file
    later count for the questions asked after them."""
    def hunk(pr: int, added: list[str]) -> Hunk:
        return Hunk(pr, MOD, MOD, FileChange.MODIFIED, 1, 1, 1, 1 + len(added),
                    (HunkLine(" ", "ctx"), *(HunkLine("+", t) for t in added)))

    hunks_at: dict[str, list[Hunk]] = {MOD: [hunk(1, ["  mine()", "both()"]), hunk(2, ["theirs()  ", "both()"])]}
    explain = Explainer(hunks_at)
    one, two = explain.added_by_others(1, MOD), explain.added_by_others(2, MOD)
    assert "theirs()" in one and "both()" in one and "mine()" not in one and "ctx" not in one
    assert "mine()" in two and "both()" in two and "theirs()" not in two
    assert "later()" not in explain.added_by_others(1, OTHER)
    hunks_at[MOD].append(hunk(3, ["later()"]))
    assert "later()" in explain.added_by_others(1, MOD)
    assert "later()" not in explain.added_by_others(3, MOD)
