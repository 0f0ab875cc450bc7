"""The plainest git diffs are read in one pass into the very hunks unidiff's parse gives; every other
shape, and every diff that pass does not read whole, is left to unidiff's parse."""

from __future__ import annotations

import random
import subprocess
import sys
from itertools import pairwise

import pytest
from test_hunks import TRICKY_BODIES

from conftest import GitRepo
from prstack.diff import plain
from prstack.diff.hunks import _parsed, parse_diff
from prstack.diff.plain import _read, plain_files, plain_hunks
from prstack.errors import InputError
from prstack.models import Hunk
from prstack.sources.git.repo import GitClone


def _both(diff: str) -> tuple[list[Hunk] | None, list[Hunk] | str]:
    """The one-pass reading (None: left to unidiff) and unidiff's (or the error it gives)."""
    try:
        parsed: list[Hunk] | str = _parsed(diff, 4)
    except InputError as exc:
        parsed = str(exc)
    return plain_hunks(diff, 4), parsed


def _diffs(git_repo: GitRepo) -> list[str]:
    """Diffs git writes: text files added, deleted, changed (at the start, the end, with no final
    newline, emptied), and beside them renames, modes, binary files, quoted names, CRLF files."""
    body = "".join(f"line {i}\n" for i in range(40))
    commits = [git_repo.commit("base", {"m.py": body, "gone.py": "x = 1\n", "end.py": "a\nb", "empty.py": "",
                                        "moved.py": body, "blob.bin": b"\x00\x01", "crlf.py": "a\r\nb\r\n",
                                        "tool.sh": "echo\n", "sp ace.py": "s\n", "emptied.py": "z\n"})]
    git_repo.write({"moved.py": None, "new_home.py": body})
    (git_repo.path / "tool.sh").chmod(0o755)
    commits.append(git_repo.commit("one", {
        "m.py": "first\n" + body.replace("line 20\n", "line twenty\n") + "last\n", "gone.py": None,
        "end.py": "a\nc", "fresh.py": "def f():\n    return 1\n", "empty.py": "now\n", "blob.bin": b"\x00\x02",
        "crlf.py": "a\r\nc\r\n", "sp ace.py": "t\n", "emptied.py": "",
        "caf\u00e9.py": "s = '\u00e9'\n"}))
    commits.append(git_repo.commit("two", {"m.py": body, "fresh.py": "def f():\n    return 2\n",
                                           "end.py": "a\nc\n", "empty.py": None}))
    src = GitClone(git_repo.path)
    out = [src.objects.diff(a, b).decode("utf-8", "surrogateescape") for a in commits for b in commits if a != b]
    for a, b in pairwise(commits):
        for path in ("m.py", "gone.py", "end.py", "fresh.py", "empty.py", "emptied.py", "caf\u00e9.py"):
            out.append(git_repo.git("diff", "--no-color", a, b, "--", path) + "\n")
    return [d for d in out if d.strip()]


def test_the_one_pass_reads_the_hunks_unidiffs_parse_reads(git_repo: GitRepo) -> None:
    rng = random.Random(5)
    read = 0
    diffs = _diffs(git_repo) + list(TRICKY_BODIES.values())
    for diff in list(diffs):
        lines = diff.split("\n")
        for _ in range(30):  # (a line dropped, doubled or changed: a diff of another shape, or a broken one)
            at = rng.randrange(len(lines))
            edit = rng.choice([[], [lines[at], lines[at]], [" " + lines[at]], ["+" + lines[at]], [""],
                               [lines[at][:1]], [lines[at] + "\r"], ["\\ No newline at end of file"]])
            diffs.append("\n".join(lines[:at] + edit + lines[at + 1:]))
    for diff in diffs:
        plain, parsed = _both(diff)
        if plain is not None:
            read += 1
            assert plain == parsed, diff
    assert read > 40  # (the plain shapes are read in one pass)


