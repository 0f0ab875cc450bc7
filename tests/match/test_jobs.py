"""Matching jobs: a huge file diffed while the rest is matched is judged in its place; a file's
sides named by blob id are told without reading what is not needed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import GitRepo
from prstack.audit import audit_stack
from prstack.diff.hunks import parse_diff
from prstack.match.changes import TargetIndex, judge_changes
from prstack.match.jobs import FileJob, run_jobs
from prstack.models import Hunk, HunkResult
from prstack.sources.git.changes import load_changes, start_changes
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets.base import TargetSpec, open_target

BENCH = Path(__file__).resolve().parents[2] / "bench"


def benchgen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchgen", BENCH / "benchgen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["benchgen"] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def verdicts(results: tuple[HunkResult, ...]) -> list[tuple[object, ...]]:
    return [(r.hunk.pr, r.hunk.path, r.hunk.old_start, r.status, r.installed_path, r.found_path,
             r.found_line, r.offset, r.fuzz, r.evidence) for r in results]


@pytest.mark.slow
def test_a_huge_file_diffed_while_the_rest_is_matched_is_judged_as_alone(tmp_path: Path) -> None:
    """A stack with a huge file: the audit matches the other files while the huge one is read
    and diffed, then judges it; verdicts and order as matching the finished stack."""
    case = benchgen().build(tmp_path / "c", modules=120, units=8, prs=6, files_per_pr=6, edits_per_file=4,
                            big_mb=6)
    source = GitClone(case.repo)
    spec = TargetSpec("tree", path=case.tree)
    finished = load_changes(source, case.numbers)
    target = open_target(spec, (), ())
    alone = judge_changes(finished, target, ClonePRs(source, case.numbers),
                        TargetIndex.of(target, source.objects.tree_paths(finished.top_sha)))
    source = GitClone(case.repo)
    loading = start_changes(source, case.numbers)
    assert not loading.complete  # the huge file's hunks come later
    ready = loading.ready
    shared = judge_changes(ready, target, ClonePRs(source, case.numbers),
                         TargetIndex.of(target, source.objects.tree_paths(ready.top_sha)), later=loading)
    huge = {h.path for h in loading.finish().hunks} - {h.path for h in ready.hunks}
    assert huge
    assert verdicts(shared) == verdicts(alone)
    assert [r.hunk for r in shared] == list(loading.finish().hunks)
    assert verdicts(audit_stack(GitClone(case.repo), case.numbers, spec).results) == verdicts(alone)
    on_huge = [r for r in shared if r.hunk.path in huge]
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
    source = GitClone(repo.path)
    asked: list[tuple[str, str]] = []

    def file_at(rev: str, path: str) -> bytes | None:
        asked.append((rev, path))
        return source.objects.file_at(rev, path)

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
    source = GitClone(repo.path)
    target = open_target(TargetSpec("tree", path=tmp_path / "tree"), (), ())
    (plain,) = run_jobs([FileJob(hunks, "m.py", True, (base, "m.py"), (head, "m.py"))], target,
                        source.objects.file_at, None)
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
