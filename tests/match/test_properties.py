"""Property tests: for random files and random edits, the matcher says exactly what was applied."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helpers.matcher import apply_some, hunk_spans, judge, make_hunks
from prstack.match.judge import WEAK
from prstack.match.text import trivial
from prstack.models import Hunk, HunkStatus

POOL = [f"stmt_{k}(x)" for k in range(120)] + ["", "    pass", ")", "    return x"] * 6
LINE = st.sampled_from(POOL)


@st.composite
def edited(draw: st.DrawFn) -> tuple[str, str]:
    """A random file and a random edit of it (replacements, deletions, insertions)."""
    old = draw(st.lists(LINE, min_size=1, max_size=80))
    ops = draw(st.lists(st.sampled_from("kkkkkkkrdi"), min_size=len(old), max_size=len(old)))
    new: list[str] = []
    for line, op in zip(old, ops, strict=True):
        if op == "k":
            new.append(line)
        elif op == "r":
            new.append(draw(LINE.filter(lambda x, line=line: x != line)))
        elif op == "i":
            new += [line, draw(LINE)]
    if new == old or not new:
        new.append("stmt_final(x)")
    return "".join(f"{x}\n" for x in old), "".join(f"{x}\n" for x in new)


REPEATS = ("stmt_0(x)\n" * 4, "stmt_0(x)\n" * 5)  # one of many equal lines added: only counts tell


def test_one_more_of_many_equal_lines_is_told_by_the_counts() -> None:
    four, five = REPEATS
    assert [r.status for r in judge(four, five, four, with_sides=True)] == [HunkStatus.MISSING]
    assert [r.status for r in judge(four, five, five, with_sides=True)] == [HunkStatus.APPLIED]
    assert [r.status for r in judge(five, four, four, with_sides=True)] == [HunkStatus.APPLIED]
    assert [r.status for r in judge(five, four, five, with_sides=True)] == [HunkStatus.MISSING]


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(edited())
@pytest.mark.slow
def test_patched_file_is_all_applied(case: tuple[str, str]) -> None:
    old, new = case  # the audit always knows the file before and after the PR (git gives both)
    assert {r.status for r in judge(old, new, new, with_sides=True)} == {HunkStatus.APPLIED}


@SETTINGS
@given(edited())
@pytest.mark.slow
def test_unpatched_file_is_all_missing(case: tuple[str, str]) -> None:
    old, new = case
    assert {r.status for r in judge(old, new, old, with_sides=True)} == {HunkStatus.MISSING}


def both_images_near(target: str, hunks: list[Hunk], chosen: list[bool]) -> list[bool]:
    """Per hunk: whether its old and its new image both occur verbatim within WEAK lines of where
    it belongs in `target` (after the offsets of the chosen hunks before it)."""
    lines = target.splitlines()
    out, shift = [], 0
    for h, take in zip(hunks, chosen, strict=True):
        place = (h.old_start - 1 if h.old_lines else h.old_start) + shift
        near = []
        for image in (h.old_image, h.new_image):
            m = len(image)
            near.append(any(0 <= s <= len(lines) - m and lines[s : s + m] == list(image)
                            for s in range(place - WEAK, place + WEAK + 1)))
        out.append(all(near))
        shift += (h.new_lines - h.old_lines) if take else 0
    return out


def test_a_hunk_whose_images_both_fit_its_place_reads_missing() -> None:
    """The draw hypothesis found: one of five equal lines deleted, the file now four of them.
    The old image fits one line up, the new one at the place: ambiguous, so the safe answer."""
    old, new = "stmt_0(x)\n" * 5, "stmt_0(x)\n" * 4
    assert both_images_near(new, make_hunks(old, new), [True]) == [True]
    assert [r.status for r in judge(old, new, new)] == [HunkStatus.MISSING]
    assert [r.status for r in judge(old, new, new, with_sides=True)] == [HunkStatus.APPLIED]


def test_an_addition_after_repeated_lines_reads_the_same_however_far_unrelated_lines_move_it() -> None:
    """The draw hypothesis found: a line added after four equal lines, five unrelated lines
    inserted above. The bare context then also fits one line above the applied image, nearer to
    the place: that read "missing" (and "diverged" at four lines) where it read "applied" in place."""
    old = "stmt_0(x)\n" * 4
    new = old + "stmt_final(x)\n"
    for above in range(0, 3 * WEAK + 10):
        unrelated = "".join(f"unrelated_{j} = {j}\n" for j in range(above))
        assert [r.status for r in judge(old, new, unrelated + new)] == [HunkStatus.APPLIED], above
        assert [r.status for r in judge(old, new, unrelated + old)] == [HunkStatus.MISSING], above


@SETTINGS
@given(edited(), st.data())
@pytest.mark.slow
def test_random_subset_is_exactly_that_subset(case: tuple[str, str], data: st.DataObject) -> None:
    old, new = case
    n = len(make_hunks(old, new))
    chosen = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    target = apply_some(old, new, chosen)
    # Where both images of a hunk sit within a few lines of its place (a run of repeated lines),
    # the file itself cannot say which one is the hunk: no tool can tell, and the matcher then
    # answers "missing" (its safe side). Such draws say nothing about exactness; skip them.
    assume(not any(both_images_near(target, make_hunks(old, new), chosen)))
    results = judge(old, new, target)
    assert [r.status for r in results] == [
        HunkStatus.APPLIED if c else HunkStatus.MISSING for c in chosen
    ]


@SETTINGS
@given(edited(), st.data())
@pytest.mark.slow
def test_unrelated_lines_only_shift_offsets(case: tuple[str, str], data: st.DataObject) -> None:
    old, new = case
    # Lines like blank, `pass`, `)` are no evidence of where a hunk is: a hunk made only of them
    # cannot be placed once the lines around it moved (the matcher then never says applied).
    assume(all(any(not trivial(x) for x in image)
               for h in make_hunks(old, new) for image in (h.old_image, h.new_image)))
    spans = hunk_spans(old, new)
    n_old = old.count("\n")
    chosen = data.draw(st.lists(st.booleans(), min_size=len(spans), max_size=len(spans)))
    free = [i for i in range(n_old + 1) if not any(s < i < e for s, e in spans)]
    where = data.draw(st.lists(st.sampled_from(free), max_size=6))
    inserts: dict[int, list[str]] = {}
    for k, i in enumerate(where):
        inserts.setdefault(i, []).extend(f"unrelated_{k}_{j} = {j}" for j in range(1 + k * 3))
    plain = judge(old, new, apply_some(old, new, chosen))
    shifted = judge(old, new, apply_some(old, new, chosen, inserts=inserts))
    assert [r.status for r in shifted] == [r.status for r in plain]
    hunks = make_hunks(old, new)
    for (s, _), h, p, q in zip(spans, hunks, plain, shifted, strict=True):
        added = sum(len(v) for i, v in inserts.items() if i <= s)
        target = apply_some(old, new, chosen)
        image = "".join(f"{x}\n" for x in h.new_image)
        if p.status is HunkStatus.APPLIED and target.count(image) == 1:
            # where the post-image is found moves with the lines (when it is found only once)
            assert p.offset is not None
            assert q.offset is not None
            assert q.offset - p.offset == added
