"""A file's bytes indexed, or a big alignment made, once: asked again for the same content, the
same answer, never another file's."""

from __future__ import annotations

from prstack.match.index import KEPT_BYTES, FileIndex
from prstack.match.judge import BIG_ALIGN, _align, _aligned


def test_the_same_bytes_get_the_index_made_for_them_and_other_bytes_their_own() -> None:
    data = b"def f():\n    return 1\n"
    first = FileIndex.of(data)
    assert FileIndex.of(bytes(bytearray(data))) is first  # (equal bytes, another object)
    other = FileIndex.of(data.replace(b"1", b"2"))
    assert other is not first and other.lines == ["def f():", "    return 2"]


def test_the_indices_kept_cover_a_bounded_size_the_oldest_going_first() -> None:
    size = KEPT_BYTES // 4
    files = [bytes([65 + i]) * (size - 1) + b"\n" for i in range(6)]
    first = FileIndex.of(files[0])
    for data in files[1:]:
        FileIndex.of(data)
    assert FileIndex.of(files[0]) is not first
    assert FileIndex.of(files[5]) is FileIndex.of(files[5])


def test_a_big_alignment_asked_again_is_the_same_and_its_own_list() -> None:
    a = [f"x = {i % 41}" for i in range(260)]
    b = [f"x = {i % 37}" for i in range(250)]
    assert len(a) * len(b) >= BIG_ALIGN
    expected = _aligned(a, b)
    first = _align(a, b)
    assert first == expected and expected
    first.clear()  # (a caller's list: the one kept is not changed)
    assert _align(list(a), list(b)) == expected
    assert _align(a, b[1:]) == _aligned(a, b[1:]) != expected
