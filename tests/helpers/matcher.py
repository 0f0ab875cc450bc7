"""Helpers for the matcher's tests: real unified diffs (difflib) parsed by prstack.diff.hunks."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from conftest import GitRepo
from prstack.diff.hunks import parse_diff
from prstack.match.file import Elsewhere, PackageIndex, match_file
from prstack.models import Hunk, HunkResult, HunkStatus

PATH = "pkg/mod.py"


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def make_hunks(old: str, new: str, *, path: str = PATH, pr: int = 1, context: int = 3) -> list[Hunk]:
    """The hunks of the diff old -> new, as prstack parses them from git."""
    a, b = lines_of(old), lines_of(new)
    for side in (a, b):
        if side and not side[-1].endswith("\n"):
            side[-1] += "\n"
    src = "/dev/null" if not old else f"a/{path}"
    dst = "/dev/null" if not new else f"b/{path}"
    diff = "".join(difflib.unified_diff(a, b, src, dst, n=context))
    assert diff, "old and new must differ"
    return parse_diff(diff, pr)


def hunk_spans(old: str, new: str, *, context: int = 3) -> list[tuple[int, int]]:
    """[start, end) of each hunk in `old` (0-based, context included), as difflib groups them."""
    a, b = lines_of(old), lines_of(new)
    groups = difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context)
    return [(g[0][1], g[-1][2]) for g in groups]


def apply_some(
    old: str, new: str, chosen: Sequence[bool], *, context: int = 3,
    inserts: dict[int, list[str]] | None = None,
) -> str:
    """`old` with only the chosen hunks of old -> new applied (truth by construction), and
    `inserts[i]` (unrelated lines) put before old line i, which must lie outside every hunk."""
    a, b = lines_of(old), lines_of(new)
    groups = list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context))
    assert len(groups) == len(chosen)
    inserts = inserts or {}
    for i in inserts:
        assert not any(g[0][1] < i < g[-1][2] for g in groups), "insert inside a hunk"
    out: list[str] = []
    pos = 0

    def copy(upto: int) -> None:
        nonlocal pos
        for i in range(pos, upto):
            out.extend(f"{x}\n" for x in inserts.get(i, ()))
            out.append(a[i])
        pos = upto

    for group, take in zip(groups, chosen, strict=True):
        copy(group[0][1])
        out.extend(f"{x}\n" for x in inserts.get(group[0][1], ()))
        for tag, i1, i2, j1, j2 in group:
            out.extend(a[i1:i2] if tag == "equal" or not take else b[j1:j2])
        pos = group[-1][2]
    copy(len(a))
    out.extend(f"{x}\n" for x in inserts.get(len(a), ()))
    return "".join(out)


def judge(
    old: str, new: str, target: str | bytes | None, *, context: int = 3,
    package: dict[str, str] | None = None, with_sides: bool = False, path: str = PATH,
) -> list[HunkResult]:
    hunks = make_hunks(old, new, context=context, path=path)
    data = target.encode("utf-8", "surrogateescape") if isinstance(target, str) else target
    index = None
    if package is not None:
        files = {p: t.encode() for p, t in package.items()}
        index = PackageIndex(lambda: files)
    return match_file(
        hunks, data, installed_path=path, elsewhere=Elsewhere(index) if index is not None else None,
        base=old.encode() if with_sides else None, head=new.encode() if with_sides else None,
    )


# The matcher's case table, shared by test_matcher.py and test_matcher_cli.py (truth known by construction)
A = HunkStatus.APPLIED
M = HunkStatus.MISSING
P = HunkStatus.PARTIAL
D = HunkStatus.DIVERGED
C = HunkStatus.CONFLICT
R = HunkStatus.RELOCATED
FM = HunkStatus.FILE_MISSING


def module(n: int = 6) -> str:
    """A module of n layer classes whose bodies repeat the same lines (the layer_id trap)."""
    parts = ['"""Layers."""', "import torch", ""]
    for i in range(n):
        parts += [
            f"class Layer{i}(torch.nn.Module):",
            "    def __init__(self, layer_id):",
            "        super().__init__()",
            "        self.layer_id = layer_id",
            "        self.scale = 1.0",
            "",
            "    def forward(self, x):",
            "        y = self.proj(x)",
            "        return y * self.scale",
            "",
        ]
    return "\n".join(parts) + "\n"


BASE = module()


def edit(text: str, cls: int, old: str, new: str) -> str:
    """Replace `old` by `new` inside class Layer{cls} only."""
    head, sep, rest = text.partition(f"class Layer{cls}(")
    body, sep2, tail = rest.partition("\nclass ")
    assert old in body, (old, cls)
    return head + sep + body.replace(old, new, 1) + sep2 + tail


HEAD = edit(
    edit(BASE, 1, "self.layer_id = layer_id", "self.layer_id = layer_id + 1"),
    4, "        return y * self.scale\n", "        y = torch.relu(y)\n        return y * self.scale\n",
)
UNRELATED = "".join(f"UNRELATED_{i} = {i}\n" for i in range(25))


def statuses(results: list) -> list[HunkStatus]:  # type: ignore[type-arg]
    return [r.status for r in results]


# (name, base, head, target, expected statuses, expected normalisation or None)
CASES: list[tuple[str, str, str, str | None, list[HunkStatus], str | None]] = [
    ("applied exact", BASE, HEAD, HEAD, [A, A], None),
    ("missing exact", BASE, HEAD, BASE, [M, M], None),
    ("applied, offset above", BASE, HEAD, UNRELATED + HEAD, [A, A], None),
    ("missing, offset above", BASE, HEAD, UNRELATED + BASE, [M, M], None),
    ("applied, lines between hunks", BASE, HEAD,
     edit(HEAD, 2, "        self.scale = 1.0\n", "        self.scale = 1.0\n" + UNRELATED), [A, A], None),
    ("subset: first only", BASE, HEAD, apply_some(BASE, HEAD, [True, False]), [A, M], None),
    ("subset: second only", BASE, HEAD, apply_some(BASE, HEAD, [False, True]), [M, A], None),
    ("trailing spaces", BASE, HEAD, HEAD.replace("layer_id + 1\n", "layer_id + 1   \n"), [A, A],
     "trailing-space"),
    ("tabs for spaces", BASE, HEAD, HEAD.replace("        y = torch.relu", "\t\ty = torch.relu"),
     [A, A], "whitespace"),
    ("quote style", BASE.replace('"""Layers."""', "x = 'a'"),
     HEAD.replace('"""Layers."""', 'x = "b"'), HEAD.replace('"""Layers."""', "x = 'b'"),
     [A, A, A], "quotes"),
    ("crlf target", BASE, HEAD, HEAD.replace("\n", "\r\n"), [A, A], None),
    ("crlf target missing", BASE, HEAD, BASE.replace("\n", "\r\n"), [M, M], None),
    ("conflict markers", BASE, HEAD, edit(
        HEAD, 1, "        self.layer_id = layer_id + 1\n",
        "<<<<<<< HEAD\n        self.layer_id = layer_id\n=======\n"
        "        self.layer_id = layer_id + 1\n>>>>>>> pr\n"), [C, A], None),
    ("diverged", BASE, HEAD, edit(BASE, 1, "        self.layer_id = layer_id\n",
                                  "        self.layer_id = compute(layer_id)\n"), [D, M], None),
]


# -- the table end to end (a repository, a tree, the CLI): CASES and cases only a repository shows --

OTHER = "pkg/other.py"
INIT = "pkg/__init__.py"
BLOCK = "def helper(value):\n    scaled = value * factor\n    return clamp(scaled, low, high)\n"
NUMBERS = "".join(f"line {i}\n" for i in range(30))

EXTRA: list[tuple[str, str, str, str | None, list[HunkStatus], str]] = [
    ("relocated", NUMBERS, NUMBERS.replace("line 10\n", "line 10\n" + BLOCK), NUMBERS,
     [R], "import x\n\n" + BLOCK),
    ("file missing", BASE, HEAD, None, [FM, FM], "x = 1\n"),
    ("moved module", BASE, HEAD, None, [R, R], HEAD),
    ("partial", NUMBERS, NUMBERS.replace("line 10\n", "LINE 10\n").replace("line 12\n", "LINE 12\n"),
     NUMBERS.replace("line 10\n", "LINE 10\n"), [P], "x = 1\n"),
    ("deleted file, gone", BASE, "", None, [A], "x = 1\n"),
    ("deleted file, kept", BASE, "", BASE, [M], "x = 1\n"),
    ("new file", "", HEAD, HEAD, [A], "x = 1\n"),
    ("new file, rewritten", "", "def f():\n    return 1\n", "def g():\n    return 2\n", [D],
     "x = 1\n"),
]
TABLE = [(name, b, h, t, want, "x = 1\n") for name, b, h, t, want, _ in CASES] + EXTRA


def case_repo(tmp_path: Path, base: str, head: str, target: str | None, other: str) -> tuple[Path, Path]:
    """A repository whose PR #1 turns `base` into `head` at PATH (empty: no file), and a tree holding
    `target` there (None: no file) beside the package's other files."""
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {INIT: "", OTHER: "x = 1\n", **({PATH: base} if base else {})})
    repo.branch("pr")
    repo.commit("the change", {PATH: head or None})
    repo.pr_ref(1)
    repo.git("checkout", "--quiet", "main")
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / INIT).write_text("")
    (tree / OTHER).write_text(other)
    if target is not None:
        (tree / PATH).write_bytes(target.encode("utf-8", "surrogateescape"))
    return repo.path, tree
