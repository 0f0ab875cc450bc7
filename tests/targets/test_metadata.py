"""Pure metadata reading: version local parts, PEP 610 direct_url.json, forge URLs, RECORD rows."""

from __future__ import annotations

import json
from email.parser import HeaderParser
from importlib import metadata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prstack.placement.forge import repo_slug
from prstack.targets.confined import ConfinedDistribution, confined_distributions
from prstack.targets.metadata import (
    VersionInfo,
    commit_from_direct_url,
    commit_from_version,
    core_metadata,
    header_fields,
    metadata_of,
    parse_direct_url,
    parse_version,
    top_level_names,
)
from prstack.targets.record import RecordEntry, check_entries, parse_record, record_digest

VERSIONS = [
    ("0.20.2.dev123+g3cfc8f8b7", VersionInfo("0.20.2.dev123+g3cfc8f8b7", "3cfc8f8b7", 123)),
    ("0.3.1.dev2+g077986dfa.d20260514", VersionInfo("0.3.1.dev2+g077986dfa.d20260514", "077986dfa", 2, "2026-05-14")),
    ("1.0+d20260514", VersionInfo("1.0+d20260514", None, None, "2026-05-14")),
    ("1.2.post4+g1a2b3c4", VersionInfo("1.2.post4+g1a2b3c4", "1a2b3c4", 4)),  # versioningit's default
    ("0.10.1.dev5+g3cfc8f8b7.d20260514123045.cu129",
     VersionInfo("0.10.1.dev5+g3cfc8f8b7.d20260514123045.cu129", "3cfc8f8b7", 5, "2026-05-14", ("cu129",))),
    ("0.9.1+cu126", VersionInfo("0.9.1+cu126", extra=("cu126",))),
    ("2.0+3cfc8f8b7e", VersionInfo("2.0+3cfc8f8b7e", "3cfc8f8b7e")),  # a bare hex local part
    ("2.0+git.3cfc8f8", VersionInfo("2.0+git.3cfc8f8", "3cfc8f8", extra=("git",))),
    ("2.0+git3cfc8f8", VersionInfo("2.0+git3cfc8f8", "3cfc8f8")),
    ("2.0+20260514", VersionInfo("2.0+20260514", extra=("20260514",))),  # digits only: a date, not a commit
    ("1.0.0", VersionInfo("1.0.0")),
]


@pytest.mark.parametrize(("version", "expected"), VERSIONS, ids=[v for v, _ in VERSIONS])
def test_version_local_parts(version: str, expected: VersionInfo) -> None:
    got = parse_version(version)
    assert got == expected
    assert commit_from_version(version) == expected.commit


def test_dirty_flag() -> None:
    assert parse_version("1+g1234567.d20260101").dirty and not parse_version("1+g1234567").dirty


def test_direct_url_vcs_with_credentials_stripped() -> None:
    text = json.dumps({"url": "https://user:tok3n@github.com/someone/vllm.git",
                       "vcs_info": {"vcs": "git", "commit_id": "3cfc8f8b7" + "0" * 31,
                                    "requested_revision": "refs/pull/40898/head"}})
    d = parse_direct_url(text)
    assert d is not None
    assert (d.kind, d.url, d.vcs) == ("vcs", "https://github.com/someone/vllm.git", "git")
    assert d.requested_revision == "refs/pull/40898/head"
    assert d.shown == "github.com/someone/vllm@3cfc8f8b7"
    assert d.repo == "someone/vllm"
    assert commit_from_direct_url(text) == "3cfc8f8b7" + "0" * 31
    assert "tok3n" not in repr(d)


