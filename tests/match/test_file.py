"""The matcher on constructed cases whose truth is known by construction: every status, every trap."""

from __future__ import annotations

import pytest

from helpers.matcher import (
    BASE,
    CASES,
    FM,
    HEAD,
    PATH,
    UNRELATED,
    A,
    D,
    M,
    P,
    R,
    apply_some,
    edit,
    judge,
    make_hunks,
    statuses,
)
from prstack.match.file import PackageIndex, decode, match_file
from prstack.match.text import blob_id
from prstack.models import FileChange, Hunk, HunkStatus


@pytest.mark.parametrize(("name", "base", "head", "target", "want", "norm"), CASES,
                         ids=[c[0] for c in CASES])
def test_case_table(name: str, base: str, head: str, target: str | None,
                    want: list[HunkStatus], norm: str | None) -> None:
    for with_sides in (False, True):
        results = judge(base, head, target, with_sides=with_sides)
        assert statuses(results) == want, (name, with_sides, [r.evidence for r in results])
        if norm is not None:
            assert norm in {r.evidence.normalisation for r in results}


def test_repeated_line_judged_at_its_place() -> None:
    """Layer1's line changed; Layer3 already holds the changed text: Layer1 itself is what counts."""
    base = BASE
    head = edit(BASE, 1, "self.layer_id = layer_id", "self.layer_id = layer_id + 1")
    target = edit(BASE, 3, "self.layer_id = layer_id", "self.layer_id = layer_id + 1")
    for ctx in (0, 1, 3):
        results = judge(base, head, target, context=ctx)
        assert statuses(results) == [M], ctx
        assert statuses(judge(base, head, head, context=ctx)) == [A]


def test_repeated_change_in_every_block() -> None:
    """The same one-line change in all six identical classes, only some applied in the target."""
    head = BASE.replace("self.layer_id = layer_id", "self.layer_id = layer_id + 1")
    for ctx in (1, 3):
        hunks = make_hunks(BASE, head, context=ctx)
        assert len(hunks) == 6
        pattern = [True, False, False, True, True, False]
        target = apply_some(BASE, head, pattern, context=ctx)
        for shift in ("", UNRELATED):
            results = judge(BASE, head, shift + target, context=ctx)
            assert [r.status is A for r in results] == pattern


def test_whitespace_only_change_is_never_applied_by_normalising() -> None:
    base = "def f():\n    a = 1\n    b = 2\n    c = 3\n"
    head = "def f():\n    a = 1\n    b =  2\n    c = 3\n"
    assert statuses(judge(base, head, base)) == [M]
    assert statuses(judge(base, head, head)) == [A]
    reindent = "if x:\n    a()\n    b()\n"
    nested = "if x:\n    a()\n    if y:\n        b()\n"
    assert statuses(judge(reindent, nested, reindent)) == [M]


def test_rewrapped_call_arguments() -> None:
    base = "def f():\n    a = 1\n    call(a, b)\n    return a\n"
    head = "def f():\n    a = 1\n    call(a, b, c)\n    return a\n"
    target = "def f():\n    a = 1\n    call(\n        a,\n        b,\n        c,\n    )\n    return a\n"
    results = judge(base, head, target)
    assert statuses(results) == [A]
    assert results[0].evidence.normalisation == "rewrapped"
    old_wrapped = "def f():\n    a = 1\n    call(\n        a,\n        b,\n    )\n    return a\n"
    assert statuses(judge(base, head, old_wrapped)) == [M]


def test_pure_addition_and_deletion() -> None:
    base = "".join(f"line {i}\n" for i in range(30))
    added = base.replace("line 10\n", "line 10\nnew line a\nnew line b\n")
    deleted = base.replace("line 20\n", "")
    for head in (added, deleted):
        assert statuses(judge(base, head, head)) == [A]
        assert statuses(judge(base, head, base)) == [M]
        assert statuses(judge(base, head, UNRELATED + head)) == [A]


