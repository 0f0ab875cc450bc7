"""Release trees read from a real clone: the blob of each file at each release, from one stream
of what changed between releases, as git answers for each commit:path on its own."""

from __future__ import annotations

import subprocess

from conftest import GitRepo
from prstack.sources.git.repo import GitClone
from prstack.upkeep.trees import blob_ids, commits_touching


def _one_by_one(repo: GitRepo, rev: str, path: str) -> str | None:
    done = subprocess.run(["git", "-C", str(repo.path), "cat-file", "--batch-check=%(objectname) %(objecttype)"],
                          input=f"{rev}:{path}\n", capture_output=True, text=True, check=True)
    sha, _, kind = done.stdout.strip().partition(" ")
    return sha if kind == "blob" else None


def test_blob_ids_across_releases_equal_git_s_answer_per_release(git_repo: GitRepo) -> None:
    """Files added, changed, deleted, turned into a folder, a symbolic link, a name with a space
    and one with non-ASCII letters, across releases given out of history order: each release's
    blob of each path (None for no file) is what `git cat-file` says for that release alone."""
    r = git_repo
    r.commit("one", {"a.py": "a = 1\n", "keep.py": "k\n", "gone.py": "g\n", "dir": "a file first\n",
                     "with space.py": "s\n", "naïve.py": "n\n"})
    one = r.git("rev-parse", "HEAD")
    r.commit("two", {"a.py": "a = 2\n", "gone.py": None, "dir": None, "dir/inner.py": "i\n", "new.py": "n\n"})
    two = r.git("rev-parse", "HEAD")
    r.git("rm", "-q", "keep.py")
    (r.path / "keep.py").symlink_to("a.py")
    r.commit("three", {"with space.py": "s2\n", "naïve.py": "n2\n"})
    three = r.git("rev-parse", "HEAD")
    paths = ["a.py", "keep.py", "gone.py", "dir", "dir/inner.py", "new.py", "with space.py", "naïve.py", "never.py"]
    commits = [three, one, two, one]
    names = [(c, p) for c in commits for p in paths]
    got = blob_ids(GitClone(r.path), names)
    assert got == [_one_by_one(r, c, p) for c, p in names]
    assert got[paths.index("gone.py")] is None and got[len(paths) + paths.index("gone.py")] is not None
    assert sum(g is None for g in got) == 3 * 4  # never.py; gone.py and the folder dir, or dir/inner.py and new.py


def test_commits_touching_a_file_between_two_releases_oldest_first(git_repo: GitRepo) -> None:
    """Only the commits after the first release up to the second, that change the file, parents
    first; all of history when there is no release before."""
    r = git_repo
    r.commit("one", {"a.py": "1\n", "b.py": "1\n"})
    r.git("tag", "v1")
    first = r.commit("a2", {"a.py": "2\n"})
    r.commit("b2", {"b.py": "2\n"})
    second = r.commit("a3", {"a.py": "3\n"})
    r.git("tag", "v2")
    src = GitClone(r.path)
    assert commits_touching(src, "v1", "v2", ["a.py", "c.py"]) == {"a.py": [first, second]}
    assert len(commits_touching(src, None, "v2", ["b.py"])["b.py"]) == 2
