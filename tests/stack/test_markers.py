"""Stack markers: pure parsing of prose and trailers."""

from __future__ import annotations

import pytest

from prstack.stack.markers import MarkerKind, commit_id, named_prs, parse_markers, parse_stack_list


@pytest.mark.parametrize(
    ("text", "pr"),
    [
        ("Depends on #40727", 40727),
        ("depends on: #12", 12),
        ("This is stacked on top of #7.", 7),
        ("Stacked on PR #8", 8),
        ("Based on https://github.com/o/r/pull/9 (please merge first)", 9),
        ("requires #10", 10),
        ("Builds on #11", 11),
    ],
)
def test_prose_markers(text: str, pr: int) -> None:
    [marker] = parse_markers(text)
    assert marker.kind is MarkerKind.DEPENDS_ON and marker.pr == pr


def test_trailers() -> None:
    text = (
        "Add the thing\n\nLonger text mentioning #5 without a verb.\n\n"
        "ghstack-source-id: 0a1b2c\n"
        "Pull Request resolved: https://github.com/o/r/pull/101\n"
        "stack-info: PR: https://github.com/o/r/pull/102, branch: me/stack/2\n"
        "commit-id: 8a3b1c2d\n"
    )
    markers = parse_markers(text)
    assert [(m.kind, m.pr) for m in markers] == [
        (MarkerKind.GHSTACK, 101),
        (MarkerKind.STACK_INFO, 102),
        (MarkerKind.COMMIT_ID, None),
    ]
    assert commit_id(text) == "8a3b1c2d"
    assert commit_id("Change-Id: I0123456789abcdef\n") == "I0123456789abcdef"
    assert commit_id("no trailer") is None


def test_named_prs_skips_own_and_deduplicates() -> None:
    named = named_prs(
        ["Depends on #1", None, "depends on #1\nPull Request resolved: x/pull/3", ""], 3
    )
    assert list(named) == [1]
    assert [m.text for m in named[1]] == ["Depends on #1", "depends on #1"]


def test_no_marker_in_plain_text() -> None:
    assert parse_markers("Fixes #12, closes #13, see #14") == []
    assert parse_markers(None) == []


GHSTACK_BODY = """Stack from [ghstack](https://github.com/ezyang/ghstack) (oldest at bottom):
* #103
* __->__ #102
* #101

Adds the thing.
"""
SPR_BODY = """**Stack**:
- #7
- #6 ⬅
- #5
- #4


⚠️ *Part of a stack created by [spr](https://github.com/ejoffe/spr).*
"""


def test_stack_lists_in_bodies() -> None:
    assert [(m.kind, m.pr) for m in parse_stack_list(GHSTACK_BODY, 102)] == [
        (MarkerKind.STACK_LIST, 101)
    ]
    assert [m.pr for m in parse_stack_list(SPR_BODY, 6)] == [5, 4]
    assert parse_stack_list(SPR_BODY, 4) == []
    assert parse_stack_list("Changes:\n- fixes #12\n- see #13\n", 12) == []
    assert [m.pr for m in parse_stack_list("Intro\n## STACK\n- #3\n- #2\n", 3)] == [2]  # a heading in any case
    assert [m.pr for m in parse_stack_list("DEPENDENCIES:\n- #9\n- #8\n", 9)] == [8]
    assert list(named_prs([SPR_BODY], 6)) == [5, 4]


def test_markers_read_again_are_the_same_and_a_callers_list_is_its_own() -> None:
    """Messages are parsed once and kept (a stacked PR's commits are its parents' too): what a
    caller does to the list it got never reaches the next caller."""
    message = "Fix the cache\n\nDepends on #12\nChange-Id: I0123456789abcdef\n"
    first = parse_markers(message)
    first.append(first[0])
    first[0] = first[1]
    again = parse_markers(message)
    assert [m.kind for m in again] == [MarkerKind.DEPENDS_ON, MarkerKind.COMMIT_ID]
    assert again[0].pr == 12 and commit_id(message) == "I0123456789abcdef"
    assert named_prs([message, message], own=13) == {12: [again[0]]}