def test_adjacent_hunks() -> None:
    base = "".join(f"line {i}\n" for i in range(30))
    head = base.replace("line 10\n", "LINE 10\n").replace("line 14\n", "LINE 14\n")
    hunks = make_hunks(base, head, context=1)
    assert len(hunks) == 2
    for pattern in ([True, True], [True, False], [False, True], [False, False]):
        target = apply_some(base, head, pattern, context=1)
        results = judge(base, head, target, context=1)
        assert [r.status is A for r in results] == pattern
        assert all(r.status in (A, M) for r in results)


def test_partial_hunk_lists_lines() -> None:
    base = "".join(f"line {i}\n" for i in range(30))
    head = base.replace("line 10\n", "LINE 10\n").replace("line 12\n", "LINE 12\n")
    target = base.replace("line 10\n", "LINE 10\n")
    (result,) = judge(base, head, target)
    assert result.status is P
    assert "+LINE 10" in result.evidence.applied_lines
    assert "+LINE 12" in result.evidence.missing_lines
    assert result.found_line is not None


def test_partial_line_level() -> None:
    base = "def f():\n    a = 1\n    return a\n"
    head = "def f():\n    a = 1\n    b = compute(a)\n    c = finish(b)\n    return a\n"
    target = "def f():\n    a = 1\n    b = compute(a)\n    return a\n"
    assert statuses(judge(base, head, target)) == [P]


def test_diverged_region_rewritten() -> None:
    base = "".join(f"line {i}\n" for i in range(30))
    head = base.replace("line 15\n", "line fifteen\n")
    target = base.replace("line 15\n", "something else entirely\n")
    assert statuses(judge(base, head, target)) == [D]


def test_non_utf8_bytes() -> None:
    base = "".join(f"line {i}\n" for i in range(20)) + "name = '\udce9t\udce9'\n"
    head = base.replace("line 5\n", "line five\n")
    target = head.encode("utf-8", "surrogateescape")
    assert b"\xe9" in target
    assert statuses(judge(base, head, target)) == [A]
    base2 = base.replace("line 19\n", "caf\udce9 = 1\n")
    head2 = base2.replace("caf\udce9 = 1\n", "caf\udce9 = 2\n")
    assert statuses(judge(base2, head2, head2)) == [A]
    assert statuses(judge(base2, head2, base2)) == [M]


def test_empty_file_and_new_file() -> None:
    new = "def f():\n    return 1\n"
    assert statuses(judge("", new, new)) == [A]
    assert statuses(judge("", new, None)) == [FM]
    assert statuses(judge("", new, "")) == [M]  # the pre-image of a new file is empty
    assert statuses(judge("", new, "def g():\n    return 2\n")) == [D]
    assert decode(b"") == []
    assert decode(b"a\r\nb\r\n") == ["a", "b"]
    assert decode(b"a\nb") == ["a", "b"]


def test_deleted_file() -> None:
    old = "def f():\n    return 1\n"
    assert statuses(judge(old, "", None)) == [A]
    assert statuses(judge(old, "", old)) == [M]


def test_file_missing_and_relocated() -> None:
    base = "".join(f"line {i}\n" for i in range(30))
    block = "def helper(value):\n    scaled = value * factor\n    return clamp(scaled, low, high)\n"
    head = base.replace("line 10\n", "line 10\n" + block)
    other = "import x\n\n" + block + "\n"
    results = judge(base, head, None, package={"pkg/other.py": other})
    assert statuses(results) == [R]
    assert results[0].found_path == "pkg/other.py"
    assert results[0].found_line == 3
    assert statuses(judge(base, head, base, package={"pkg/other.py": other})) == [R]
    assert statuses(judge(base, head, None, package={"pkg/other.py": "nothing"})) == [FM]
    assert statuses(judge(base, head, None)) == [FM]


def test_trivial_lines_never_relocate() -> None:
    base = "".join(f"line {i}\n" for i in range(30))
    head = base.replace("line 10\n", "line 10\n    pass\n)\n\n    return\n@property\n")
    other = "x = 1\n    pass\n)\n\n    return\n@property\n"
    assert statuses(judge(base, head, None, package={"pkg/other.py": other})) == [FM]
    assert statuses(judge(base, head, base, package={"pkg/other.py": other})) == [M]


