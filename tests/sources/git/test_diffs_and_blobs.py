"""Git in bulk: diffs of many pairs from one process, files read in batches, each answer where it belongs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.errors import SourceError
from prstack.sources.git.blobs import BlobReader
from prstack.sources.git.diffs import PendingDiffs, diff_many


def test_diffs_come_back_in_order_with_empty_and_repeated_pairs(git_repo: GitRepo) -> None:
    base = git_repo.commit("base", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    head = git_repo.commit("head", {"a.py": "x = 2\n"})
    other = git_repo.commit("other", {"b.py": "y = 2\n", "c.py": "z = 1\n"})
    tree = git_repo.git("rev-parse", f"{head}^{{tree}}")
    got = diff_many(git_repo.path, [(base, head), (head, head), (head, other), (base, head),
                                    (tree, other)])
    expected = [git_repo.git("diff", "-M", "--full-index", a, b).encode() + b"\n"
                for a, b in [(base, head), (head, other)]]
    assert got[0] == got[3] == expected[0]
    assert got[1] == b""
    assert got[2] == got[4] == expected[1]  # a tree serves as a side as well as a commit


@pytest.mark.parametrize("read_size", [1, 7, 80, 81, 82, 83, 200])
@pytest.mark.slow
def test_diffs_split_the_same_however_git_s_output_is_read(
    git_repo: GitRepo, read_size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sections are handed over as git writes them: a header cut by a read (80-83 bytes cut
    one just before, inside or after its end) or empty sections between headers change nothing."""
    base = git_repo.commit("base", {"a.py": "x = 1\n" * 40, "b.py": "y = 1\n"})
    head = git_repo.commit("head", {"a.py": "x = 2\n" * 40})
    other = git_repo.commit("other", {"b.py": "y = 2\n", "c.py": "z = 1\n"})
    pairs = [(base, base), (base, head), (head, head), (head, head), (head, other), (base, other), (other, other)]
    whole = diff_many(git_repo.path, pairs)
    monkeypatch.setattr(PendingDiffs, "read_size", read_size)
    assert list(PendingDiffs(git_repo.path, pairs).sections()) == whole
    assert whole[0] == whole[2] == whole[3] == whole[6] == b"" and all(whole[i] for i in (1, 4, 5))


def test_diffs_are_read_once_and_a_failing_git_says_so(git_repo: GitRepo) -> None:
    base = git_repo.commit("base", {"a.py": "x = 1\n"})
    head = git_repo.commit("head", {"a.py": "x = 2\n"})
    pending = PendingDiffs(git_repo.path, [(base, head)])
    assert len(list(pending.sections())) == 1
    with pytest.raises(SourceError, match="already read"):
        list(pending.sections())
    blob = git_repo.git("rev-parse", f"{head}:a.py")
    loose = git_repo.path / ".git" / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"not zlib")  # the blob is corrupt: git stops half-way
    (git_repo.path / "a.py").unlink()  # (else git would read the checked-out copy instead)
    with pytest.raises(SourceError, match=r"diff-tree .* answered 0 of 2 diffs: .*unable to read"):
        list(PendingDiffs(git_repo.path, [(base, head), (head, base)]).sections())


def test_prefetched_files_are_served_as_often_as_asked(git_repo: GitRepo) -> None:
    head = git_repo.commit("head", {"a.py": "x = 1\n", "pkg/b.py": b"\xff\x00bytes\n"})
    reader = BlobReader(git_repo.path)
    reader.prefetch([(head, "a.py"), (head, "a.py"), (head, "pkg/b.py"), (head, "nope.py"),
                     (head, "pkg")])
    assert reader.read(head, "a.py") == b"x = 1\n"
    assert reader.read(head, "pkg/b.py") == b"\xff\x00bytes\n"
    assert reader.read(head, "a.py") == b"x = 1\n"
    assert reader.read(head, "a.py") == b"x = 1\n"  # beyond the prefetched count: asked directly
    assert reader.read(head, "nope.py") is None
    assert reader.read(head, "pkg") is None  # a tree is not a file
    blob = git_repo.git("rev-parse", f"{head}:a.py")
    assert reader.read_object(blob) == b"x = 1\n"
    reader.close()


def test_a_file_is_read_by_its_blob_id_with_an_empty_path(git_repo: GitRepo) -> None:
    head = git_repo.commit("head", {"a.py": "x = 1\n"})
    blob = git_repo.git("rev-parse", f"{head}:a.py").strip()
    reader = BlobReader(git_repo.path)
    reader.prefetch([(blob, ""), (head, "")])
    assert reader.read(blob, "") == b"x = 1\n"
    assert reader.read(head, "") is None  # a commit is not a file
    assert BlobReader(git_repo.path).read(blob, "") == b"x = 1\n"  # asked directly
    reader.close()


def test_prefetched_batches_add_up_and_odd_names_read_as_absent(git_repo: GitRepo) -> None:
    head = git_repo.commit("head", {"a.py": "x = 1\n", "b c.py": "y = 2\n"})
    reader = BlobReader(git_repo.path)
    reader.prefetch([(head, "a.py")])
    reader.prefetch([(head, "a.py"), (head, "b c.py"), (head, "gone d.py"), ("0" * 40, "")])
    assert [reader.read(head, "b c.py"), reader.read(head, "a.py"), reader.read(head, "gone d.py"),
            reader.read("0" * 40, "")] == [b"y = 2\n", b"x = 1\n", None, None]
    assert reader.read(head, "a.py") == b"x = 1\n"  # listed twice: kept for the second read
    assert reader._uses == {} and reader._data == {}  # (private: every prefetched text is handed over and dropped)
    assert reader.read(head, "gone d.py") is None  # asked directly: a name with a space that is missing
    reader.close()


def test_a_git_that_stops_answering_reads_as_absent(tmp_path: Path) -> None:
    """A partial clone that may not fetch makes cat-file exit; the files read as absent, the
    reader recovers for the next question."""
    upstream = GitRepo(tmp_path / "up")
    head = upstream.commit("head", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    upstream.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:none", upstream.path.as_uri(),
                    str(clone)], check=True)
    reader = BlobReader(clone, {"GIT_ALLOW_PROTOCOL": "none-allowed", "GIT_TERMINAL_PROMPT": "0"})
    reader.prefetch([(head, "a.py"), (head, "b.py")])
    assert reader.read(head, "a.py") is None
    assert reader.read(head, "b.py") is None
    assert reader.read(head, "missing.py") is None
    reader.close()


def test_a_prefetch_longer_than_one_write_serves_every_file_from_the_one_git(git_repo: GitRepo) -> None:
    """Hundreds of long names (more than one write to git holds): every file is served, in any
    order, and the git that answered them answers the files asked alone after them."""
    files = {f"pkg/{'deep/' * 20}module_{i:03}.py": f"x = {i}\n" for i in range(300)}
    head = git_repo.commit("head", files)
    reader = BlobReader(git_repo.path)
    reader.prefetch([(head, path) for path in files])
    git = reader._proc  # (private: the one long-lived git)
    assert [reader.read(head, path) for path in reversed(files)] == [t.encode() for t in reversed(files.values())]
    assert reader.read(head, "pkg/" + "deep/" * 20 + "module_007.py") == b"x = 7\n"  # asked alone
    assert reader._proc is git and git is not None and git.poll() is None
    reader.close()
