"""`audit --patch` on bad and odd input: one line and exit 2, or a verdict per hunk; and each way to give patches."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import GitRepo
from prstack.cli import main

OLD = "".join(f"value_{i} = {i}\n" for i in range(12))
NEW = OLD.replace("value_5 = 5\n", "value_5 = 50\n")
DIFF = (
    "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
    "@@ -3,7 +3,7 @@\n value_2 = 2\n value_3 = 3\n value_4 = 4\n-value_5 = 5\n+value_5 = 50\n"
    " value_6 = 6\n value_7 = 7\n value_8 = 8\n"
)


def tree(tmp_path: Path, text: str | bytes = NEW, name: str = "pkg/mod.py") -> Path:
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "__init__.py").write_text("")
    p = root / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return root


def patch_file(tmp_path: Path, data: str | bytes, name: str = "fix.diff") -> str:
    p = tmp_path / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(p)


def audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(["audit", *args, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code in (0, 1) else captured.err


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, err = audit(capsys, *args)
    assert code == 2
    assert err.startswith("prstack: error: --patch") or err.startswith("prstack: error: the diff"), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return str(err)


def test_a_plain_diff_applied_and_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = patch_file(tmp_path, DIFF)
    code, data = audit(capsys, "--patch", f, "--tree", str(tree(tmp_path)))
    assert code == 0 and [h["status"] for h in data["hunks"]] == ["applied"]
    assert data["prs"][0]["number"] == 1 and data["prs"][0]["patch"] == f and data["prs"][0]["title"] is None
    code, data = audit(capsys, "--patch", f, "--tree", str(tree(tmp_path / "old", OLD)))
    assert code == 1 and [h["status"] for h in data["hunks"]] == ["missing"]


def test_not_a_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = patch_file(tmp_path, "just some notes\nabout a fix\n")
    err = refused(capsys, "--patch", notes, "--tree", str(tree(tmp_path)))
    assert "no diff in it" in err


def test_an_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "empty" in refused(capsys, "--patch", patch_file(tmp_path, ""), "--tree", str(tree(tmp_path)))


def test_a_truncated_hunk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cut = DIFF[: DIFF.index(" value_7")]
    assert "truncated" in refused(capsys, "--patch", patch_file(tmp_path, cut), "--tree", str(tree(tmp_path)))


def test_counts_that_do_not_match_the_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    more = DIFF.replace("@@ -3,7 +3,7 @@", "@@ -3,6 +3,6 @@")  # one context line more than counted
    err = refused(capsys, "--patch", patch_file(tmp_path, more), "--tree", str(tree(tmp_path)))
    assert "more lines than its header counts" in err
    fewer = DIFF.replace("@@ -3,7 +3,7 @@", "@@ -3,9 +3,9 @@") + "diff --git a/x.py b/x.py\n"
    assert "ends before its counts say" in refused(capsys, "--patch", patch_file(tmp_path, fewer), "--tree",
                                                   str(tree(tmp_path)))


@pytest.mark.parametrize("path", ["../outside.py", "pkg/../../outside.py", "/etc/passwd"])
def test_paths_that_leave_the_tree(path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evil = DIFF.replace("a/pkg/mod.py", f"a/{path}" if not path.startswith("/") else path).replace(
        "b/pkg/mod.py", f"b/{path}" if not path.startswith("/") else path)
    err = refused(capsys, "--patch", patch_file(tmp_path, evil), "--tree", str(tree(tmp_path)))
    assert "leaves the repository" in err and path.split("/")[-1] in err


def test_crlf_patch_reads_as_its_lf_twin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = patch_file(tmp_path, DIFF.replace("\n", "\r\n"))
    code, data = audit(capsys, "--patch", f, "--tree", str(tree(tmp_path)))
    assert code == 0 and [h["status"] for h in data["hunks"]] == ["applied"]
    assert data["hunks"][0]["path"] == "pkg/mod.py"
    code, data = audit(capsys, "--patch", f, "--tree", str(tree(tmp_path / "old", OLD)))
    assert code == 1 and [h["status"] for h in data["hunks"]] == ["missing"]


def test_non_utf8_bytes_are_matched_as_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = OLD.encode(), OLD.encode().replace(b"value_5 = 5", b"value_5 = '\xe9t\xe9'")
    diff = DIFF.encode().replace(b"+value_5 = 50", b"+value_5 = '\xe9t\xe9'")
    f = patch_file(tmp_path, diff)
    code, data = audit(capsys, "--patch", f, "--tree", str(tree(tmp_path, new)))
    assert code == 0 and [h["status"] for h in data["hunks"]] == ["applied"]
    code, data = audit(capsys, "--patch", f, "--tree", str(tree(tmp_path / "old", old)))
    assert code == 1 and [h["status"] for h in data["hunks"]] == ["missing"]
    wrong = new.replace(b"\xe9t\xe9", b"\xc3\xa9t\xc3\xa9")  # the same text in UTF-8 is other bytes
    code, data = audit(capsys, "--patch", f, "--tree", str(tree(tmp_path / "utf8", wrong)))
    assert [h["status"] for h in data["hunks"]] != ["applied"]


def _binary_repo(tmp_path: Path) -> tuple[GitRepo, bytes, bytes]:
    repo = GitRepo(tmp_path / "repo")
    old, new = b"\x89PNG\x00\x01\x02", b"\x89PNG\x00\x03\x04"
    repo.commit("base", {"pkg/__init__.py": "", "pkg/logo.png": old})
    repo.commit("New logo", {"pkg/logo.png": new})
    return repo, old, new


@pytest.mark.parametrize("how", [("diff", "HEAD~1", "HEAD"), ("diff", "--binary", "HEAD~1", "HEAD"),
                                 ("format-patch", "--stdout", "-1")], ids=["no-data", "git-binary", "mail"])
@pytest.mark.slow
def test_binary_patches_judged_by_blob_id(how: tuple[str, ...], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo, old, new = _binary_repo(tmp_path)
    f = patch_file(tmp_path, subprocess.run(["git", "-C", str(repo.path), *how], capture_output=True,
                                            check=True).stdout, "logo.patch")
    for content, want in ((new, "applied"), (old, "missing"), (b"\x89PNG other", "diverged")):
        root = tree(tmp_path / want, content, "pkg/logo.png")
        code, data = audit(capsys, "--patch", f, "--tree", str(root))
        assert [(h["change"], h["status"]) for h in data["hunks"]] == [("binary", want)], how
        assert code == (0 if want == "applied" else 1)


def _mails(tmp_path: Path) -> tuple[GitRepo, list[str]]:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": OLD, "pkg/b.py": OLD})
    one = repo.commit("Fix value 5 (#4242)", {"pkg/mod.py": NEW})
    two = repo.commit("Scale value 9\n\nSee https://github.com/o/n/pull/777",
                      {"pkg/b.py": OLD.replace("= 9\n", "= 90\n")})
    return repo, [one, two]


def test_a_mailbox_of_commits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, shas = _mails(tmp_path)
    mbox = subprocess.run(["git", "-C", str(repo.path), "format-patch", "--stdout", "HEAD~2"], capture_output=True,
                          check=True).stdout
    f = patch_file(tmp_path, mbox, "series-of-two.patch")
    root = tree(tmp_path, NEW)
    (root / "pkg" / "b.py").write_text(OLD)
    code, data = audit(capsys, "--patch", f, "--tree", str(root))
    assert code == 1
    [pr] = data["prs"]
    assert (pr["number"], pr["title"], pr["head_sha"], pr["patch"]) == (4242, "Fix value 5 (#4242)", shas[1], f)
    assert [(h["path"], h["commit"], h["status"]) for h in data["hunks"]] == [
        ("pkg/b.py", shas[1], "missing"), ("pkg/mod.py", shas[0], "applied")]


def test_number_from_a_pr_url_and_from_the_file_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = _mails(tmp_path)
    last = subprocess.run(["git", "-C", str(repo.path), "format-patch", "--stdout", "-1"], capture_output=True,
                          check=True).stdout
    root = tree(tmp_path, NEW)
    _, data = audit(capsys, "--patch", patch_file(tmp_path, last, "scale.patch"), "--tree", str(root))
    assert data["prs"][0]["number"] == 777
    _, data = audit(capsys, "--patch", patch_file(tmp_path, last, "31.patch"), "--tree", str(root))
    assert data["prs"][0]["number"] == 31


def test_stdin_and_a_stack_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(DIFF.encode())))
    second = ("--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -8,4 +8,4 @@\n value_7 = 7\n value_8 = 8\n"
              "-value_9 = 9\n+value_9 = 90\n value_10 = 10\n")
    code, data = audit(capsys, "--patch", "-", "--patch", patch_file(tmp_path, second), "--tree", str(tree(tmp_path)))
    assert [(p["number"], p["depends_on"], p["patch"], p["status"]) for p in data["prs"]] == [
        (1, [], "-", "applied"), (2, [1], str(tmp_path / "fix.diff"), "missing")]
    assert code == 1


def test_a_quilt_series(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "b-second.diff").write_text(DIFF)
    (patches / "a-first.diff").write_text(DIFF.replace("pkg/mod.py", "pkg/other.py"))
    (patches / "series").write_text("# applied in this order\nb-second.diff -p1\n\na-first.diff\n")
    root = tree(tmp_path)
    (root / "pkg" / "other.py").write_text(OLD)
    for given in (patches, patches / "series"):
        code, data = audit(capsys, "--patch", str(given), "--tree", str(root))
        assert [(p["patch"], p["status"]) for p in data["prs"]] == [
            (str(patches / "b-second.diff"), "applied"), (str(patches / "a-first.diff"), "missing")]
        assert code == 1
    (patches / "series").unlink()  # a folder without a series: its files in name order
    _, data = audit(capsys, "--patch", str(patches), "--tree", str(root))
    assert [p["patch"] for p in data["prs"]] == [str(patches / "a-first.diff"), str(patches / "b-second.diff")]


@pytest.mark.parametrize("extra", [["7"], ["--git", "."], ["--repo", "o/n"], ["--base", "main"]])
def test_patches_are_the_only_pr_source(extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(capsys, "--patch", patch_file(tmp_path, DIFF), *extra, "--tree", str(tree(tmp_path)))
    assert "both name the PRs" in err


def test_missing_file_and_twice_the_same_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(tree(tmp_path))
    assert "no such file" in refused(capsys, "--patch", str(tmp_path / "nope.diff"), "--tree", root)
    one = patch_file(tmp_path, DIFF, "5.diff")
    (tmp_path / "d").mkdir()
    err = refused(capsys, "--patch", one, "--patch", patch_file(tmp_path / "d", DIFF, "5.diff"), "--tree", root)
    assert "both PR #5" in err


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_a_bare_diff_is_named_by_its_file(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    patch_file(tmp_path, DIFF, "fix-\x1b[31mred.diff")
    monkeypatch.chdir(tmp_path)
    root = str(tree(tmp_path / "old", OLD))
    code = main(["audit", "--patch", "fix-\x1b[31mred.diff", "--tree", root, "--format", fmt])
    out = capsys.readouterr().out
    assert code == 1
    assert "(patch " in out and "fix-" in out and "\x1b[31m" not in out


def test_an_added_line_the_file_holds_elsewhere_is_noted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    add = ("--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -4,6 +4,7 @@\n value_3 = 3\n value_4 = 4\n value_5 = 5\n"
           "+reconnect(pool)\n value_6 = 6\n value_7 = 7\n value_8 = 8\n")
    f = patch_file(tmp_path, add)
    once = OLD.replace("value_5 = 5\n", "value_5 = 5\nreconnect(pool)\n")
    _, data = audit(capsys, "--patch", f, "--tree", str(tree(tmp_path / "once", once)))
    assert [(h["status"], h["note"]) for h in data["hunks"]] == [("applied", None)]
    twice = once + "reconnect(pool)\n"
    _, data = audit(capsys, "--patch", f, "--tree", str(tree(tmp_path / "twice", twice)))
    [hunk] = data["hunks"]
    assert hunk["status"] == "applied"
    assert "judged from the target alone" in hunk["note"] and "2 times, the patches add it 1" in hunk["note"]


def test_mail_signatures_and_a_subject_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = _mails(tmp_path)
    mail = subprocess.run(["git", "-C", str(repo.path), "format-patch", "--stdout", "-2"], capture_output=True,
                          check=True).stdout
    assert mail.endswith(b"\n-- \n2." + mail.rsplit(b"\n-- \n2.", 1)[1])
    github = mail.replace(b"\n-- \n", b"\n--\n").replace(b"Fix value 5", b"Fix \xe9t\xe9 value 5")
    root = tree(tmp_path, NEW)
    (root / "pkg" / "b.py").write_text(OLD)
    code, data = audit(capsys, "--patch", patch_file(tmp_path, github, "gh.patch"), "--tree", str(root))
    assert code == 1
    assert data["prs"][0]["title"] == "Fix \ufffdt\ufffd value 5 (#4242)"
    assert [h["status"] for h in data["hunks"]] == ["missing", "applied"]
