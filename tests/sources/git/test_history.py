"""Stack detection's batched git layer against git itself: every answer the in-memory history and
the batched patch-id pipelines give equals what the one-question-per-process git commands say, on
a repository with the shapes real clones have; and detection runs as many git processes for a
stack of eight PRs as for a stack of two."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.demo.fixture import GIT_ENV
from prstack.errors import InputError
from prstack.models import PRState
from prstack.sources.git import prrefs
from prstack.sources.git.changes import read_graph
from prstack.sources.git.repo import GitClone
from prstack.stack.facts import Evidence
from prstack.stack.graph import Stack

A0 = "".join(f"line {i}\n" for i in range(60))


def edit(text: str, index: int, new: str) -> str:
    rows = text.splitlines(keepends=True)
    rows[index] = new + "\n"
    return "".join(rows)


def busy_repo(repo: GitRepo, *, main_merges: bool) -> None:
    """Stacks, a rebased copy, a merge inside a PR, a PR that merged main, an empty commit,
    squash-, rebase- and merge-merged PRs, fork refs; main with or without merge commits."""
    repo.commit("base", {"a.py": A0, "b.py": A0, "c.py": A0, "d.py": A0, "x [1].py": A0})
    repo.branch("p1")
    a1 = repo.commit("A1", {"a.py": edit(A0, 5, "a1")})
    a2 = repo.commit("A2", {"a.py": edit(edit(A0, 5, "a1"), 40, "a2")})
    repo.pr_ref(1)
    repo.git("update-ref", "refs/remotes/origin/pr/1", a1)  # a second ref for #1: refs/pull wins
    repo.branch("p2")
    repo.commit("B", {"b.py": edit(A0, 5, "b")})
    repo.commit("B empty", {})
    repo.pr_ref(2)
    repo.branch("p5", "main")
    repo.commit("E", {"d.py": edit(A0, 7, "e")})
    repo.pr_ref(5)
    repo.branch("p4", "main")
    repo.commit("D", {"c.py": edit(A0, 9, "d")})
    repo.git("merge", "--no-ff", "--quiet", "-m", "Merge E into D", "p5")
    repo.commit("D2", {"c.py": edit(edit(A0, 9, "d"), 30, "d2")})
    repo.pr_ref(4)
    repo.branch("p7", "main")
    repo.commit("G", {"x [1].py": edit(A0, 3, "g")})
    repo.commit("G2", {"x [1].py": edit(edit(A0, 3, "g"), 20, "g2")})
    repo.pr_ref(7)
    repo.branch("p8", "main")
    repo.commit("H", {"d.py": edit(A0, 50, "h")})
    repo.pr_ref(8)
    repo.branch("main", "main")
    repo.commit("main 1", {"c.py": edit(A0, 55, "main 1")})
    repo.git("cherry-pick", a1)  # #1's first commit lands by rebase
    repo.git("merge", "--squash", "--quiet", "p7")
    repo.git("commit", "--quiet", "-m", "G (#7)")
    if main_merges:
        repo.git("merge", "--no-ff", "--quiet", "-m", "Merge #8", "p8")
    repo.branch("p3")  # rebased copies of #1 on the new main, then its own
    repo.git("cherry-pick", a2)
    repo.commit("C", {"b.py": edit(A0, 20, "c")})
    repo.pr_ref(3)
    repo.branch("p6", "p2")
    repo.git("merge", "--quiet", "--no-edit", "main")  # the PR merged main
    repo.commit("F", {"b.py": edit(edit(A0, 5, "b"), 50, "f")})
    repo.git("update-ref", "refs/remotes/fork/pr/6", "HEAD")
    repo.branch("main", "main")
    repo.commit("main 2", {"a.py": edit(A0, 58, "main 2"), "x [1].py": edit(A0, 30, "m")})


def git(path: Path, *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(["git", "-C", str(path), *args], input=data, capture_output=True, check=True)
    return done.stdout.decode()


def patch_id(path: Path, diff: bytes) -> str | None:
    out = git(path, "patch-id", "--stable", data=diff).split()
    return out[0] if out else None


@pytest.mark.parametrize("main_merges", [False, True], ids=["linear-main", "merges-in-main"])
@pytest.mark.slow
def test_history_answers_as_git_does(git_repo: GitRepo, main_merges: bool) -> None:
    busy_repo(git_repo, main_merges=main_merges)
    path = git_repo.path
    src = GitClone(path)
    default = src.default_ref
    history = src.ancestry.history(default)
    heads = src.refs.pr_refs
    assert set(heads) == {1, 2, 3, 4, 5, 6, 7, 8}
    history.ensure(heads.values())
    forks: dict[int, str] = {}
    for n, head in heads.items():
        in_default = _is_ancestor(path, head, default)
        assert history.in_default(head) == in_default, n
        assert history.merge_base(head) == git(path, "merge-base", head, default).strip(), n
        if in_default:
            continue
        forks[n] = fork = git(path, "merge-base", head, default).strip()
        reference = GitClone(path).ancestry.commits(fork, head)  # one git log
        assert history.commits(fork, head) == reference, n
        in_range = set(git(path, "rev-list", head, f"^{default}").split())
        assert history.heads_in_range(head, heads) == {m: h for m, h in heads.items() if h in in_range}, n
        history.warm_containing(c.sha for c in reference)
        for c in reference:
            assert history.containing(c.sha, not_containing=head) == src.refs.prs_containing(
                c.sha, not_containing=head
            ), (n, c.subject)
    assert forks.keys() == {1, 2, 3, 4, 5, 6, 7} | (set() if main_merges else {8})
    # ranges and ancestry between any two of the heads and fork points, from what is loaded
    plain = GitClone(path)  # no history loaded: every answer from git
    firsts = {plain.ancestry.commits(fork, heads[n])[0].sha for n, fork in forks.items()}
    points = sorted({*heads.values(), *forks.values(), *firsts})
    answered = 0
    for a in points:
        for b in sorted(heads.values()):
            known = history.known_range(a, b)
            assert known is None or known == plain.ancestry.commits(a, b), (a, b)
            ancestry = history.known_ancestry(a, b)
            assert ancestry is None or ancestry == _is_ancestor(path, a, b), (a, b)
            assert src.ancestry.is_ancestor(a, b) == _is_ancestor(path, a, b), (a, b)
            answered += (known is not None) + (ancestry is not None)
    assert answered > len(points) * len(heads) // 2  # most from memory
    # merged checks: default-branch commits since each fork touching the PR's paths, in one batch
    asks = [(fork, src.patches.pair_paths(fork, heads[n])) for n, fork in forks.items()]
    for (fork, paths), n in zip(asks, forks, strict=True):
        assert paths == git(path, "diff", "--name-only", "--no-renames", fork, heads[n]).split("\n")[:-1], n
    history.warm_touching(asks)
    for fork, paths in asks:
        assert history.touching(fork, paths) == src.ancestry.commits_touching(fork, default, paths), paths
    # patch-ids and paths of every commit and of each PR's whole change, batched
    shas = git(path, "rev-list", "--all").split()
    src.patches.warm(ids=shas, paths=shas, pair_ids=[(f, heads[n]) for n, f in forks.items()])
    for sha in shas:
        single = git(path, "diff-tree", "-p", "-r", "--root", "--no-renames", sha).encode()
        assert src.patches.ids([sha]).get(sha) == patch_id(path, single), sha
        names = git(path, "diff-tree", "-r", "--root", "--name-only", "--no-renames", "--no-commit-id", sha).split("\n")
        assert src.patches.paths([sha]).get(sha) == (frozenset(names[:-1]) or None), sha
    for n, fork in forks.items():
        whole = git(path, "diff", "--no-renames", fork, heads[n]).encode()
        assert src.patches.pair_id(fork, heads[n]) == patch_id(path, whole), n


def _is_ancestor(path: Path, a: str, b: str) -> bool:
    return subprocess.run(["git", "-C", str(path), "merge-base", "--is-ancestor", a, b]).returncode == 0


@pytest.mark.parametrize("main_merges", [False, True], ids=["linear-main", "merges-in-main"])
@pytest.mark.slow
def test_busy_repository_stack(git_repo: GitRepo, main_merges: bool) -> None:
    busy_repo(git_repo, main_merges=main_merges)
    stack = read_graph(GitClone(git_repo.path), [2, 3, 4, 6, 7, 8])
    assert stack.facts[7].merged == "squash"
    assert stack.facts[8].merged == ("ancestry" if main_merges else None)
    assert stack.facts[1].merged is None  # only its first commit landed
    assert evidence_of(stack, 1, 2) == (Evidence.ANCESTRY,)
    edge = stack.edge(1, 3)
    assert edge is not None and edge.evidence == (Evidence.PATCH_ID,) and edge.stale is not None
    assert stack.states[3] is PRState.STALE
    assert evidence_of(stack, 2, 6) == (Evidence.ANCESTRY,)  # through the merge of main
    assert stack.parents[4] == (5,)


def evidence_of(stack: Stack, parent: int, child: int) -> tuple[Evidence, ...]:
    edge = stack.edge(parent, child)
    assert edge is not None, f"no edge #{parent} -> #{child}: {stack.edges}"
    return edge.evidence


def count_git(monkeypatch: pytest.MonkeyPatch, trace: Path, numbers: list[int], repo: Path) -> int:
    """The git processes one detection run starts (GIT_TRACE logs one line per git process)."""
    monkeypatch.setenv("GIT_TRACE", str(trace))
    read_graph(GitClone(repo), numbers)
    monkeypatch.delenv("GIT_TRACE")
    return sum("trace: built-in: git" in line for line in trace.read_text().splitlines())


def stack_of(repo: GitRepo, size: int) -> None:
    """`size` PRs, each on the one before; main moved on since, touching their files (so every
    merged check reads main's commits), and the bottom one was rebased onto main under a copy."""
    repo.commit("base", {f"f{i}.py": A0 for i in range(size)})
    repo.branch("stack")
    for i in range(size):
        repo.commit(f"PR {i + 1}\n\nDepends on #{i}" if i else "PR 1", {f"f{i}.py": edit(A0, 5, f"pr {i}")})
        repo.pr_ref(i + 1)
    repo.branch("main", "main")
    repo.commit("main moves", {f"f{i}.py": edit(A0, 40, "main") for i in range(size)})
    repo.branch("copy")
    repo.git("cherry-pick", "refs/pull/1/head")
    repo.commit("on a copy of #1", {"f0.py": edit(edit(A0, 40, "main"), 5, "pr 0") + "more\n"})
    repo.pr_ref(size + 1)


@pytest.mark.slow
def test_git_processes_do_not_grow_with_the_stack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = {}
    for size in (2, 8):
        repo = GitRepo(tmp_path / f"repo{size}")
        stack_of(repo, size)
        stack = read_graph(GitClone(repo.path), [size, size + 1])
        assert stack.order == (*range(1, size + 1), size + 1)
        copy = stack.edge(1, size + 1)
        assert copy is not None and copy.evidence == (Evidence.PATCH_ID,)
        counts[size] = count_git(monkeypatch, tmp_path / f"trace{size}", [size, size + 1], repo.path)
    assert counts[2] == counts[8]
    assert counts[8] < 25  # was ~11 per PR


@pytest.mark.slow
def test_shallow_clone(git_repo: GitRepo, tmp_path: Path) -> None:
    for i in range(5):
        git_repo.commit("main", {"m.py": f"{i}\n"})
    git_repo.commit("base", {"a.py": A0, "b.py": A0})
    git_repo.branch("a")
    git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.commit("B", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    git_repo.branch("main", "main")
    url = f"file://{git_repo.path}"
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "--quiet", "--depth=2", url, str(shallow)], check=True)
    subprocess.run(["git", "-C", str(shallow), "fetch", "--quiet", "--depth=3", "origin",
                    "+refs/pull/*/head:refs/pull/*/head"], check=True)
    assert (shallow / ".git" / "shallow").exists()
    stack = read_graph(GitClone(shallow), [2])
    assert stack.order == (1, 2)
    assert stack.facts[1].fork_point == git_repo.git("rev-parse", "main")
    # a PR ref fetched too shallow to reach main shares no history with it: say what to do
    cut = tmp_path / "cut"
    subprocess.run(["git", "clone", "--quiet", "--depth=1", url, str(cut)], check=True)
    subprocess.run(["git", "-C", str(cut), "fetch", "--quiet", "--depth=1", "origin",
                    "+refs/pull/2/head:refs/pull/2/head"], check=True)
    with pytest.raises(InputError, match="`base`"):
        read_graph(GitClone(cut), [2])


