"""Pure deletions, judged where the lines they remove are, or never were: a deletion found only by
a piece of its context is not done while its lines stand beside that place, and a deletion of lines
the parent PR added is not done while the parent's lines are not there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.matcher import judge, statuses
from prstack.cli import main
from prstack.models import HunkStatus

OLD = """\
class Trainer:
    def __init__(self, model, args):
        self.ref = make_ref(
            use_ref_model=model is not None,
        )

        # Initialize the metrics
        self._metrics = {"train": [], "eval": []}
        self.log_completions = args.log_completions
        self.num_completions_to_print = args.num_completions_to_print

        super().__init__(
            model=model,
            args=args,
        )
"""
NEW = OLD.replace("""        # Initialize the metrics
        self._metrics = {"train": [], "eval": []}
        self.log_completions = args.log_completions
        self.num_completions_to_print = args.num_completions_to_print

""", "")
REF = """        self.ref = make_ref(
            use_ref_model=model is not None,
        )
"""


def test_a_deletion_whose_lines_stand_beside_its_place_with_a_line_among_them_is_missing() -> None:
    """The target's release dropped the lines above the deletion and added one among the removed
    ones: only the bare context after the deletion matches, and the removed lines sit right there."""
    target = OLD.replace(REF, "").replace(
        "        self.log_completions", "        self._total_tokens = 0\n        self.log_completions")
    (result,) = judge(OLD, NEW, target)
    assert result.status is HunkStatus.MISSING
    assert "4 line(s) it removes are still there" in (result.evidence.note or "")


def test_the_same_deletion_done_under_the_same_drift_is_applied() -> None:
    target = NEW.replace(REF, "")
    assert statuses(judge(OLD, NEW, target)) == [HunkStatus.APPLIED]


def _audit(capsys: pytest.CaptureFixture[str], repo: GitRepo, tree: Path) -> tuple[int, dict[int, str]]:
    code = main(["audit", "2", "--git", str(repo.path), "--tree", str(tree), "--format", "json"])
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    return code, {h["pr"]: h["status"] for h in hunks}


def test_removing_a_line_the_parent_added_is_missing_where_the_parent_is_missing(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PR 1 adds two imports; PR 2, on it, removes one of them again (as a branch that merged main
    after the parent's squash dropped it does). In a tree of neither, PR 2's deletion was never done."""
    imports = "import torch\nfrom torch.nn.utils.rnn import pad_sequence\n\nfrom .utils import pad\n"
    base = git_repo.commit("base", {"pkg/__init__.py": "", "pkg/collate.py": imports})
    git_repo.branch("p1")
    p1 = git_repo.commit("p1", {"pkg/collate.py": imports.replace(
        "import torch\n", "import torch\nimport torch.utils.data\n").replace(
        "pad_sequence\n", "pad_sequence\nfrom transformers import Tokenizer\n")})
    git_repo.pr_ref(1)
    git_repo.branch("p2")
    p2 = git_repo.commit("p2", {"pkg/collate.py": imports.replace(
        "pad_sequence\n", "pad_sequence\nfrom transformers import Tokenizer\n")})
    git_repo.pr_ref(2)
    assert _audit(capsys, git_repo, git_repo.archive(base, tmp_path / "base")) == (1, {1: "missing", 2: "missing"})
    assert _audit(capsys, git_repo, git_repo.archive(p1, tmp_path / "p1")) == (1, {1: "applied", 2: "missing"})
    assert _audit(capsys, git_repo, git_repo.archive(p2, tmp_path / "p2")) == (0, {1: "applied", 2: "applied"})
