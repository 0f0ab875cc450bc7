"""Huge files are diffed on the parts that differ, and the result is git's own whole-file diff."""

from __future__ import annotations

import random
import re
import subprocess
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import GitRepo
from prstack.diff.hunks import parse_diff
from prstack.sources.git.bigdiff import common_prefix, common_suffix, regions, trimmed_diff
from prstack.sources.git.changes import load_changes
from prstack.sources.git.diffs import BIG_FILE, _big_changes, diff_many, diff_texts
from prstack.sources.git.repo import GitClone

_FUNC = re.compile(rb"^(@@ [^@]* @@).*$", re.MULTILINE)


def table(n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    return ["TABLE = {"] + [f"    {i}: ({rng.randrange(10**6)}, '{i:x}'),  # row" for i in range(n)] + ["}"]


def text(lines: list[str], eol: bool = True) -> bytes:
    return ("\n".join(lines) + ("\n" if eol else "")).encode()


def without_function_names(diff: bytes) -> bytes:
    """git names the enclosing function after '@@ ... @@' by looking back from the hunk; on a
    part of the file it may find a nearer line or none, which is all that may differ."""
    return _FUNC.sub(rb"\1", diff)


def whole(a: bytes, b: bytes) -> bytes:
    diff = diff_texts(None, a, b)
    return without_function_names(diff[diff.index(b"@@ ") :])


def edited(lines: list[str], edits: list[tuple[int, str, str]]) -> list[str]:
    """Apply (line, kind, text) edits from the bottom up: kind 'sub', 'ins' or 'del'."""
    out = list(lines)
    for at, kind, new in sorted(edits, reverse=True):
        if kind == "sub":
            out[at] = new
        elif kind == "ins":
            out[at:at] = [new, new + " (2)"]
        else:
            del out[at : at + 3]
    return out


CASES = {
    "two far-apart substitutions": [(6000, "sub", "    6000: (0, 'x'),  # revised"),
                                    (24000, "sub", "    24000: (1, 'y'),  # revised")],
    "insertions and deletions": [(100, "ins", "    'new',"), (9000, "del", ""),
                                 (15000, "ins", "    'more',"), (29000, "del", "")],
    "first and last lines": [(0, "sub", "TABLE = {  # changed"), (30001, "sub", "}  # end")],
    "neighbouring changes": [(12000, "sub", "a"), (12005, "sub", "b"), (12300, "ins", "c")],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_trimmed_diff_is_gits_whole_file_diff(name: str) -> None:
    old = table(30000)
    a, b = text(old), text(edited(old, CASES[name]))
    got = trimmed_diff(a, b, partial(diff_texts, None))
    assert got is not None, "the trimmed path was not taken"
    assert without_function_names(b"".join(got)) == whole(a, b)
    # it worked on parts: far less than the whole file went to git
    assert sum(r.a_end - r.a_start for r in regions(a, b)) < len(a) // 3


def test_no_newline_at_the_end() -> None:
    old = table(20000)
    a = text(old, eol=False)
    b = text([*old[:-1], "}  # closed"], eol=False)
    got = trimmed_diff(a, b, partial(diff_texts, None))
    assert got is not None
    assert b"\\ No newline at end of file" in b"".join(got)
    assert without_function_names(b"".join(got)) == whole(a, b)


@pytest.mark.parametrize("at", [2600, 3500, 4400])
def test_a_change_that_can_slide_far_is_placed_as_git_does(at: int) -> None:
    """A blank line added inside 2,000 blank lines can slide anywhere in the run: the answer is
    git's whole-file placement or a refusal (then the caller diffs the whole file), never another."""
    lines = [*table(5000)[:2500], *[""] * 2000, *table(5000, seed=2)[2500:]]
    a = text(lines)
    b = text([*lines[:at], "", *lines[at:]])
    got = trimmed_diff(a, b, partial(diff_texts, None))
    assert got is None or without_function_names(b"".join(got)) == whole(a, b)


def test_texts_that_differ_everywhere_are_not_trimmed() -> None:
    a = text([f"a{i}" for i in range(2000)])
    b = text([f"b{i}" for i in range(2000)])
    assert trimmed_diff(a, b, partial(diff_texts, None)) is None


def test_a_region_of_the_same_size_with_more_lines_shifts_the_next() -> None:
    """Found by the property below: "TABLE = {" -> "x" (8 bytes fewer) and two lines inserted
    (8 bytes more) leave the first region's size unchanged but its line count +2."""
    old = table(20000, seed=3)
    a, b = text(old), text(edited(old, [(0, "sub", "x"), (10, "ins", "x"), (7194, "sub", "x")]))
    got = trimmed_diff(a, b, partial(diff_texts, None))
    assert got is not None and without_function_names(b"".join(got)) == whole(a, b)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 19990), st.sampled_from(["sub", "ins", "del"]),
                          st.sampled_from(["x", "    1: (1, '1'),  # row", "}"])),
                min_size=1, max_size=6, unique_by=lambda e: e[0] // 10))
@pytest.mark.slow
def test_random_edits_give_gits_diff(edits: list[tuple[int, str, str]]) -> None:
    old = table(20000, seed=3)
    a, b = text(old), text(edited(old, edits))
    got = trimmed_diff(a, b, partial(diff_texts, None))
    if got is not None:  # refusing is allowed; a different answer is not
        assert without_function_names(b"".join(got)) == whole(a, b)