def test_copied_small_block_is_not_a_move() -> None:
    """The old lines are still in place: a short added line found elsewhere proves nothing."""
    base = "".join(f"line {i}\n" for i in range(30))
    head = base.replace("line 10\n", "line 10\nimport functools\n")
    other = "import functools\n"
    assert statuses(judge(base, head, base, package={"pkg/other.py": other})) == [M]


def _file_hunk(change: FileChange, old_blob: str | None = None, new_blob: str | None = None) -> Hunk:
    return Hunk(1, PATH, PATH, change, 0, 0, 0, 0, (), (), old_blob, new_blob)


def test_binary_mode_rename() -> None:
    old, new = b"\x00\x01old", b"\x00\x01new"
    hunk = _file_hunk(FileChange.BINARY, blob_id(old), blob_id(new))
    assert match_file([hunk], new, installed_path=PATH)[0].status is A
    assert match_file([hunk], old, installed_path=PATH)[0].status is M
    assert match_file([hunk], b"other", installed_path=PATH)[0].status is D
    assert match_file([hunk], None, installed_path=PATH)[0].status is FM
    short = _file_hunk(FileChange.BINARY, blob_id(old)[:7], blob_id(new)[:7])
    assert match_file([short], new, installed_path=PATH)[0].status is A
    mode = match_file([_file_hunk(FileChange.MODE)], b"x", installed_path=PATH)[0]
    assert mode.status is HunkStatus.UNVERIFIABLE and not mode.unread  # by design: modes are not in an installed tree
    assert mode.evidence.note is not None
    assert "not verifiable" in mode.evidence.note
    assert match_file([_file_hunk(FileChange.MODE)], None, installed_path=PATH)[0].status is FM
    assert match_file([_file_hunk(FileChange.RENAMED)], b"x", installed_path=PATH)[0].status is A


def test_fast_paths() -> None:
    hunks = make_hunks(BASE, HEAD)
    at_head = match_file(hunks, HEAD.replace("\n", "\r\n").encode(), installed_path=PATH,
                         base=BASE.encode(), head=HEAD.encode())
    assert statuses(at_head) == [A, A]
    assert [r.found_line for r in at_head] == [h.new_start for h in hunks]
    assert at_head[0].evidence.note == "file identical to the PR's head"
    at_base = match_file(hunks, BASE.encode(), installed_path=PATH,
                         base=BASE.encode(), head=HEAD.encode())
    assert statuses(at_base) == [M, M]


def test_found_line_offset_fuzz() -> None:
    results = judge(BASE, HEAD, UNRELATED + HEAD)
    hunks = make_hunks(BASE, HEAD)
    for r, h in zip(results, hunks, strict=True):
        assert r.found_line == h.new_start + 25
        assert r.offset == 25
        assert r.fuzz == 0
        assert r.found_path == PATH


def test_fuzz_when_context_changed() -> None:
    base = "".join(f"line {i}\n" for i in range(30))
    head = base.replace("line 15\n", "line fifteen\n")
    target = head.replace("line 13\n", "line thirteen\n")
    (result,) = judge(base, head, target)
    assert result.status is A
    assert result.fuzz == 2
    assert statuses(judge(base, head, base.replace("line 13\n", "line thirteen\n"))) == [M]


def test_package_index_loads_once() -> None:
    calls = []

    def load() -> dict[str, bytes]:
        calls.append(1)
        return {"a.py": b"x = 1\n"}

    index = PackageIndex(load)
    assert index.files == {"a.py": ["x = 1"]}
    assert index.find_block(["y = 2"]) is None
    assert index.files == {"a.py": ["x = 1"]}
    assert len(calls) == 1


@pytest.mark.slow
def test_fifty_megabyte_file() -> None:
    """Right verdicts on a 50 MB file, with and without the sides (speed is measured in bench/)."""
    body = "".join(f"value_{i} = compute({i}, 'k{i % 97}')\n" for i in range(1_400_000))
    assert len(body) > 50_000_000
    base = body
    head = body.replace("value_10 = ", "value_10  = alt + ", 1).replace(
        "value_1200000 = ", "value_1200000 = alt + ", 1)
    hunks = make_hunks(base, head)
    for target, want, sides in ((head, [A, A], False), (base, [M, M], False),
                                ("# header\n" + head, [A, A], True),
                                ("# header\n" + base, [M, M], True)):
        results = match_file(hunks, target.encode(), installed_path=PATH,
                             base=base.encode() if sides else None,
                             head=head.encode() if sides else None)
        assert statuses(results) == want