def test_detection_runs_git_with_the_sources_environment(git_repo: GitRepo, tmp_path: Path) -> None:
    """A blobless clone reads blobs lazily for patch-ids; the source's environment (offline: no
    transport allowed) reaches every git process detection starts, so offline is never online
    (nothing fetched, the copy not told by its patch-id) and online finds the copy."""
    git_repo.commit("base", {"a.py": A0, "b.py": A0})
    git_repo.branch("a")
    a = git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("main", "main")
    git_repo.commit("main moves", {"b.py": edit(A0, 40, "main")})
    git_repo.branch("b")
    git_repo.git("cherry-pick", a)
    git_repo.commit("B", {"b.py": edit(edit(A0, 40, "main"), 5, "b")})
    git_repo.pr_ref(2)
    git_repo.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "blobless.git"
    url = f"file://{git_repo.path}"
    subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:none", url, str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "fetch", "--quiet", "--filter=blob:none", "origin",
                    "+refs/pull/*/head:refs/pull/*/head"], check=True)
    offline = GitClone(clone)
    offline.git.update_environment(GIT_ALLOW_PROTOCOL="prstack-offline")
    # the copy of A needs patch-ids, so blobs: offline, none is fetched and its files are left out
    before = missing_in(clone)
    assert read_graph(offline, [2]).edge(1, 2) is None
    assert missing_in(clone) == before != set()
    stack = read_graph(GitClone(clone), [2])
    assert evidence_of(stack, 1, 2) == (Evidence.PATCH_ID,)


