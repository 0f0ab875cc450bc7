"""The matcher's fast paths against plain, slow statements of what they must compute.

Each fast path (the package index, big files decoded only where looked at, stricter levels
searched among the loosest level's finds, anchor votes by block, re-wrap pieces of a whole file)
is checked on cases built so that a shortcut that ignored repeated lines, conflict markers, stray
bytes or non-ASCII whitespace would give a different answer.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.matcher import judge, make_hunks
from helpers.targets import make_wheel
from prstack.errors import PrstackError
from prstack.match import index as index_module
from prstack.match import jobs as jobs_module
from prstack.match import text as text_module
from prstack.match.anchors import Anchors
from prstack.match.file import PackageIndex, match_file
from prstack.match.index import FileIndex
from prstack.match.package import INDEX_MAX_BYTES
from prstack.match.text import (
    LEVELS,
    LOOSEST,
    LazyLines,
    decode,
    normalise_all,
    trivial,
    wrap_pieces,
)
from prstack.models import HunkResult, HunkStatus
from prstack.targets.base import Target, TreeTarget
from prstack.targets.wheel import WheelTarget

A = HunkStatus.APPLIED
M = HunkStatus.MISSING
C = HunkStatus.CONFLICT
R = HunkStatus.RELOCATED
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
loose = LEVELS[LOOSEST][1]


# --- the package index ------------------------------------------------------------------------

def find_slowly(files: dict[str, bytes], block: list[str], exclude: str | None
                ) -> tuple[str, int] | None:
    """The first place, in path order then line order, where the file's non-trivial lines read
    from there are the block's non-trivial lines (whitespace- and quote-insensitively)."""
    wanted = [loose(x) for x in block if not trivial(x)]
    if not wanted:
        return None
    for path in sorted(files):
        if path == exclude or len(files[path]) > INDEX_MAX_BYTES:
            continue
        keys = [loose(x) for x in decode(files[path])]
        for start, key in enumerate(keys):
            if key != wanted[0]:
                continue
            run = [k for k in keys[start:] if not trivial(k)][: len(wanted)]
            if run == wanted:
                return path, start + 1
    return None


POOL = ["a = 1", "a  =  1", "b = 'x'", 'b = "x"', "", "    ", "pass", ")", "# note",
        "call(x)", "\tcall(x)  ", "d = 4\r", "é = 1", "value = compute(a, b)"]
FILE = st.lists(st.sampled_from(POOL), max_size=12).map(lambda ls: "".join(x + "\n" for x in ls))


@SETTINGS
@given(st.dictionaries(st.sampled_from(["a.py", "b.py", "c.py", "d/e.py", "f.py"]), FILE,
                       max_size=5),
       st.lists(st.sampled_from(POOL), min_size=1, max_size=4),
       st.sampled_from([None, "a.py", "b.py", "c.py"]))
@pytest.mark.slow
def test_package_index_finds_what_a_slow_scan_finds(
        files: dict[str, str], block: list[str], exclude: str | None) -> None:
    data = {p: t.encode() for p, t in files.items()}
    assert PackageIndex(lambda: data).find_block(block, exclude=exclude) == find_slowly(
        data, block, exclude)


def test_package_index_walks_past_occurrences_that_are_not_the_block() -> None:
    """The block's rarest line occurs three times; only the last is followed by the rest."""
    rare = "configure_rare_thing(alpha, beta)"
    data = {
        "a.py": f"{rare}\nother()\n".encode(),
        "b.py": f"x = 1\n{rare}\nnothing_here()\n".encode(),
        "c.py": f"{rare}\n\n    follow_up(gamma)\n".encode(),
        "d.py": f"{rare}\nfollow_up(gamma)\n".encode(),
    }
    index = PackageIndex(lambda: data)
    assert index.find_block([rare, "follow_up(gamma)"]) == ("c.py", 1)
    assert index.find_block([rare, "follow_up(gamma)"], exclude="c.py") == ("d.py", 1)
    assert index.find_block([rare, "follow_up(delta)"]) is None


def test_package_index_line_trivial_only_once_normalised() -> None:
    """`else :` is not trivial as written but is once its space goes: it still has to match."""
    data = {"m.py": b"if ok:\n    first_branch(1)\nelse :\n    second_branch(2)\n"}
    block = ["    first_branch(1)", "else:", "    second_branch(2)"]
    assert PackageIndex(lambda: data).find_block(block) == ("m.py", 2)


