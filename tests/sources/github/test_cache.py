"""The on-disk cache: round trips, atomic writes, corruption dropped, info and clear."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from prstack.sources.github.cache import CACHE_ENV, Cache, decode_entry, default_cache_root, encode_entry, safe_name


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


def test_names_are_escaped_never_stripped_so_repositories_never_share_a_folder(tmp_path: Path) -> None:
    """`owner/.name` and `owner/name` (and `a_b` and `a/b`, `..`) each get their own folder."""
    cache = Cache(tmp_path)
    dirs = {cache.git_dir("github.com", "owner", n) for n in (".name", "name", "a_b", "a/b", "..", "%2E")}
    assert len(dirs) == 6
    assert all(d.parent == tmp_path / "git" / "github.com" / "owner" for d in dirs)
    assert all(not d.name.startswith(".") for d in dirs)
    cache.put("github/github.com/owner/.name/pulls", "1", {"title": "dot"})
    cache.put("github/github.com/owner/name/pulls", "1", {"title": "plain"})
    assert cache.get("github/github.com/owner/.name/pulls", "1") == {"title": "dot"}
    assert cache.get("github/github.com/owner/name/pulls", "1") == {"title": "plain"}
    assert safe_name("x" * 400) != safe_name("x" * 401) and len(safe_name("x" * 400)) <= 200


def test_the_cache_is_the_users_alone(tmp_path: Path) -> None:
    """Folders the cache makes are 0700 and its files 0600 (code of a private repository stays private)."""
    root = tmp_path / "cache"
    cache = Cache(root)
    cache.put("github/h/o/r/pulls", "1", {"title": "t"})
    repo = cache.git_dir("github.com", "acme", "widget")
    made = [p for p in root.rglob("*") if p.is_dir()] + [root, repo.parent]
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in made} == {oct(0o700)}
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in root.rglob("*") if p.is_file()} == {oct(0o600)}