def _commit_at(repo: GitRepo, parent: str, when: str, message: str, *, root: bool = False) -> str:
    """A commit with `parent`'s tree (and `parent` as its parent unless `root`) and committer date
    `when`, as a rebase or another machine's clock makes them."""
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    parents = [] if root else ["-p", parent]
    done = subprocess.run(["git", "-C", str(repo.path), "commit-tree", *parents, "-m", message,
                           f"{parent}^{{tree}}"], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_pr_refs_holding_a_commit_as_git_contains_says(
    git_repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The PR refs asked of --contains are pruned by their heads' dates; the answer stays git's own:
    heads committed long before, after, and (clock skew) hours before the commit they hold."""
    base = git_repo.commit("base", {"a.py": A0})
    x = _commit_at(git_repo, base, "2026-06-01T12:00:00+00:00", "X")
    y = _commit_at(git_repo, x, "2026-06-02T12:00:00+00:00", "Y")
    heads = {
        10: _commit_at(git_repo, base, "2020-01-01T00:00:00+00:00", "old history", root=True),
        11: _commit_at(git_repo, x, "2026-06-01T12:00:10+00:00", "after X"),
        12: _commit_at(git_repo, x, "2026-06-01T00:00:00+00:00", "skewed: twelve hours before X"),
        13: _commit_at(git_repo, base, "2026-07-01T00:00:00+00:00", "recent, without X"),
        14: y,
        15: _commit_at(git_repo, y, "2026-06-01T18:00:00+00:00", "skewed: eighteen hours before Y"),
    }
    for number, sha in heads.items():
        git_repo.git("update-ref", f"refs/pull/{number}/head", sha)
    git_repo.git("update-ref", "refs/remotes/origin/pr/16", heads[11])
    git_repo.git("update-ref", "refs/remotes/fork/pr/17", heads[10])
    git_repo.git("tag", "-a", "-m", "tag", "t", heads[11])
    git_repo.git("update-ref", "refs/pull/18/head", "refs/tags/t")  # a ref to a tag object: no date
    monkeypatch.setattr(prrefs, "_REFS_PER_CALL", 2)  # several calls, as among thousands of refs

    def dated(sha: str) -> int:
        return int(git(git_repo.path, "show", "-s", "--format=%ct", sha))

    for wanted in ([x], [y], [x, y], [base]):
        src = GitClone(git_repo.path)
        rows = src.refs.pr_ref_rows_holding(wanted, min(dated(s) for s in wanted))
        assert rows == src.refs.pr_ref_rows(*(f"--contains={s}" for s in wanted)), wanted
        assert rows == GitClone(git_repo.path).refs.pr_ref_rows_holding(wanted, 0)
    src = GitClone(git_repo.path)
    held = src.refs.pick_pr_refs(src.refs.pr_ref_rows_holding([x], dated(x)))
    assert set(held) == {11, 12, 14, 15, 16, 18}


def test_pr_commit_subjects_walk_only_heads_that_can_hold_the_commit(git_repo: GitRepo) -> None:
    """The subjects of PR commits outside main, from the PR refs whose heads were committed at
    most a day before the author time asked about: as git log of each of those refs says."""
    base = git_repo.commit("base", {"a.py": A0})
    git_repo.branch("main", base)
    heads: dict[int, str] = {}
    for number, when in ((20, "2019-03-01T00:00"), (21, "2026-05-31T06:00"), (22, "2026-06-03T00:00"),
                         (23, "2026-06-01T00:00")):
        first = _commit_at(git_repo, base, f"{when}:00+00:00", f"first of #{number}")
        heads[number] = _commit_at(git_repo, first, f"{when}:01+00:00", f"second of #{number}")
        git_repo.git("update-ref", f"refs/pull/{number}/head", heads[number])
    git_repo.git("update-ref", "refs/pull/22/merge", heads[20])  # not a PR head: never walked
    git_repo.git("update-ref", "refs/remotes/fork/pull/24/head", heads[23])  # a fork's name for #23's commits
    authored = int(git(git_repo.path, "show", "-s", "--format=%at", heads[23]))  # 2026-06-01

    def by_git(numbers: set[int]) -> dict[str, list[int]]:
        return {subject: [n] for n in sorted(numbers)
                for subject in git(git_repo.path, "log", "--format=%s", heads[n], "^main").splitlines()}

    everything = GitClone(git_repo.path).refs.pr_commit_subjects("main")
    assert everything == by_git({20, 21, 22, 23})
    recent = GitClone(git_repo.path).refs.pr_commit_subjects("main", authored)
    assert recent == by_git({21, 22, 23})  # #21: eighteen hours before, within the day; #20: years


def missing_in(clone: Path) -> set[str]:
    out = subprocess.run(["git", "-C", str(clone), "rev-list", "--objects", "--all", "--missing=print"],
                         capture_output=True, text=True, check=True).stdout
    return {line[1:] for line in out.splitlines() if line.startswith("?")}