def test_addition_at_end_of_file_stays_applied_when_more_is_appended() -> None:
    """A hunk that appends at the end of a file (no trailing context) is applied when a later PR
    appends more after it: the longer new image wins over the bare context at the same place."""
    base = "def test_one():\n    run()\n    assert a == 1\n    assert b == 1\n"
    head = base + "\n\ndef test_two():\n    assert keys == [1, 2]\n"
    later = head + "\n\ndef test_three():\n    assert window == 2\n"
    assert statuses(judge(base, head, later)) == [A]
    assert statuses(judge(base, head, base + "\n\ndef test_three():\n    assert window == 2\n")) == [M]


def test_twin_function_does_not_stand_in_for_the_place() -> None:
    """Two identical functions; the PR edits the second. The target rewrote the second and made
    the edit in the first: the second place decides (diverged), with or without head/base."""
    twin = "def {name}():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    e = 5\n    return a\n\n"
    base = "x = 0\n\n" + twin.format(name="f") + "\n".join(f"# spacer {i}" for i in range(20)) \
        + "\n\n" + twin.format(name="f")
    head = base[: base.rindex("    c = 3")] + "    c = 30\n" + base[base.rindex("    d = 4"):]
    target = (base.replace("    c = 3\n", "    c = 30\n", 1)[: base.rindex("    c = 3") + 1]
              + "    c = compute()\n" + base[base.rindex("    d = 4"):])
    assert target.count("c = 30") == 1
    assert target.count("c = compute()") == 1
    for sides in (False, True):
        assert statuses(judge(base, head, target, with_sides=sides)) == [D], sides


def test_pure_addition_among_repeated_context_after_an_unrelated_line() -> None:
    """Found by hypothesis: every context line repeats, so the bare context also sits one line
    before the applied post-image; the post-image within a few lines of the place wins."""
    base = "stmt_0(x)\n" * 4
    head = base + "stmt_final(x)\n"
    assert statuses(judge(base, head, "unrelated = 0\n" + head)) == [A]
    assert statuses(judge(base, head, "unrelated = 0\n" + base)) == [M]
    assert statuses(judge(base, head, head)) == [A]


def test_a_pure_addition_is_not_applied_by_a_copy_of_its_line_elsewhere() -> None:
    """A one-line addition whose region was rewritten: the same line stands in another method,
    30 lines away, with one line of the same context. Without a head to anchor it (a patch),
    that copy is not the hunk's change: not applied."""
    from prstack.diff.hunks import parse_diff

    filler = "".join(f"    # filler {i}\n" for i in range(30))
    method_a = "    def a(self):\n        x = compute_a()\n        self.prepare()\n        return self\n\n"
    method_b = ("    def b(self):\n        x = compute_b()\n        self.prepare()\n        self.validate()\n"
                "        return self\n")
    diff = ("diff --git a/k.py b/k.py\n--- a/k.py\n+++ b/k.py\n@@ -2,6 +2,7 @@ class K:\n"
            "     def a(self):\n         x = compute_a()\n         self.prepare()\n"
            "+        self.validate()\n         return self\n \n     # filler 0\n")
    (hunk,) = parse_diff(diff, 1)
    rewritten = method_a.replace("compute_a()", "compute_a2()").replace("self.prepare()", "self.setup()")
    target = ("class K:\n" + rewritten + filler + method_b).encode()
    (result,) = match_file([hunk], target, installed_path="k.py")
    assert result.status is not HunkStatus.APPLIED, result
    applied = ("class K:\n" + method_a.replace("        return self", "        self.validate()\n        return self")
               + filler + method_b).encode()
    (result,) = match_file([hunk], ("# moved down\n" * 12).encode() + applied, installed_path="k.py")
    assert result.status is HunkStatus.APPLIED  # its place moved: the whole image is found there