def test_direct_url_archive_dir_and_junk() -> None:
    archive = parse_direct_url(json.dumps({"url": "https://x/p.tar.gz", "archive_info": {"hashes": {"sha256": "ab"}}}))
    assert archive is not None and (archive.kind, archive.archive_hash) == ("archive", "sha256=ab")
    legacy = parse_direct_url(json.dumps({"url": "https://x/p.whl", "archive_info": {"hash": "sha256=cd"}}))
    assert legacy is not None and legacy.archive_hash == "sha256=cd"
    folder = parse_direct_url(json.dumps({"url": "file:///src/p", "dir_info": {"editable": True}}))
    assert folder is not None and folder.kind == "dir" and folder.editable and folder.repo is None
    assert parse_direct_url("{not json") is None
    assert parse_direct_url(json.dumps(["url"])) is None
    assert parse_direct_url(json.dumps({"url": 3})) is None
    assert parse_direct_url(None) is None
    assert commit_from_direct_url(json.dumps({"url": "u", "vcs_info": {"commit_id": 5}})) is None


@pytest.mark.parametrize(("url", "slug"), [
    ("https://github.com/Someone/VLLM.git", "someone/vllm"),
    ("git+https://github.com/someone/vllm@main", "someone/vllm"),
    ("git+ssh://git@github.com/someone/vllm.git", "someone/vllm"),
    ("git@github.com:someone/vllm.git", "someone/vllm"),
    ("https://github.com/someone/vllm/tree/main/docs", "someone/vllm"),
    ("https://docs.vllm.ai", None),
    ("file:///home/me/vllm", None),
    ("", None),
])
def test_repo_slug(url: str, slug: str | None) -> None:
    assert repo_slug(url) == slug


def test_project_urls_and_top_level() -> None:
    core = core_metadata("vllm", "1", ["Source, https://github.com/vllm-project/vllm", "Docs, https://docs.vllm.ai",
                                       "broken"], "https://github.com/vllm-project/vllm")
    assert core.project_urls[0] == ("Source", "https://github.com/vllm-project/vllm")
    assert core.repos == frozenset({"vllm-project/vllm"})
    assert top_level_names("kvs\n\n", []) == ("kvs",)
    files = ["kvs/__init__.py", "six.py", "_cffi.abi3.so", "kvs-1.dist-info/RECORD", "__editable___kvs_finder.py",
             "../../bin/kvs"]
    assert top_level_names(None, files) == ("_cffi", "kvs", "six")


def test_record_rows_and_checks() -> None:
    data = b"print('hi')\n"
    text = f"pkg/a.py,sha256={record_digest(data)},12\npkg/b.py,sha256=AAAA,3\npkg/RECORD,,\n../../bin/x,,\n\n"
    entries = parse_record(text)
    assert entries[0] == RecordEntry("pkg/a.py", "sha256", record_digest(data), 12)
    files = {"pkg/a.py": data, "pkg/RECORD": b""}
    got = check_entries(entries, files.get)
    assert (got.checked, got.edited, got.absent) == (1, (), ("pkg/b.py",))
    assert got.issues() == {"pkg/b.py": "in RECORD but gone: deleted after install"}
    edited = check_entries(entries, lambda p: b"changed" if p == "pkg/a.py" else None)
    assert edited.edited == ("pkg/a.py",)
    assert record_digest(b"", "no-such-hash") is None


