"""Line provenance by replaying a PR's commits' diffs agrees with `git blame` on real repositories."""

from __future__ import annotations

import random
import subprocess

import pytest

from conftest import GitRepo
from prstack.diff.lineage import replay
from prstack.sources.git.changes import load_changes
from prstack.sources.git.repo import GitClone

BASE = [f"base line {i}" for i in range(30)]


def text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def blame(repo: GitRepo, base: str, head: str, path: str) -> dict[int, str]:
    """git blame's answer: line -> commit of base..head that wrote it (older lines left out)."""
    out = subprocess.run(["git", "-C", str(repo.path), "blame", "--porcelain", f"{base}..{head}", "--", path],
                         capture_output=True, text=True, check=True).stdout
    found: dict[int, str] = {}
    boundary: set[str] = set()
    current = ""
    for line in out.splitlines():
        parts = line.split()
        if line.startswith("\t") or not parts:
            continue
        if len(parts[0]) == 40 and len(parts) >= 3 and parts[2].isdigit():
            current = parts[0]
            found[int(parts[2])] = current
        elif parts[0] == "boundary":
            boundary.add(current)
    return {n: sha for n, sha in found.items() if sha not in boundary}


def replayed(repo: GitRepo, shas: list[str], path: str) -> dict[int, str]:
    owners = replay(GitClone(repo.path).objects.commit_diffs(shas)).owners.get(path, [])
    return {n: sha for n, sha in enumerate(owners, start=1) if sha is not None}


def test_added_modified_moved_and_renamed_lines_match_blame(git_repo: GitRepo) -> None:
    base = git_repo.commit("base", {"m.py": text(BASE), "other.py": text(BASE)})
    git_repo.branch("a")
    lines = list(BASE)
    lines[3:3] = ["added one", "added two", "added three"]
    c1 = git_repo.commit("add", {"m.py": text(lines)})
    lines[4] = "added two, modified"  # a line added, then modified by a later commit
    c2 = git_repo.commit("modify", {"m.py": text(lines), "other.py": text([*BASE[:5], "o", *BASE[5:]])})
    moved = lines.pop(3)  # a line moved by a later commit
    lines.insert(25, moved)
    del lines[10:12]
    c3 = git_repo.commit("move", {"m.py": text(lines)})
    git_repo.git("mv", "m.py", "n.py")
    lines.append("after rename")
    c4 = git_repo.commit("rename", {"n.py": text(lines)})
    head = git_repo.pr_ref(1)
    shas = [c1, c2, c3, c4]
    truth = blame(git_repo, base, head, "n.py")
    assert set(truth.values()) == {c1, c2, c3, c4}
    assert replayed(git_repo, shas, "n.py") == truth
    assert replayed(git_repo, shas, "other.py") == blame(git_repo, base, head, "other.py")
    by_line = {h.new_start: h.commits for h in load_changes(GitClone(git_repo.path), [1]).hunks_of(1)
               if h.path == "n.py"}
    assert (c3,) in by_line.values() and any(c1 in commits for commits in by_line.values())


@pytest.mark.slow
def test_random_edits_over_a_stack_match_blame(git_repo: GitRepo) -> None:
    """Two stacked PRs of many commits, each editing the same files at random: every hunk's
    commits are the commits git blame names for its added lines."""
    rng = random.Random(16)
    files = {name: list(BASE) for name in ("a.py", "b.py", "c.py")}
    base = git_repo.commit("base", {name: text(lines) for name, lines in files.items()})
    git_repo.branch("work")
    tips: list[tuple[str, list[str]]] = []
    start = base
    for number in (1, 2):
        shas = []
        for k in range(6):
            for name in rng.sample(sorted(files), 2):
                lines = files[name]
                for _ in range(rng.randint(1, 4)):
                    at = rng.randrange(len(lines) + 1)
                    action = rng.choice(["add", "edit", "drop", "move"])
                    if action == "add" or not lines:
                        lines.insert(at, f"pr{number} c{k} {rng.random():.6f}")
                    elif action == "edit":
                        lines[min(at, len(lines) - 1)] += " edited"
                    elif action == "drop":
                        del lines[min(at, len(lines) - 1)]
                    else:
                        lines.insert(rng.randrange(len(lines)), lines.pop(min(at, len(lines) - 1)))
            shas.append(git_repo.commit(f"pr{number} commit {k}", {n: text(v) for n, v in files.items()}))
        head = git_repo.pr_ref(number)
        tips.append((start, shas))
        start = head
    changes = load_changes(GitClone(git_repo.path), [2])
    assert changes.stack.parents[2] == (1,)
    checked = 0
    for number, (pr_base, shas) in zip((1, 2), tips, strict=True):
        head = shas[-1]
        truths = {name: blame(git_repo, pr_base, head, name) for name in files}
        for name in files:
            assert replayed(git_repo, shas, name) == truths[name]
        for hunk in changes.hunks_of(number):
            line_no, expected = hunk.new_start, set()
            for line in hunk.lines:
                if line.kind == "+" and line_no in truths[hunk.path]:  # else blame saw an older line
                    expected.add(truths[hunk.path][line_no])
                if line.kind != "-":
                    line_no += 1
            if expected:
                checked += 1
                assert set(hunk.commits) == expected
                assert list(hunk.commits) == [s for s in shas if s in expected]
    assert checked > 5