def test_package_index_stray_bytes_never_join_into_a_character() -> None:
    """b"\\xc3 \\xa9" is two stray bytes with a space between: without the space it would read
    as "é", which it is not."""
    data = {"bad.py": b"name = \xc3 \xa9\nrest_of_it(1)\n", "crlf.py": b"x = 1\rname = 2\r"}
    index = PackageIndex(lambda: data)
    assert index.find_block(["name = é", "rest_of_it(1)"]) is None
    assert index.find_block(["name = \udcc3\udca9", "rest_of_it(1)"]) == ("bad.py", 1)
    assert index.find_block(["x = 1", "name = 2"]) == ("crlf.py", 1)


def test_package_index_skips_huge_files_and_empty_ones() -> None:
    line = "moved_function_body(alpha, beta, gamma)"
    filler = b"# filler\n" * (INDEX_MAX_BYTES // 9 + 1)
    data = {"a_big.py": filler + line.encode() + b"\n", "b_empty.py": b"",
            "c.py": line.encode() + b"\n"}
    assert PackageIndex(lambda: data).find_block([line]) == ("c.py", 1)


@pytest.mark.parametrize("kind", ["tree", "wheel"])
def test_package_index_of_a_target_leaves_out_files_over_its_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    monkeypatch.setattr(jobs_module, "INDEX_MAX_BYTES", 100)
    line = b"moved_function_body(alpha, beta, gamma)\n"
    files = {"pkg/small.py": line, "pkg/exact.py": line + b"#" * (99 - len(line)) + b"\n",
             "pkg/big.py": b"# filler\n" * 12 + line, "pkg/data.bin": line}
    target: Target
    if kind == "tree":
        for rel, data in files.items():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_bytes(data)
        target = TreeTarget(tmp_path)
    else:
        target = WheelTarget(make_wheel(tmp_path, "pkg", "1.0", files))
    index = jobs_module.package_index(target)
    assert sorted(index.data) == ["pkg/exact.py", "pkg/small.py"]  # big.py: 108 bytes; data.bin: not text
    assert list(index.find_all([line.decode().strip()])) == [("pkg/exact.py", 1), ("pkg/small.py", 1)]


# --- big files ----------------------------------------------------------------------------------

@SETTINGS
@given(st.lists(st.sampled_from([b"\n", b"\r", b"\r\n", b"a", b"bc", b"\xe2", b"\x82\xac",
                                 b"\xc3\xa9"]), max_size=25).map(b"".join),
       st.integers(0, 30), st.integers(0, 30))
@pytest.mark.slow
def test_lazy_lines_are_the_decoded_lines(data: bytes, a: int, b: int) -> None:
    class Small(LazyLines):
        CHUNK = 4  # many chunks, lines across them

    want = decode(data)
    got = Small(data)
    assert got.count == len(want)
    assert got.get(a, b) == want[a:b]
    assert got.all() == want


def big_module(lines: int) -> str:
    return "".join(f"entry_{i} = table_value({i}, 'k{i % 31}')\n" for i in range(lines))


@pytest.mark.slow
def test_big_file_decoded_only_where_looked_at_gives_the_same_verdicts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    body = big_module(120_000)
    assert len(body) > index_module.LAZY_BYTES
    head = body.replace("entry_100 = ", "entry_100 = 1 + ", 1).replace(
        "entry_110000 = ", "entry_110000 = 2 + ", 1)
    hunks = make_hunks(body, head)

    def run(target: str, sides: bool) -> list[HunkResult]:
        return match_file(hunks, target.encode(), installed_path="m.py",
                          base=body.encode() if sides else None,
                          head=head.encode() if sides else None)

    for target, want in ((head, [A, A]), (body, [M, M]), (head.replace("\n", "\r\n"), [A, A]),
                         ("# header\n" + head, [A, A]), (head.replace("entry_5 ", "e5 "), [A, A])):
        for sides in (False, True):
            lazy = run(target, sides)
            with monkeypatch.context() as patch:
                patch.setattr(index_module, "LAZY_BYTES", 1 << 40)  # decoded whole
                assert run(target, sides) == lazy
            assert [r.status for r in lazy] == want, (target[:20], sides)


@pytest.mark.slow
def test_big_file_conflict_far_from_its_markers_start() -> None:
    """A conflict block opened far above the hunk still covers it: a direct look at the hunk's
    lines alone must not say applied."""
    body = big_module(120_000)
    head = body.replace("entry_110000 = ", "entry_110000 = 2 + ", 1)
    at = head.index("entry_109000 = ")
    end = head.index("\n", head.index("entry_110500 = ")) + 1
    target = head[:at] + "<<<<<<< ours\n" + head[at:end] + "=======\n>>>>>>> theirs\n" + head[end:]
    (result,) = match_file(make_hunks(body, head), target.encode(), installed_path="m.py")
    assert result.status is C


# --- stricter levels among the loosest level's finds --------------------------------------------

LINES = st.lists(st.sampled_from(["a = 1", "a  = 1", "a = 1 ", "b = 'x'", 'b = "x"', "", "c()",
                                  "a = 1\u00a0", "\tc()"]), max_size=14)


@SETTINGS
@given(LINES, st.lists(st.sampled_from(["a = 1", 'b = "x"', "c()", "", "a  = 1"]),
                       min_size=1, max_size=3),
       st.integers(-2, 16), st.integers(0, 10), st.sampled_from([None, 0, 1, 3, 70]))
@pytest.mark.slow
def test_search_among_loose_finds_is_the_search(lines: list[str], image: list[str], expected: int,
                                                 min_start: int, radius: int | None) -> None:
    idx = FileIndex(list(lines))
    ref = FileIndex(list(lines))
    base = 3 if radius is None else radius + 2
    found = idx.matches(tuple(normalise_all(image, LOOSEST)), expected, base)
    levels = [0, 2, 3] + ([1] if idx.plain_trailing() and all(
        x.rstrip() == x.rstrip(" \t\f\v\r") for x in image) else [])
    for level in levels:
        img = normalise_all(list(image), level)
        want = ref.find(img, level, expected, min_start=min_start, radius=radius)
        if want is not None and abs(want - expected) > base:
            continue  # (beyond the loose search's radius: not asked of it)
        assert idx.find_among(found, img, level, expected, min_start=min_start,
                              radius=radius) == want, level


@SETTINGS
@given(st.lists(st.text(alphabet=" \t\f\v\r'\"a\u00e9\u00a0\u2028\udcff", max_size=8), max_size=6))
def test_a_line_normalised_alone_is_as_within_its_file(lines: list[str]) -> None:
    """At every level, a line normalised on its own (as blocks and hunk lines are) equals the
    same line normalised with the rest of its file (as the index does), ASCII or not, whatever
    mix of ASCII and other whitespace, quotes and undecodable bytes it holds."""
    for level, (_, norm) in enumerate(LEVELS):
        assert [norm(line) for line in lines] == normalise_all(list(lines), level)


def test_trailing_non_ascii_space_is_still_a_trailing_space() -> None:
    """A no-break space after the changed line: the trailing-space level finds it, although the
    loosest level (which keeps non-ASCII spaces) does not; its search must not be skipped."""
    base = "def f():\n    a = 1\n    b = 2\n    c = 3\n"
    head = base.replace("b = 2", "b = 20")
    target = head.replace("b = 20\n", "b = 20\u00a0\n")
    (result,) = judge(base, head, target)
    assert result.status is A
    assert result.evidence.normalisation == "trailing-space"
    (result,) = judge(base, head, base.replace("b = 2\n", "b = 2\u00a0\n"))
    assert result.status is M


# --- anchors --------------------------------------------------------------------------------------

def window_slowly(ref: list[str], target: list[str], line0: int, end0: int, look_back: int
                  ) -> tuple[int, int] | None:
    """The nearest five reference lines before line0 and from end0 on (within look_back lines)
    that occur exactly once in the target and are not trivial; the median of their shifts."""
    guesses = []
    for side in (range(min(line0, len(ref)) - 1, max(-1, line0 - look_back), -1),
                 range(max(0, end0), min(len(ref), end0 + look_back))):
        shifts = [target.index(ref[h]) - h for h in side
                  if target.count(ref[h]) == 1 and not trivial(ref[h])][:5]
        if shifts:
            guesses.append(line0 + statistics.median_high(shifts))
    return (min(guesses), max(guesses)) if guesses else None


REF = st.lists(st.sampled_from([f"line_{i}()" for i in range(80)] + ["", "pass", ")"]),
               max_size=60, unique=True).flatmap(
    lambda ls: st.lists(st.sampled_from(ls or [""]), max_size=4).map(lambda extra: ls + extra))


@SETTINGS
@given(REF, st.data(), st.integers(-3, 65), st.integers(0, 8))
@pytest.mark.slow
def test_anchor_window_is_the_median_of_the_nearest_votes(
        ref: list[str], data: st.DataObject, line0: int, size: int) -> None:
    class Small(Anchors):
        LOOK_BACK = 12

    # the target: the reference shuffled a little, some lines dropped, some doubled
    target = data.draw(st.permutations(ref)) if data.draw(st.booleans()) else list(ref)
    target = [x for x in target if data.draw(st.integers(0, 5))] + data.draw(REF)[:3]
    got = Small("".join(x + "\n" for x in ref).encode(), FileIndex(target)).window(
        line0, line0 + size)
    assert got == window_slowly(ref, target, line0, line0 + size, Small.LOOK_BACK)


def test_anchor_window_on_a_shuffled_file() -> None:
    """Every line unique, in another order: the nearest votes, not any five, make the median."""
    class Small(Anchors):
        LOOK_BACK = 12

    dense = [f"line_{i}()" for i in range(40)]
    sparse = [f"line_{i}()" if i % 3 == 0 else "" for i in range(40)]  # votes 3 lines apart
    for ref in (dense, sparse):
        target = sorted(ref, key=lambda x: x[::-1])  # (a fixed scramble)
        for line0 in range(-2, 44):
            got = Small("".join(x + "\n" for x in ref).encode(), FileIndex(target)).window(
                line0, line0 + 2)
            assert got == window_slowly(ref, target, line0, line0 + 2, Small.LOOK_BACK), line0


# --- re-wrap pieces -----------------------------------------------------------------------------

PIECE = st.lists(st.sampled_from(["", ",", ")", "]", "}", "a", "'", " ", ",)", "(", "b,"]),
                 max_size=4).map("".join)


@SETTINGS
@given(st.lists(PIECE, max_size=12), st.integers(0, 14), st.integers(-3, 14))
@pytest.mark.slow
def test_wrap_window_is_wrap_pieces_of_the_window(lines: list[str], lo: int, hi: int) -> None:
    lo = min(lo, len(lines))
    text, starts = FileIndex(list(lines)).wrap_window(lo, hi)
    pieces = wrap_pieces(lines[lo:hi])
    assert text == "".join(pieces)
    assert starts == [sum(len(p) for p in pieces[:i]) for i in range(len(pieces) + 1)]


def test_trivial_lines() -> None:
    assert trivial("") and trivial("   )") and trivial("# short note") and trivial("@property")
    assert trivial("@functools.cache()") and trivial("else:") and trivial("return None")
    assert not trivial("# a longer comment line") and not trivial("@decorate(with_args)")
    assert not trivial("x = 1") and not trivial("else :")
    assert text_module.has_markers(b"a\n<<<<<<< ours\n") and not text_module.has_markers(b"a < b\n")


def test_package_index_is_read_once_on_first_use() -> None:
    calls: list[int] = []
    line = "moved_function_body(alpha, beta, gamma)"

    def load() -> dict[str, bytes]:
        calls.append(1)
        return {"a.py": f"{line}\n".encode(), "b.py": f"x = 1\n{line}\n".encode()}

    index = PackageIndex(load)
    assert calls == []  # nothing read until a block is looked for
    assert index.find_block([line]) == ("a.py", 1)
    assert index.find_block([line], exclude="a.py") == ("b.py", 2)
    assert list(index.find_all([line])) == [("a.py", 1), ("b.py", 2)]
    assert index.find_block(["not_in_the_package()"]) is None
    assert calls == [1]


def test_package_index_read_error_raised_where_it_is_used() -> None:
    def load() -> dict[str, bytes]:
        raise PrstackError("cannot read the target: check its permissions")

    index = PackageIndex(load)
    with pytest.raises(PrstackError, match="permissions"):
        index.find_block(["moved_function_body(alpha, beta, gamma)"])
