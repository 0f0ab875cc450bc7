"""Diffs from real git repositories parsed into hunks: nothing a PR changes is dropped."""

from __future__ import annotations

import pytest

from conftest import GitRepo
from prstack.diff.hunks import added_line_numbers, parse_diff
from prstack.errors import InputError
from prstack.models import FileChange
from prstack.sources.git.repo import GitClone


def test_every_kind_of_file_change_is_represented(git_repo: GitRepo) -> None:
    base = git_repo.commit("base", {
        "pkg/keep.py": "a = 1\nb = 2\nc = 3\n",
        "pkg/gone.py": "x = 1\n",
        "pkg/old_name.py": "".join(f"line {i}\n" for i in range(20)),
        "pkg/tool.sh": "echo hi\n",
        "pkg/blob.bin": b"\x00\x01\x02",
        "pkg/crlf.py": "one\r\ntwo\r\n",
    })
    git_repo.write({"pkg/old_name.py": None, "pkg/new_name.py": "".join(f"line {i}\n" for i in range(20))})
    (git_repo.path / "pkg/tool.sh").chmod(0o755)
    head = git_repo.commit("change", {
        "pkg/keep.py": "a = 1\nb = 20\nc = 3\n",
        "pkg/gone.py": None,
        "pkg/fresh.py": "def f():\n    return 1\n",
        "pkg/blob.bin": b"\x00\x09\x02",
        "pkg/crlf.py": "one\r\nTWO\r\n",
        "pkg/caf\u00e9.py": "s = '\u00e9'\n",
    })
    src = GitClone(git_repo.path)
    hunks = parse_diff(src.objects.diff(base, head), 7)
    by_path = {h.path: h for h in hunks}
    assert by_path["pkg/keep.py"].change is FileChange.MODIFIED
    assert by_path["pkg/keep.py"].removed == ("b = 2",) and by_path["pkg/keep.py"].added == ("b = 20",)
    assert by_path["pkg/gone.py"].change is FileChange.DELETED and by_path["pkg/gone.py"].removed == ("x = 1",)
    assert by_path["pkg/fresh.py"].change is FileChange.ADDED and by_path["pkg/fresh.py"].old_path is None
    assert by_path["pkg/new_name.py"].change is FileChange.RENAMED
    assert by_path["pkg/new_name.py"].old_path == "pkg/old_name.py" and by_path["pkg/new_name.py"].lines == ()
    assert by_path["pkg/tool.sh"].change is FileChange.MODE
    assert by_path["pkg/blob.bin"].change is FileChange.BINARY
    assert by_path["pkg/blob.bin"].old_blob and by_path["pkg/blob.bin"].new_blob
    assert by_path["pkg/crlf.py"].added == ("TWO",)  # line endings are not part of the text
    assert by_path["pkg/caf\u00e9.py"].added == ("s = '\u00e9'",)
    assert all(h.pr == 7 for h in hunks)
    assert len(hunks) == 8


def test_added_line_numbers_follow_the_post_image() -> None:
    diff = "--- a/f.py\n+++ b/f.py\n@@ -10,3 +10,4 @@\n ctx\n-old\n+new1\n+new2\n ctx2\n"
    (hunk,) = parse_diff(diff, 1)
    assert added_line_numbers(hunk) == [11, 12]
    assert hunk.old_image == ("ctx", "old", "ctx2") and hunk.new_image == ("ctx", "new1", "new2", "ctx2")


@pytest.mark.parametrize("path", ["../etc/passwd", "/etc/passwd", "pkg/../../x.py"])
def test_paths_leaving_the_tree_are_refused(path: str) -> None:
    diff = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
    with pytest.raises(InputError, match="leaves the repository"):
        parse_diff(diff, 1)


def test_truncated_diff_is_bad_input() -> None:
    diff = "--- a/f.py\n+++ b/f.py\n@@ -1,5 +1,5 @@\n ctx\n-old\n"
    with pytest.raises(InputError, match="malformed or truncated"):
        parse_diff(diff, 3)


TRICKY_BODIES = {
    "crlf": "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+c\r\n \r\n",
    "bare line endings": "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n-b\n+c\n\n\r\n\r\r\n",
    "a CR inside a line's ending": "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-b\r\r\n+c\rd\n \rzz\n",
    "no newline markers": ("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
                           "+c\n\\ No newline at end of file\n"),
    "blank lines after the last hunk": "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-b\n+c\n\n\n",
    "no final newline": "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-b\n+c",
    "lengths left out, two files": ("--- a/f\n+++ b/f\n@@ -1 +1 @@ def f():\n-a\n+b\n@@ -5,2 +5 @@\n-x\n-y\n+z\n"
                                    "--- a/g\n+++ b/g\n@@ -0,0 +1,2 @@\n+@@ -1 +1 @@\n+--- a/h\n"),
}


@pytest.mark.parametrize("diff", TRICKY_BODIES.values(), ids=TRICKY_BODIES.keys())
def test_hunk_lines_are_read_as_unidiffs_full_parse_reads_them(diff: str) -> None:
    """Each hunk's lines (kind, text without its line ending) are those unidiff's full parse reads,
    its "no newline" markers and trailing blank lines left out, whatever the line endings."""
    from unidiff.patch import PatchSet

    def text(value: str) -> str:
        return value[:-2] if value.endswith("\r\n") else value[:-1] if value.endswith(("\n", "\r")) else value

    expected = [tuple((line.line_type, text(line.value)) for line in hunk if line.line_type in (" ", "-", "+"))
                for patched in PatchSet(diff) for hunk in patched]
    assert [tuple(h.lines) for h in parse_diff(diff, 1)] == expected
