"""The git work a plan needs, in memory: three-way merges, patch ids, scratch-index apply checks.

Nothing here touches the user's work tree, index, branches or tags. Merges run through
`git merge-tree --write-tree` between a throw-away commit (the plan's current tree on top of the
picked commit's parent, so the merge base is that parent, as in a cherry-pick) and the picked
commit; apply checks and overlays use a temporary index (GIT_INDEX_FILE). The only lasting effect
is unreferenced objects in the object database, which `git gc` prunes.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from prstack.errors import SourceError
from prstack.models import MergeOutcome
from prstack.sources.git.repo import GitClone
from prstack.sources.git.runner import failed, run

PLAN_IDENTITY = {
    "GIT_AUTHOR_NAME": "prstack plan",
    "GIT_AUTHOR_EMAIL": "plan@prstack.invalid",
    "GIT_COMMITTER_NAME": "prstack plan",
    "GIT_COMMITTER_EMAIL": "plan@prstack.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+00:00",
}


class PlanGit:
    """Merges, patch ids and scratch-index checks in one clone, for `prstack plan`."""

    def __init__(self, source: GitClone) -> None:
        self.source = source
        self.path = source.path

    def _git(self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None,
             ok: Sequence[int] = (0,)) -> subprocess.CompletedProcess[bytes]:
        done = run(self.path, args, {**PLAN_IDENTITY, **(env or {})}, stdin)
        if done.returncode not in ok:
            raise failed(args, f"in {self.path}", done.stderr)
        return done

    def _out(self, *args: str, stdin: bytes | None = None,
             env: Mapping[str, str] | None = None) -> str:
        out = self._git(*args, stdin=stdin, env=env).stdout
        return out.decode("utf-8", "surrogateescape").strip()

    # -- objects ----------------------------------------------------------------

    def tree_of(self, rev: str) -> str:
        return self._out("rev-parse", "--verify", f"{rev}^{{tree}}")

    def parents_of(self, commit: str) -> tuple[str, ...]:
        return tuple(self._out("rev-list", "--parents", "-n", "1", commit).split()[1:])

    def commit_tree(self, tree: str, parents: Sequence[str], message: str) -> str:
        """A throw-away commit (no ref points at it)."""
        args = ["commit-tree", "--no-gpg-sign", tree]
        for parent in parents:
            args += ["-p", parent]
        return self._out(*args, "-m", message)

    def file_at(self, treeish: str, path: str) -> bytes | None:
        return self.source.objects.file_at(treeish, path)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self.source.ancestry.is_ancestor(ancestor, descendant)

    def merge_base(self, a: str, b: str) -> str | None:
        return self.source.ancestry.merge_base(a, b)

    # -- merging ------------------------------------------------------------------

    def pick(self, tree: str, parent: str, commit: str) -> MergeOutcome:
        """Cherry-pick in memory: merge `commit` (whose change is parent..commit) into `tree`."""
        ours = self.commit_tree(tree, [parent], "prstack plan: state")
        done = self._git(
            "-c", "merge.conflictStyle=diff3", "merge-tree", "--write-tree", "--name-only",
            "--messages", ours, commit, ok=(0, 1),
        )
        text = done.stdout.decode("utf-8", "surrogateescape")
        head, _, messages = text.partition("\n\n")
        lines = head.splitlines()
        if not lines:
            raise SourceError(
                f"git merge-tree gave no tree in {self.path}; prstack plan needs git 2.38 or newer."
            )
        conflicted = tuple(dict.fromkeys(lines[1:])) if done.returncode == 1 else ()
        notes = tuple(m for m in messages.splitlines() if m.startswith("CONFLICT"))
        return MergeOutcome(lines[0], conflicted, notes)

    # -- equivalence --------------------------------------------------------------

    def patch_id(self, base: str, head: str) -> str | None:
        """The stable patch id of the diff base..head (None for an empty diff)."""
        diff = self._git("diff", "--no-color", "--no-ext-diff", "--no-renames", base, head).stdout
        if not diff.strip():
            return None
        out = self._git("patch-id", "--stable", stdin=diff).stdout.decode().split()
        return out[0] if out else None

    def patch_ids(self, base: str, tip: str, paths: Sequence[str] = ()) -> dict[str, str]:
        """patch id -> commit, for every non-merge commit of base..tip (only those touching
        `paths`, when given: a long history is read much faster)."""
        log = self._git(
            "--literal-pathspecs", "log", "--no-merges", "-p", "--no-color", "--no-ext-diff",
            "--no-renames", "--full-diff", "--format=commit %H", f"{base}..{tip}", "--", *paths,
        ).stdout
        out = self._git("patch-id", "--stable", stdin=log).stdout.decode()
        ids: dict[str, str] = {}
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2:
                ids.setdefault(parts[0], parts[1])
        return ids

    # -- scratch index ------------------------------------------------------------

    @contextmanager
    def _index(self, treeish: str) -> Iterator[dict[str, str]]:
        with tempfile.TemporaryDirectory(prefix="prstack-plan-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._git("read-tree", treeish, env=env)
            yield env

    def reverse_applies(self, treeish: str, base: str, head: str) -> bool:
        """True when the change base..head is already in `treeish`: its reverse applies there."""
        diff = self._git(
            "diff", "--binary", "--full-index", "--no-color", "--no-ext-diff", base, head
        ).stdout
        if not diff.strip():
            return False
        with self._index(treeish) as env:
            done = self._git(
                "apply", "--cached", "--check", "-R", "-", stdin=diff, env=env, ok=(0, 1)
            )
        return done.returncode == 0

    def applies(self, treeish: str, patch: bytes) -> bool:
        """True when `git apply` accepts `patch` on `treeish` (checked on a scratch index)."""
        with self._index(treeish) as env:
            done = self._git("apply", "--cached", "--check", "-", stdin=patch, env=env, ok=(0, 1))
        return done.returncode == 0

    def overlay(self, treeish: str, files: Mapping[str, bytes]) -> str:
        """The tree of `treeish` with `files` (repo path -> bytes) written over it."""
        with self._index(treeish) as env:
            for path, data in sorted(files.items()):
                blob = self._out("hash-object", "-w", "--stdin", stdin=data)
                self._git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
            return self._out("write-tree", env=env)

    def restrict(self, base: str, head: str, paths: Sequence[str]) -> str:
        """A throw-away commit on `base` holding only `paths` as they are at `head`: the change
        base..head limited to those files."""
        with self._index(base) as env:
            for path in paths:
                entry = self._out("--literal-pathspecs", "ls-tree", head, "--", path)
                if entry:
                    mode, _kind, rest = entry.split(" ", 2)
                    blob = rest.split("\t", 1)[0]
                    self._git("update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", env=env)
                else:
                    self._git("update-index", "--force-remove", "--", path, env=env)
            tree = self._out("write-tree", env=env)
        return self.commit_tree(tree, [base], "prstack plan: restricted change")

    def diff_trees(self, old: str, new: str) -> bytes:
        """A patch from `old` to `new` that `git apply` accepts (binary and renames included)."""
        return self._git(
            "-c", "core.quotepath=off", "diff", "--binary", "--full-index", "--no-color",
            "--no-ext-diff", "-M", old, new,
        ).stdout
