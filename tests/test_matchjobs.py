"""Matching shared with a helper process gives the verdicts of matching alone, and survives the
helper's death; jobs are claimed from both ends, never one held in memory; a huge file diffed
while the rest is matched is judged in its place."""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import signal
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from conftest import GitRepo
from prstack.audit import audit, audit_stack
from prstack.hunks import parse_diff
from prstack.matchjobs import (
    SHARE_MIN_LINES,
    FileAt,
    FileJob,
    MatchHelper,
    claim_back,
    claim_front,
    run_jobs,
    shareable,
)
from prstack.models import FileChange, Hunk, HunkLine, HunkResult
from prstack.sources.git import GitSource
from prstack.sources.loader import load_stack, start_stack
from prstack.targets.base import Target, TargetSpec, open_target

BENCH = Path(__file__).resolve().parents[1] / "bench"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the helper is forked: Linux only")


def benchgen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchgen", BENCH / "benchgen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["benchgen"] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> object:
    """The bench's generator at a small scale: every status, relocations among them."""
    return benchgen().build(tmp_path_factory.mktemp("case") / "c", modules=120, units=8, prs=10,
                            files_per_pr=6, edits_per_file=4, big_mb=0)


def unhurried(file_at: FileAt) -> FileAt:
    """`file_at` a little slow, as a busy audit process is: the helper, on a loaded machine,
    surely claims some jobs before this process has claimed them all."""

    def slow(rev: str, path: str) -> bytes | None:
        time.sleep(0.002)
        return file_at(rev, path)

    return slow


def ready_helper(target: Target, source: GitSource) -> MatchHelper:
    """A helper done indexing (a question answered): it claims jobs as soon as they are shared,
    so both ends take some (else this process, faster to start, could take them all)."""
    helper = MatchHelper.start(target, source.path, source.env)
    assert helper is not None
    assert helper.find_moved([]) == []
    return helper


def verdicts(results: tuple[HunkResult, ...]) -> list[tuple[object, ...]]:
    return [(r.hunk.pr, r.hunk.path, r.hunk.old_start, r.status, r.installed_path, r.found_path,
             r.found_line, r.offset, r.fuzz, r.evidence) for r in results]


@linux_only
def test_a_helper_gives_the_verdicts_of_matching_alone(case: object) -> None:
    source = GitSource(case.repo)  # type: ignore[attr-defined]
    spec = TargetSpec("tree", path=case.tree)  # type: ignore[attr-defined]
    numbers = case.numbers  # type: ignore[attr-defined]
    alone = audit_stack(source, numbers, spec, helper=False)
    changes = load_stack(source, numbers)
    target = open_target(spec, (), ())
    helper = ready_helper(target, source)
    try:
        shared = audit(changes.prs, changes.hunks, target, source.tree_paths(changes.top_sha),
                       unhurried(source.file_at), source.prefetch_files, None, helper, source.holds)
    finally:
        helper.close()
    assert helper.answered > 0  # the helper judged a share of the files
    assert verdicts(shared.results) == verdicts(alone.results)
    truth = case.truth  # type: ignore[attr-defined]
    assert sum(t.status.value == "relocated" for t in truth.values()) >= 5
    relocated = [r for r in shared.results if r.status.value == "relocated"]
    assert relocated and all(r.found_path for r in relocated)  # found through the helper's index
    assert verdicts(audit_stack(source, numbers, spec, helper=True).results) == verdicts(alone.results)


@linux_only
def test_a_closed_helper_exits_and_is_reaped(case: object) -> None:
    source = GitSource(case.repo)  # type: ignore[attr-defined]
    helper = ready_helper(open_target(TargetSpec("tree", path=case.tree), (), ()), source)  # type: ignore[attr-defined]
    pid = helper.pid
    assert pid is not None
    helper.close()  # returns at once
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)  # (a zombie, not yet reaped, still answers)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        pytest.fail("the helper was not reaped")


