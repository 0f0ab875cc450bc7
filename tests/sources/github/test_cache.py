"""The on-disk cache: round trips, atomic writes, corruption dropped, info and clear."""

from __future__ import annotations

from pathlib import Path

import pytest

from prstack.sources.github.cache import CACHE_ENV, Cache, decode_entry, default_cache_root, encode_entry


def test_round_trip_and_location(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    assert cache.get("github/h/o/r/pulls", "1") is None
    cache.put("github/h/o/r/pulls", "1", {"raw": {"title": "t"}, "etag": 'W/"x"'})
    assert cache.get("github/h/o/r/pulls", "1") == {"raw": {"title": "t"}, "etag": 'W/"x"'}
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["1.json"]


def test_env_override(tmp_path: Path) -> None:
    assert default_cache_root({CACHE_ENV: str(tmp_path)}) == tmp_path
    assert default_cache_root({}).name.lower() == "prstack" or "prstack" in str(
        default_cache_root({})
    )


def test_keys_cannot_leave_the_cache(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c")
    cache.put("../../evil", "../../x", 1)
    assert cache.get("../../evil", "../../x") == 1
    assert all(p.is_relative_to(tmp_path / "c") for p in tmp_path.rglob("*") if p.is_file())


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # truncated
        lambda b: b.replace(b'"t"', b'"u"'),  # edited
        lambda b: b"",  # empty
        lambda b: b"garbage\x00\xff",  # not an entry
        lambda b: b.split(b"\n", 1)[1],  # header lost
    ],
    ids=["truncated", "edited", "empty", "garbage", "no-header"],
)
def test_corrupt_entry_is_dropped_not_trusted(tmp_path: Path, damage: object) -> None:
    cache = Cache(tmp_path)
    cache.put("ns", "k", {"title": "t"})
    path = next(tmp_path.rglob("k.json"))
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    assert cache.get("ns", "k") is None
    assert not path.exists()
    assert cache.dropped == [path]


def test_entry_encoding_checks_the_payload() -> None:
    data = encode_entry([1, 2])
    assert decode_entry(data) == [1, 2]
    with pytest.raises(ValueError):
        decode_entry(data + b" ")


def test_write_is_atomic_and_leaves_no_temp_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = Cache(tmp_path)
    cache.put("ns", "k", {"v": 1})

    def boom(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("prstack.sources.github.cache.os.replace", boom)
    with pytest.raises(Exception, match="cannot write the cache"):
        cache.put("ns", "k", {"v": 2})
    monkeypatch.undo()
    assert cache.get("ns", "k") == {"v": 1}
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["k.json"]


def test_info_and_clear(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    cache.put("a", "1", 1)
    cache.put("b", "2", 2)
    (cache.git_dir("github.com", "acme", "widget") / "objects").mkdir(parents=True)
    info = cache.info()
    assert (info.entries, info.repos) == (2, ("github.com/acme/widget",))
    assert info.size > 0
    cleared = cache.clear()
    assert cleared.entries == 2
    assert cache.info().entries == 0 and cache.info().repos == ()