def test_damaged_record_and_unreadable_files_do_not_crash() -> None:
    entries = parse_record('pkg/a.py,sha256=AAAA,3\n"unterminated,quote\npkg/b.py,sha256=BBBB,3\x00\n')
    assert [e.path for e in entries][:1] == ["pkg/a.py"]

    def unreadable(path: str) -> bytes | None:
        raise PermissionError(path)

    got = check_entries(parse_record("pkg/a.py,sha256=AAAA,3\n"), unreadable)
    assert (got.checked, got.edited, got.absent) == (0, (), ())


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_installed_metadata_is_its_header_fields_read_once(tmp_path: Path, end: str) -> None:
    """The fields prstack reads, as importlib gives them, without the body (a README that itself
    holds 'Name:' lines and blank lines); asked again, the same parse."""
    head = ["Metadata-Version: 2.1", "Name: kv-serve", "Version: 1.0", "Summary: A key-value",
            "  server, folded", "Home-page: https://kv.example", "Project-URL: Source, https://github.com/acme/kvserve",
            "Project-URL: Issues, https://github.com/acme/kvserve/issues"]
    body = ["# kv-serve", "", "Name: not-this", "Version: 9.9", "", "Project-URL: X, https://evil.example/x/y"]
    info = tmp_path / "kv_serve-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_bytes(end.join([*head, "", *body, ""]).encode())
    ours = ConfinedDistribution(info).metadata
    theirs = metadata.PathDistribution(info).metadata
    fields = ("Name", "Version", "Home-page", "Download-URL")
    assert [ours[k] for k in fields] == [theirs[k] for k in fields] == ["kv-serve", "1.0", "https://kv.example", None]
    assert metadata_of(ours) == metadata_of(theirs)
    assert ours.get_all("Project-URL") == theirs.get_all("Project-URL") == [
        "Source, https://github.com/acme/kvserve", "Issues, https://github.com/acme/kvserve/issues"]
    dist = ConfinedDistribution(info)
    assert dist.metadata is dist.metadata


FIELD_NAMES = ("Name", "name", "Version", "Project-URL", "Summary", "From", "X", "")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(
    st.sampled_from(["Name: kv", "name:  kv-2 ", "Version:1.0", "Project-URL: Source, https://x/y", "From x",
                     "From: a", ": lost", "  folded", "\tfolded", " ", "Summary:", "X:y:z", "Näme: no", "no colon",
                     "", "From ", "Version: 2\x0c", "Summary: a\x85b", "Summary: \u2028"]),
    st.text(alphabet=" \t:FNromaeX-\x0c\x85", max_size=12)), max_size=12),
    st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=3), st.booleans())
def test_header_fields_are_those_emails_parser_reads(lines: list[str], ends: list[str], last_end: bool) -> None:
    """METADATA's fields as email's HeaderParser reads them, whatever the lines, their ends and folds."""
    text = "".join(line + ends[i % len(ends)] for i, line in enumerate(lines))
    text = text if last_end else text.rstrip("\r\n")
    ours, theirs = header_fields(text), HeaderParser().parsestr(text)
    for name in FIELD_NAMES:
        assert ours.get_all(name) == theirs.get_all(name), (name, text)
        assert ours.get(name) == theirs.get(name) and ours[name] == theirs[name]


def test_header_fields_with_lone_surrogates_are_those_emails_parser_reads() -> None:
    """Text decoded with surrogate escapes is read as email reads it (values with them are its Headers)."""
    text = "Name: kv\udcff\nVersion: 1.0\n"
    ours, theirs = header_fields(text), HeaderParser().parsestr(text)
    assert str(ours.get("Name")) == str(theirs.get("Name")) and ours.get_all("Version") == ["1.0"]


def test_distributions_are_found_as_importlib_finds_them(tmp_path: Path) -> None:
    """Every *.dist-info and *.egg-info folder (any case), grouped by normalised name in the order
    listed, then an *.egg folder's EGG-INFO; a folder that is not there, or a file, holds none."""
    site = tmp_path / "site"
    for name in ("b_pkg-1.0.dist-info", "A.Pkg-2.0.DIST-INFO", "c-1.0.egg-info", "a_pkg-1.0.dist-info",
                 "B-Pkg-0.1.dist-info", "notes", "x.dist-info.bak"):
        (site / name).mkdir(parents=True)
        (site / name / "METADATA").write_text(f"Name: {name}\n")
    egg = tmp_path / "d-1.0.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (tmp_path / "file.zip").write_bytes(b"not a zip")
    dirs = [str(site), str(egg), str(tmp_path / "missing"), str(tmp_path / "file.zip")]
    ours = [d.read_text("METADATA") for d in confined_distributions(dirs)]
    theirs = [d.read_text("METADATA") for d in metadata.distributions(path=dirs)]
    assert ours == theirs and len(ours) == 6
