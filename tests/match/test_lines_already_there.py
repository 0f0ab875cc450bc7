"""A PR none of whose change a target holds, whose hunks add lines that already stood elsewhere in
the file (a `@property` / `def inputs(self):` pair a sibling class has, a body repeated word for
word): every hunk is missing and so is the PR, never partial, however the rest of the target's
file differs from the PR's base."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.cli import main

METHODS = "".join(f"    def step_{i}(self, x):\n        return x * {i}\n\n" for i in range(12))
BASE = f'''class Encoder:
    def __init__(self, inputs):
        self._inputs = inputs

    @property
    def inputs(self):
        return self._inputs

{METHODS}

class Decoder:
    def __init__(self, inputs, cache):
        self._inputs = inputs
        self._cache = cache

{METHODS}
    def forward(self, x):
        return x - 1
'''


def pr_change(text: str) -> str:
    """The PR: Decoder gets Encoder's `inputs` property word for word and a `cache` one (whose
    decorator line stands in the file too), and `forward` changes."""
    head, _, tail = text.partition("class Decoder")
    tail = tail.replace("        self._cache = cache\n", "        self._cache = cache\n\n    @property\n"
                        "    def inputs(self):\n        return self._inputs\n\n    @property\n    def cache(self):\n"
                        "        return self._cache\n", 1)
    return head + "class Decoder" + tail.replace("        return x - 1\n", "        return x - 2\n")


TARGETS = {
    "base with a docstring and a helper": '"""Models."""\n\n' + BASE + "\n\ndef helper():\n    return 0\n",
    "the classes in the other order": BASE[BASE.index("class Decoder"):] + "\n\n" + BASE[:BASE.index("class Decoder")],
    "a later edit of the sibling's property": BASE.replace("        return self._inputs\n",
                                                          "        return tuple(self._inputs)\n", 1),
}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_pr_whose_added_lines_stood_elsewhere_is_missing_not_partial(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """Nothing of the PR in the target: each hunk missing, the PR missing, the summary line says
    missing (not "partial: N of N")."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/models.py": BASE})
    git_repo.branch("feature")
    git_repo.commit("Decoder: inputs and cache properties", {"pkg/models.py": pr_change(BASE)})
    git_repo.pr_ref(1)
    tree = git_repo.archive("main", tmp_path / "tree")
    (tree / "pkg/models.py").write_text(TARGETS[target])
    argv = ["audit", "1", "--git", str(git_repo.path), "--tree", str(tree), "--offline"]
    assert main([*argv, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert {h["status"] for h in report["hunks"]} == {"missing"}
    assert [p["status"] for p in report["prs"]] == ["missing"]
    assert main(argv) == 1
    flat = " ".join(capsys.readouterr().out.split())
    assert "#1 (missing:" in flat and "partial" not in flat


def test_the_same_pr_in_the_target_is_applied(git_repo: GitRepo, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The PR's file in the target, with the same unrelated edits: every hunk applied."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/models.py": BASE})
    git_repo.branch("feature")
    git_repo.commit("Decoder: inputs and cache properties", {"pkg/models.py": pr_change(BASE)})
    git_repo.pr_ref(1)
    tree = git_repo.archive("main", tmp_path / "tree")
    (tree / "pkg/models.py").write_text(pr_change(TARGETS["base with a docstring and a helper"]))
    assert main(["audit", "1", "--git", str(git_repo.path), "--tree", str(tree), "--offline", "--format", "json"]) == 0
    assert {h["status"] for h in json.loads(capsys.readouterr().out)["hunks"]} == {"applied"}


ADJACENT = '''class Encoder:
    def __init__(self, inputs):
        self._inputs = inputs

    @property
    def inputs(self):
        return self._inputs


class Decoder:
    def __init__(self, inputs):
        self._inputs = inputs

    def forward(self, x):
        return x - 1
'''


SPOT = "        self._inputs = inputs\n\n    def forward"
EDITS = [(SPOT, "        self._inputs = list(inputs)\n\n    def forward"),
         ("    def forward(self, x):\n        return x - 1\n", ""),
         ("    def __init__(self, inputs):\n" + SPOT,
          "    def __init__(self, xs):\n        self._xs = xs\n\n    def forward")]


@pytest.mark.parametrize("edit", EDITS)
def test_a_property_the_class_above_has_word_for_word_is_missing_where_its_context_changed(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: tuple[str, str]
) -> None:
    """The PR gives Decoder the `inputs` property Encoder, a few lines above, has word for word; the
    target's Decoder differs around the spot (an edited __init__, a method gone): missing."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/models.py": ADJACENT})
    git_repo.branch("feature")
    prop = "    @property\n    def inputs(self):\n        return self._inputs\n\n"
    added = SPOT.replace("    def forward", prop + "    def forward")
    git_repo.commit("Decoder.inputs", {"pkg/models.py": ADJACENT.replace(SPOT, added)})
    git_repo.pr_ref(1)
    tree = git_repo.archive("main", tmp_path / "tree")
    assert edit[0] in ADJACENT.partition("class Decoder")[2]
    (tree / "pkg/models.py").write_text(ADJACENT.replace(*edit))
    assert main(["audit", "1", "--git", str(git_repo.path), "--tree", str(tree), "--offline", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [h["status"] for h in report["hunks"]] == ["missing"]
    assert [p["status"] for p in report["prs"]] == ["missing"]