def test_diff_many_trims_huge_files_and_keeps_file_order(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    old = table(30000)
    base = repo.commit("base", {"pkg/a.py": "A = 1\n", "pkg/big.py": text(old).decode(),
                                "pkg/z.py": "Z = 1\n", "pkg/moved.py": "M = 1\n" * 50})
    head = repo.commit("change", {
        "pkg/a.py": "A = 2\n", "pkg/z.py": "Z = 2\n",
        "pkg/big.py": text(edited(old, CASES["insertions and deletions"])).decode(),
        "pkg/moved.py": None, "pkg/renamed.py": "M = 1\n" * 50,
    })
    second = repo.commit("again", {"pkg/big.py": text(edited(old, CASES["two far-apart substitutions"])).decode()})
    pairs = [(base, head), (head, second), (base, base)]
    trimmed = diff_many(repo.path, pairs, big_file=100_000)
    plain = diff_many(repo.path, pairs, big_file=10**12)
    assert [without_function_names(d) for d in trimmed] == [without_function_names(d) for d in plain]
    # the trimmed path was taken: git found no enclosing "TABLE = {" line within the parts
    assert trimmed[0] != plain[0] and trimmed[1] != plain[1]
    assert trimmed[2] == b""
    paths = list(dict.fromkeys(h.path for h in parse_diff(trimmed[0], 1)))
    assert paths == ["pkg/a.py", "pkg/big.py", "pkg/renamed.py", "pkg/z.py"]


def test_a_huge_file_stored_as_a_delta_is_read_with_its_base(tmp_path: Path) -> None:
    """Packed, one version of a huge file is a delta of the other: both are read from one git
    (delta first), and the diff is still git's own."""
    repo = GitRepo(tmp_path / "repo")
    old = table(30000)
    base = repo.commit("base", {"pkg/big.py": text(old).decode(), "pkg/a.py": "A = 1\n"})
    head = repo.commit("change", {"pkg/big.py": text(edited(old, CASES["two far-apart substitutions"])).decode(),
                                  "pkg/a.py": "A = 2\n"})
    repo.git("repack", "-adf", "-q")
    blobs = [repo.git("rev-parse", f"{rev}:pkg/big.py").strip() for rev in (base, head)]
    check = subprocess.run(["git", "-C", str(repo.path), "cat-file", "--batch-check=%(objectname) %(deltabase)"],
                           input="".join(f"{b}\n" for b in blobs), capture_output=True, text=True, check=True)
    deltas = dict(line.split() for line in check.stdout.splitlines())
    assert set(deltas.values()) & set(blobs), f"git stored neither as a delta: {deltas}"
    stdin = "".join(f"{repo.git('rev-parse', f'{rev}^{{tree}}').strip()} " for rev in (base, head)).strip() + "\n"
    (change,) = _big_changes(repo.path, stdin.encode(), 1, None, 100_000)
    assert len(change.reads) == 1 and set(change.reads[0]) == set(blobs)
    trimmed = diff_many(repo.path, [(base, head)], big_file=100_000)
    plain = diff_many(repo.path, [(base, head)], big_file=10**12)
    assert [without_function_names(d) for d in trimmed] == [without_function_names(d) for d in plain]
    assert trimmed != plain  # the trimmed path was taken


def test_a_stack_with_a_huge_file_loads_the_hunks_git_gives(tmp_path: Path) -> None:
    """Through the loader: a PR changing a 4 MB table among small files has the hunks of
    `git diff`, in its file order, the table's diffed in parts while the rest was parsed."""
    repo = GitRepo(tmp_path / "repo")
    old = table(130_000)
    assert len(text(old)) >= BIG_FILE
    base = repo.commit("base", {"pkg/a.py": "A = 1\n", "pkg/big.py": text(old).decode(),
                                "pkg/z.py": "Z = 1\n"})
    repo.branch("feature")
    head = repo.commit("change", {"pkg/a.py": "A = 2\n", "pkg/z.py": "Z = 2\n",
                                  "pkg/big.py": text(edited(old, CASES["insertions and deletions"])).decode()})
    repo.pr_ref(7)
    changes = load_changes(GitClone(repo.path), [7])
    expected = parse_diff(repo.git("diff", "-M", "--full-index", base, head).encode() + b"\n", 7)
    assert [(h.path, h.old_start, h.new_start, h.lines) for h in changes.hunks] == [
        (h.path, h.old_start, h.new_start, h.lines) for h in expected]
    assert [h.path for h in changes.hunks][:2] == ["pkg/a.py", "pkg/big.py"]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=300), st.binary(max_size=200_000).map(lambda x: x[:1] * len(x)),
       st.integers(0, 5))
def test_common_ends_are_exact(x: bytes, y: bytes, run: bytes, lo: int) -> None:
    """The chunked comparisons agree with a byte-by-byte count, across chunk borders too."""
    a, b = run + x + run, run + y + run
    limit = min(len(a), len(b)) - lo
    naive = 0
    while naive < limit and a[lo + naive] == b[lo + naive]:
        naive += 1
    assert common_prefix(a, b, lo, lo, max(0, limit)) == max(0, naive)
    naive = 0
    while naive < limit and a[len(a) - 1 - naive] == b[len(b) - 1 - naive]:
        naive += 1
    assert common_suffix(a, b, len(a), len(b), max(0, limit)) == max(0, naive)


def test_a_huge_binary_file_reads_as_git_says(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    blob = bytes(range(256)) * 2000
    base = repo.commit("base", {"data.bin": blob, "a.py": "A = 1\n"})
    head = repo.commit("change", {"data.bin": blob[:-1] + b"\x01", "a.py": "A = 2\n"})
    trimmed = diff_many(repo.path, [(base, head)], big_file=100_000)
    assert trimmed == diff_many(repo.path, [(base, head)], big_file=10**12)
    assert [h.change.value for h in parse_diff(trimmed[0], 1)] == ["modified", "binary"]