@pytest.mark.parametrize("diff", [
    "diff --git a/a.py b/b.py\nsimilarity index 90%\nrename from a.py\nrename to b.py\n",
    "diff --git a/t.sh b/t.sh\nold mode 100644\nnew mode 100755\n",
    "diff --git a/x.bin b/x.bin\nindex 1234567..89abcde 100644\nBinary files a/x.bin and b/x.bin differ\n",
    'diff --git "a/t\\tb.py" "b/t\\tb.py"\nindex 1234567..89abcde 100644\n--- "a/t\\tb.py"\n+++ "b/t\\tb.py"\n'
    "@@ -1 +1 @@\n-a\n+b\n",
    "diff --git a/c.py b/c.py\nindex 1234567..89abcde 100644\n--- a/c.py\n+++ b/c.py\n@@ -1 +1 @@\n-a\r\n+b\r\n",
    "diff --git a/l b/l\nnew file mode 120000\nindex 0000000..89abcde\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+t\n",
    "--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-a\n+b\n",
])
def test_other_shapes_are_left_to_unidiff(diff: str) -> None:
    assert plain_hunks(diff, 4) is None
    assert parse_diff(diff, 4) == _parsed(diff, 4)


def test_a_plain_diff_naming_a_path_out_of_the_repository_is_refused() -> None:
    diff = "diff --git a/../up.py b/../up.py\nindex 1234567..89abcde 100644\n--- a/../up.py\n+++ b/../up.py\n" \
           "@@ -1 +1 @@\n-a\n+b\n"
    assert plain_hunks(diff, 4) is not None
    with pytest.raises(InputError, match="leaves the repository"):
        parse_diff(diff, 4)


def test_a_diff_read_again_is_not_read_again_until_parsed_and_each_pr_gets_its_own_hunks() -> None:
    """The count check and the parse of a patch's diff read it once: the same text asked again gets
    the files read for it (the same objects) until the parse takes them (they are kept no longer),
    and the hunks made of them name the PR asked for."""
    diff = ("diff --git a/m.py b/m.py\nindex 1234567..89abcde 100644\n--- a/m.py\n+++ b/m.py\n"
            "@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
    first = plain_files(diff)
    assert first is not None and plain_files(diff) is first
    assert [h.pr for h in plain_hunks(diff, 4) or []] == [4]
    assert diff not in _read.by_text
    assert [h.pr for h in plain_hunks(diff, 5) or []] == [5]
    assert plain_hunks(diff, 5) == _parsed(diff, 5)


def test_the_diffs_kept_read_stay_within_their_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Diffs read one after another keep at most READ_KEPT_CHARS characters of text between them
    (the least recently read go first)."""
    monkeypatch.setattr(plain, "READ_KEPT_CHARS", 2_000)
    diffs = [f"diff --git a/m{n}.py b/m{n}.py\nindex 1234567..89abcde 100644\n--- a/m{n}.py\n+++ b/m{n}.py\n"
             "@@ -1 +1 @@\n-a\n+b\n" for n in range(100)]
    for diff in diffs:
        assert plain_files(diff) is not None
        assert _read.size <= 2_000
    assert diffs[-1] in _read.by_text and diffs[0] not in _read.by_text


def test_the_plainest_diffs_are_read_without_importing_unidiff() -> None:
    """Reading a plain diff imports no unidiff (a fresh process tells); a rename, which only
    unidiff reads, imports it."""
    plain = "diff --git a/m.py b/m.py\nindex 1234567..89abcde 100644\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-a\n+b\n"
    renamed = "diff --git a/a.py b/b.py\nsimilarity index 100%\nrename from a.py\nrename to b.py\n"
    code = ("import sys\nfrom prstack.diff.hunks import parse_diff\nparse_diff(sys.argv[1], 1)\n"
            "print('unidiff' in sys.modules)")
    said = [subprocess.run([sys.executable, "-c", code, diff], capture_output=True, text=True, check=True).stdout
            for diff in (plain, renamed)]
    assert said == ["False\n", "True\n"]
