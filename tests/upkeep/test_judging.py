"""The upkeep's pure judgements: a hunk's landing across releases, an item's first release and its
note, the verdict from the candidate's statuses; and one judgement per distinct blob."""

from __future__ import annotations

import pytest

from conftest import GitRepo
from prstack.models import FileChange, Hunk, HunkLine, HunkResult, HunkStatus
from prstack.sources.git.repo import GitClone
from prstack.upkeep.carrying import Carried, UpkeepRequest, upkeep
from prstack.upkeep.judging import first_release, landing, verdict
from prstack.upkeep.values import Verdict

NAMES = ["v1", "v2", "v3", "v4"]
HUNK = Hunk(1, "a.py", "a.py", FileChange.MODIFIED, 1, 1, 1, 1, (HunkLine("-", "x = 1"), HunkLine("+", "x = 2")))


def _results(*statuses: HunkStatus) -> list[HunkResult]:
    return [HunkResult(HUNK, s) for s in statuses]


def test_landing_is_the_start_of_the_last_run_of_releases_holding_it() -> None:
    """Present in v2, gone in v3, back in v4: landed in v4, first seen in v2, reverted in v3."""
    lg = landing([False, True, False, True], NAMES)
    assert (lg.landed_in, lg.first_seen, lg.reverted_in) == ("v4", "v2", ("v3",))
    assert landing([False, True, True, False], NAMES).landed_in is None


def test_first_release_is_the_earliest_holding_every_hunk_and_says_when_they_landed_apart() -> None:
    a, b = landing([False, True, True, True], NAMES), landing([False, False, True, True], NAMES)
    first, note = first_release([a, b], NAMES)
    assert first == "v3" and note is not None and "1 in v2, 1 in v3" in note
    first, note = first_release([a, landing([False] * 4, NAMES)], NAMES)
    assert first is None and note is not None and "1 of 2 hunk(s) not in the newest release" in note


def test_first_release_stays_when_a_later_release_lost_a_hunk() -> None:
    """Both hunks in v2 and v3, one rewritten for v4: the first release is still v2, and the
    note names v4 and the hunk the newest release lacks."""
    first, note = first_release([landing([False, True, True, False], NAMES),
                                 landing([False, True, True, True], NAMES)], NAMES)
    assert first == "v2"
    assert note == ("all its hunks were in v2, v4 lacked some (taken back or rewritten); "
                    "1 of 2 hunk(s) not in the newest release (v4)")


def test_first_release_of_a_reverted_and_relanded_hunk_is_where_it_first_was() -> None:
    """In v2, taken back in v3, back in v4: first released in v2, and the note says the rest."""
    first, note = first_release([landing([False, True, False, True], NAMES)], NAMES)
    assert (first, note) == ("v2", "its hunk was in v2, v3 lacked it (taken back or rewritten), all back in v4")


def test_a_hunk_that_came_and_went_before_the_others_landed_is_named() -> None:
    """One hunk in v1, gone in v2, back in v3 with the other: v3 is the first holding both."""
    first, note = first_release([landing([True, False, True, True], NAMES),
                                 landing([False, False, True, True], NAMES)], NAMES)
    assert first == "v3" and note is not None
    assert "its hunks landed in different releases: 1 in v1, 1 in v3" in note
    assert "a hunk was in v1, not in v2, back in v3" in note
    first, note = first_release([landing([True, False, False, False], NAMES),
                                 landing([False, True, False, False], NAMES)], NAMES)
    assert first is None and note is not None and note.startswith("no release holds all its hunks at once")


def test_verdict_from_the_candidate_statuses() -> None:
    """retire, partly-upstream, keep (every pre-image there, or nothing shipped to rebase) and
    rebase (a region diverged)."""
    assert verdict(_results(HunkStatus.APPLIED, HunkStatus.RELOCATED)) is Verdict.RETIRE
    assert verdict(_results(HunkStatus.APPLIED, HunkStatus.DIVERGED)) is Verdict.PARTLY_UPSTREAM
    assert verdict(_results(HunkStatus.MISSING, HunkStatus.NOT_SHIPPED)) is Verdict.KEEP
    assert verdict(_results(HunkStatus.MISSING, HunkStatus.CONFLICT)) is Verdict.REBASE
    assert verdict(_results(HunkStatus.NOT_SHIPPED)) is Verdict.KEEP


@pytest.mark.slow
def test_a_blob_shared_by_many_tags_is_judged_once(git_repo: GitRepo) -> None:
    """Ten tags, the PR's file changed in none after the first: the candidate's verdict is one
    judgement, and the releases share it (none needs the matcher again)."""
    r = git_repo
    r.commit("base", {"a.py": "".join(f"v{i} = {i}\n" for i in range(20)), "b.py": "0\n"})
    r.branch("pr")
    r.commit("fix", {"a.py": "".join(f"v{i} = {i * (i != 5) or 'five'}\n" for i in range(20))})
    r.pr_ref(1)
    r.git("checkout", "-q", "main")
    for n in range(10):
        r.commit(f"other {n}", {"b.py": f"{n}\n"})
        r.git("tag", f"1.{n}")
    done = upkeep(UpkeepRequest(Carried((1,)), GitClone(r.path)))
    assert len(done.report.releases) == 10 and done.judgements == 1
    assert done.report.items[0].verdict is Verdict.KEEP