@linux_only
def test_a_helper_that_dies_leaves_its_share_to_the_audit(case: object) -> None:
    source = GitSource(case.repo)  # type: ignore[attr-defined]
    spec = TargetSpec("tree", path=case.tree)  # type: ignore[attr-defined]
    numbers = case.numbers  # type: ignore[attr-defined]
    alone = audit_stack(source, numbers, spec, helper=False)
    changes = load_stack(source, numbers)
    target = open_target(spec, (), ())
    helper = MatchHelper.start(target, source.path, source.env)
    assert helper is not None and helper.pid is not None
    os.kill(helper.pid, signal.SIGKILL)
    try:
        shared = audit(changes.prs, changes.hunks, target, source.tree_paths(changes.top_sha),
                       source.file_at, source.prefetch_files, None, helper, source.holds)
    finally:
        helper.close()
    assert helper.answered == 0
    assert verdicts(shared.results) == verdicts(alone.results)


def job(name: str, lines: int, head_rev: str = "h") -> FileJob:
    hunk = Hunk(1, name, name, FileChange.MODIFIED, 1, lines, 1, lines,
                tuple(HunkLine(" ", f"line {i}") for i in range(lines)))
    return FileJob((hunk,), name, True, ("b", name), (head_rev, name))


def test_held_files_stay_here_and_a_small_audit_shares_nothing() -> None:
    jobs = [job(f"m{i}.py", 480) for i in range(10)]
    assert shareable(jobs, lambda key: False) == ([], list(range(10)))
    held = {("h", "m9.py"), ("b", "m7.py")}
    assert shareable(jobs, lambda key: key in held) == ([7, 9], [0, 1, 2, 3, 4, 5, 6, 8])
    small = [job("a.py", SHARE_MIN_LINES // 4), job("b.py", SHARE_MIN_LINES // 4)]
    assert shareable(small, lambda key: False) == ([0, 1], [])  # too little to be worth sending


@pytest.mark.parametrize("pattern", ["FFFBBB", "FBFBFBFB", "BBBBBBBF", "F", "B", ""])
def test_claims_from_both_ends_take_every_job_once(pattern: str) -> None:
    """Claims interleaved in any order take each job exactly once, and stop when they meet."""
    claims = multiprocessing.get_context("fork").RawArray("q", 2)
    claims[0], claims[1] = 0, 7
    front: list[int] = []
    back: list[int] = []
    for turn in pattern.ljust(20, "F" if pattern.endswith("F") else "B"):
        got = claim_front(claims) if turn == "F" else claim_back(claims)
        if got is not None:
            (front if turn == "F" else back).append(got)
    assert claim_front(claims) is None and claim_back(claims) is None
    assert sorted(front + back) == list(range(7))
    assert front == sorted(front) and back == sorted(back, reverse=True)
    assert not front or not back or max(front) < min(back)


@linux_only
def test_a_huge_file_diffed_while_the_rest_is_matched_is_judged_as_alone(tmp_path: Path) -> None:
    """A stack with a huge file: the audit matches the other files (here and in the helper)
    while the huge one is read and diffed, then judges it; verdicts and order as matching alone."""
    case = benchgen().build(tmp_path / "c", modules=120, units=8, prs=6, files_per_pr=6, edits_per_file=4,
                            big_mb=6)
    source = GitSource(case.repo)
    spec = TargetSpec("tree", path=case.tree)
    alone = audit_stack(source, case.numbers, spec, helper=False)
    source = GitSource(case.repo)
    loading = start_stack(source, case.numbers)
    assert not loading.complete  # the huge file's hunks come later
    ready = loading.ready
    target = open_target(spec, (), ())
    helper = ready_helper(target, source)
    try:
        shared = audit(ready.prs, ready.hunks, target, source.tree_paths(ready.top_sha),
                       unhurried(source.file_at), source.prefetch_files, None, helper, source.holds, later=loading)
    finally:
        helper.close()
    assert helper.answered > 0
    huge = {h.path for h in loading.finish().hunks} - {h.path for h in ready.hunks}
    assert huge
    assert verdicts(shared.results) == verdicts(alone.results)
    assert [r.hunk for r in shared.results] == list(loading.finish().hunks)
    assert verdicts(audit_stack(GitSource(case.repo), case.numbers, spec, helper=True).results) == verdicts(
        alone.results)
    on_huge = [r for r in shared.results if r.hunk.path in huge]
    assert on_huge
    for r in on_huge:
        assert r.status is case.truth[(r.hunk.pr, r.hunk.path, r.hunk.old_start, r.hunk.new_start)].status


def one_file_change(tmp_path: Path, base_text: bytes, head_text: bytes, target_text: bytes
                    ) -> tuple[GitRepo, str, str, tuple[Hunk, ...]]:
    """A repo changing m.py from `base_text` to `head_text`, a tree holding `target_text`."""
    repo = GitRepo(tmp_path / "repo")
    base = repo.commit("base", {"m.py": base_text})
    head = repo.commit("head", {"m.py": head_text})
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "m.py").write_bytes(target_text)
    hunks = tuple(parse_diff((repo.git("diff", "--full-index", base, head) + "\n").encode(), 1))
    assert hunks[0].old_blob and hunks[0].new_blob and len(hunks[0].old_blob) == 40
    return repo, base, head, hunks


def judged_by_blob_ids(tmp_path: Path, repo: GitRepo, hunks: tuple[Hunk, ...]
                       ) -> tuple[list[HunkResult], list[tuple[str, str]]]:
    """The verdicts of the file's job with its sides named by blob id, and the files read."""
    source = GitSource(repo.path)
    asked: list[tuple[str, str]] = []

    def file_at(rev: str, path: str) -> bytes | None:
        asked.append((rev, path))
        return source.file_at(rev, path)

    job = FileJob(hunks, "m.py", True, (hunks[0].old_blob or "", ""), (hunks[0].new_blob or "", ""))
    (results,) = run_jobs([job], open_target(TargetSpec("tree", path=tmp_path / "tree"), (), ()), file_at, None)
    return results, asked


@pytest.mark.parametrize(("target_text", "said"), [
    (b"a = 1\nb = 2\n", "missing"),      # the base itself: told by blob id
    (b"a = 1\r\nb = 2\r\n", "missing"),  # the base with CRLF endings: told by blob id of its LF form
    (b"a = 1\nb = 3\n", "applied"),      # the head: told by the head's text
    (b"a = 0\nb = 2\n", None),           # neither: matched hunk by hunk
])
def test_a_target_at_the_base_is_told_by_blob_id_without_reading_the_base(
        tmp_path: Path, target_text: bytes, said: str | None) -> None:
    repo, base, head, hunks = one_file_change(tmp_path, b"a = 1\nb = 2\n", b"a = 1\nb = 3\n", target_text)
    results, asked = judged_by_blob_ids(tmp_path, repo, hunks)
    assert (hunks[0].old_blob, "") not in asked  # the base never read
    if said is not None:
        assert [r.status.value for r in results] == [said]
        assert results[0].evidence.note and "identical to the PR's" in results[0].evidence.note
    else:
        assert results[0].status.value != "applied"
    # the same verdicts as with the base read in full
    source = GitSource(repo.path)
    target = open_target(TargetSpec("tree", path=tmp_path / "tree"), (), ())
    (plain,) = run_jobs([FileJob(hunks, "m.py", True, (base, "m.py"), (head, "m.py"))], target, source.file_at, None)
    assert [(r.status, r.evidence) for r in plain] == [(r.status, r.evidence) for r in results]


def test_a_repository_with_crlf_files_has_its_base_read(tmp_path: Path) -> None:
    """Where the head holds CRs, the target may differ from the base in line endings only: the
    base is read and compared as text."""
    repo, _, _, hunks = one_file_change(tmp_path, b"a = 1\r\nb = 2\r\n", b"a = 1\r\nb = 3\r\n",
                                        b"a = 1\nb = 2\n")  # the base, LF
    results, asked = judged_by_blob_ids(tmp_path, repo, hunks)
    assert (hunks[0].old_blob, "") in asked
    assert [r.status.value for r in results] == ["missing"]
    assert results[0].evidence.note == "file identical to the PR's base"
