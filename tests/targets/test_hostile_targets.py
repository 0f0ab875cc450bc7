"""Hostile targets on real files in tmp_path: symlinks out, FIFOs, huge files, RECORD rows out,
damaged wheel members, hostile .git/HEAD refs. Never a traceback, never outside the root, never hung."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.ghserver import build_stack, export_tree
from prstack.errors import InputError
from prstack.targets.base import TreeTarget
from prstack.targets.confined import Unreadable, read_confined, size_confined
from prstack.targets.editable import git_head
from prstack.targets.installed import InstalledDistribution, dist_files, find_distributions
from prstack.targets.record import check_installed, parse_record
from prstack.targets.wheel import WheelTarget

SECRET = b"secret outside the target\n"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prstack", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "core.py").write_bytes(SECRET)
    (folder / "pkg").mkdir()
    (folder / "pkg" / "core.py").write_bytes(SECRET)
    return folder


# -- the confined reader, one row per class -------------------------------------------------------

def _make(root: Path, outside: Path, kind: str) -> str:
    """A file of `kind` at root/<name>; returns the name."""
    if kind == "regular":
        (root / "a.py").write_text("x = 1\n")
        return "a.py"
    if kind == "symlink-out":
        (root / "a.py").symlink_to(outside / "core.py")
        return "a.py"
    if kind == "symlink-in":
        (root / "real.py").write_text("x = 1\n")
        (root / "a.py").symlink_to("real.py")
        return "a.py"
    if kind == "dir-symlink-out":
        (root / "pkg").symlink_to(outside / "pkg", target_is_directory=True)
        return "pkg/core.py"
    if kind == "dotdot":
        return "../outside/core.py"
    if kind == "absolute":
        return str(outside / "core.py")
    if kind == "inner-dotdot":
        (root / "pkg").mkdir()
        return "pkg/../../outside/core.py"
    if kind == "fifo":
        os.mkfifo(root / "a.py")
        return "a.py"
    if kind == "folder":
        (root / "a.py").mkdir()
        return "a.py"
    if kind == "huge":
        (root / "a.py").write_bytes(b"x" * 5000)
        return "a.py"
    assert kind == "missing"
    return "a.py"


CASES = {
    # kind: (what read_confined gives: bytes, None, or the Unreadable reason's start)
    "regular": b"x = 1\n",
    "symlink-in": b"x = 1\n",
    "symlink-out": "leads outside",
    "dir-symlink-out": "leads outside",
    "dotdot": "leads outside",
    "absolute": "leads outside",
    "inner-dotdot": "leads outside",
    "fifo": "not a regular file",
    "huge": "5000 bytes, over the 1000-byte read limit",
    "folder": None,
    "missing": None,
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_confined_reader(tmp_path: Path, outside: Path, kind: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    name = _make(root, outside, kind)
    want = CASES[kind]
    if isinstance(want, str):
        with pytest.raises(Unreadable) as info:
            read_confined(str(root), name, cap=1000)
        assert info.value.reason.startswith(want)
        assert str(root) in str(info.value) or str(outside) in str(info.value)
    else:
        assert read_confined(str(root), name, cap=1000) == want
    if kind in ("symlink-out", "dir-symlink-out", "dotdot", "absolute", "inner-dotdot", "fifo", "folder"):
        assert size_confined(str(root), name) is None


# -- trees: the audit through the CLI -------------------------------------------------------------

@pytest.fixture
def stack_tree(tmp_path: Path) -> tuple[GitRepo, Path]:
    repo = GitRepo(tmp_path / "repo")
    build_stack(repo)
    return repo, export_tree(repo, "refs/pull/2/head", tmp_path / "tree")


def _audit_json(repo: GitRepo, tree: Path, code: int | None = None) -> dict[str, object]:
    done = run("audit", "2", "--git", str(repo.path), "--tree", str(tree), "--format", "json")
    assert "Traceback" not in done.stderr
    assert done.returncode in ((0, 1) if code is None else (code,)), done.stderr
    data: dict[str, object] = json.loads(done.stdout)
    return data


@pytest.mark.parametrize("kind", ["symlink-out", "fifo", "huge"])
@pytest.mark.slow
def test_tree_file_out_fifo_or_huge_is_a_per_hunk_verdict(stack_tree: tuple[GitRepo, Path], tmp_path: Path,
                                                     kind: str) -> None:
    repo, tree = stack_tree
    core = tree / "src/widget/core.py"
    (tmp_path / "copy.py").write_bytes(core.read_bytes())  # the very content the PR expects, outside
    core.unlink()
    if kind == "symlink-out":
        core.symlink_to(tmp_path / "copy.py")
    elif kind == "fifo":
        os.mkfifo(core)
    else:
        with open(core, "wb") as f:  # sparse: over the 64 MiB cap without using the disk
            f.write((tmp_path / "copy.py").read_bytes())
            f.truncate(65 << 20)
    data = _audit_json(repo, tree, code=1)  # what could not be read is not present
    hunks = data["hunks"]
    assert isinstance(hunks, list)
    mine = [h for h in hunks if h["path"] == "src/widget/core.py"]
    assert mine and all(h["status"] == "unverifiable" and h["unverifiable"] == "not-read" for h in mine), mine
    assert [p["status"] for p in data["prs"] if p["number"] == 2] != ["applied"]  # type: ignore[union-attr]
    reason = {"symlink-out": "leads outside", "fifo": "not a regular file", "huge": "over the"}[kind]
    assert all(reason in h["note"] for h in mine)
    assert [h["status"] for h in hunks if h["path"] == "src/widget/extra.py"] == ["applied"]


def test_tree_package_folder_symlinked_out_is_not_read(stack_tree: tuple[GitRepo, Path], tmp_path: Path) -> None:
    _, tree = stack_tree
    (tree / "src/widget").rename(tmp_path / "moved")
    (tree / "src/widget").symlink_to(tmp_path / "moved", target_is_directory=True)
    target = TreeTarget(tree)
    assert not any(f.startswith("src/widget/") for f in target.files())  # not walked through the link
    with pytest.raises(Unreadable):
        read_confined(str(tree), "src/widget/core.py")


def test_tree_file_over_the_cap(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    big = tmp_path / "t" / "big.py"
    with open(big, "wb") as f:
        f.truncate(65 << 20)  # sparse: over the 64 MiB cap, no disk used
    with pytest.raises(Unreadable, match="over the"):
        TreeTarget(tmp_path / "t").read("big.py")


HEADS = [
    ("ref: /etc/hostname", None),
    ("ref: refs/heads/../../../../etc/hostname", None),
    ("ref: refs/heads/../../x", None),
    ("ref: ../x", None),
    ("ref: refs/heads/main", "a" * 40),
    ("b" * 40, "b" * 40),
    ("not a sha", None),
]


@pytest.mark.parametrize(("head", "want"), HEADS)
def test_git_head_refs_stay_in_the_git_folder(tmp_path: Path, head: str, want: str | None) -> None:
    git = tmp_path / "tree" / ".git"
    (git / "refs/heads").mkdir(parents=True)
    (git / "refs/heads/main").write_text("a" * 40 + "\n")
    (git / "x").write_text("c" * 40 + "\n")  # what `refs/heads/../../x` would reach
    (tmp_path / "x").write_text("d" * 40 + "\n")
    (git / "HEAD").write_text(head + "\n")
    assert git_head(tmp_path / "tree") == want
    assert TreeTarget(tmp_path / "tree").info.vcs_commit == want


def test_git_head_fifo_does_not_hang(tmp_path: Path) -> None:
    git = tmp_path / "tree" / ".git"
    git.mkdir(parents=True)
    os.mkfifo(git / "HEAD")
    assert git_head(tmp_path / "tree") is None


# -- site-packages ----------------------------------------------------------------------------------

def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _site(tmp_path: Path, record_rows: list[str] | None = None) -> Path:
    site = tmp_path / "site-packages"
    (site / "pkg").mkdir(parents=True)
    core = b"def f():\n    return 1\n"
    (site / "pkg/core.py").write_bytes(core)
    info = site / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    rows = [f"pkg/core.py,{_digest(core)},{len(core)}", "pkg-1.0.dist-info/METADATA,,",
            "pkg-1.0.dist-info/RECORD,,", *(record_rows or [])]
    (info / "RECORD").write_text("\n".join(rows) + "\n")
    return site


def test_record_rows_out_of_the_site_are_never_read(tmp_path: Path, outside: Path) -> None:
    outside_rows = [f"../outside/core.py,{_digest(SECRET)},1", f"{outside}/core.py,{_digest(SECRET)},1",
                    f"pkg/../../outside/core.py,{_digest(SECRET)},1",
                    f"pkg/./../../outside/core.py,{_digest(SECRET)},1"]
    site = _site(tmp_path, outside_rows)
    entries = parse_record((site / "pkg-1.0.dist-info/RECORD").read_text())
    assert [e.path for e in entries] == ["pkg/core.py", "pkg-1.0.dist-info/METADATA", "pkg-1.0.dist-info/RECORD"]
    result = check_installed(site, (site / "pkg-1.0.dist-info/RECORD").read_text(), ())
    assert result.checked == 1 and result.clean  # only pkg/core.py hashed: nothing outside counted


@pytest.mark.parametrize("kind", ["dist-info-out", "metadata-out", "metadata-fifo", "metadata-latin1",
                                  "record-folder", "record-fifo", "record-garbage", "record-latin1",
                                  "record-huge", "pkg-out"])
def test_hostile_site_packages(tmp_path: Path, outside: Path, kind: str) -> None:
    site = _site(tmp_path)
    info = site / "pkg-1.0.dist-info"
    if kind == "dist-info-out":
        (outside / "pkg-1.0.dist-info").mkdir()
        (outside / "pkg-1.0.dist-info/METADATA").write_text("Name: pkg\nVersion: 6.6.6\n")
        (info / "METADATA").unlink()
        (info / "RECORD").unlink()
        info.rmdir()
        info.symlink_to(outside / "pkg-1.0.dist-info", target_is_directory=True)
    elif kind == "metadata-out":
        (outside / "METADATA").write_text("Name: pkg\nVersion: 6.6.6\n")
        (info / "METADATA").unlink()
        (info / "METADATA").symlink_to(outside / "METADATA")
    elif kind == "metadata-fifo":
        (info / "METADATA").unlink()
        os.mkfifo(info / "METADATA")
    elif kind == "metadata-latin1":
        (info / "METADATA").write_bytes(b"Name: pkg\nVersion: 1.0\nSummary: caf\xe9\n")
    elif kind == "record-folder":
        (info / "RECORD").unlink()
        (info / "RECORD").mkdir()
    elif kind == "record-fifo":
        (info / "RECORD").unlink()
        os.mkfifo(info / "RECORD")
    elif kind == "record-garbage":
        (info / "RECORD").write_bytes(b"\x00\xff,,,,,,\n\"unterminated\n" + os.urandom(300) + b"\n,\n" * 3)
    elif kind == "record-latin1":
        (info / "RECORD").write_bytes(b"pkg/caf\xe9.py,,\npkg/core.py,,\n")
    elif kind == "record-huge":
        with open(info / "RECORD", "wb") as f:
            f.truncate(17 << 20)  # over the metadata cap
    elif kind == "pkg-out":
        (site / "pkg/core.py").unlink()
        (site / "pkg").rmdir()
        (site / "pkg").symlink_to(outside / "pkg", target_is_directory=True)
    found = find_distributions([str(site)])
    if kind in ("dist-info-out", "metadata-out", "metadata-fifo"):
        versions = [files.version for _, files in found.values()]
        assert "6.6.6" not in versions
        assert "pkg" not in found or found["pkg"][1].name == ""
        return
    dist, files = found["pkg"]
    target = InstalledDistribution("site-packages", str(site), dist, files)
    ev = target.evidence  # RECORD checked: never raises, never reads outside
    if kind == "pkg-out":
        with pytest.raises(Unreadable, match="leads outside"):
            target.read("pkg/core.py")
        assert ev.record is not None and ev.record.checked == 0
    elif kind.startswith("record-") and kind != "record-latin1":
        assert target.read("pkg/core.py") in (None, b"def f():\n    return 1\n")
    else:
        assert target.read("pkg/core.py") == b"def f():\n    return 1\n"
    assert dist_files(dist).name == "pkg"


# -- wheels built byte by byte ---------------------------------------------------------------------

CORE_PY = b"def f():\n    return 1\n" * 20


def _wheel(path: Path, extra: dict[str, bytes] | None = None, compress: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pkg/__init__.py", b"")
        zf.writestr("pkg/core.py", CORE_PY, compress_type=compress)
        zf.writestr("pkg-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return path


def _patch_member(path: Path, member: str, *, method: int | None = None, flags: int | None = None,
                  damage: bool = False) -> None:
    """Rewrite one member's local and central headers (compression method, flag bits), or its bytes."""
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(member)
    central = -1
    local = info.header_offset
    name_len, extra_len = struct.unpack("<HH", raw[local + 26:local + 30])
    data_at = local + 30 + name_len + extra_len
    if damage:
        for i in range(data_at + 2, data_at + min(info.compress_size, 40)):
            raw[i] ^= 0x5A
    cd = raw.find(b"PK\x01\x02")  # the member's central record, found by its name
    while cd != -1:
        n, = struct.unpack("<H", raw[cd + 28:cd + 30])
        if raw[cd + 46:cd + 46 + n] == member.encode():
            central = cd
            break
        cd = raw.find(b"PK\x01\x02", cd + 4)
    assert central != -1
    if method is not None:
        struct.pack_into("<H", raw, local + 8, method)
        struct.pack_into("<H", raw, central + 10, method)
    if flags is not None:
        struct.pack_into("<H", raw, local + 6, flags)
        struct.pack_into("<H", raw, central + 8, flags)
    path.write_bytes(bytes(raw))


WHEEL_CASES = {
    "damaged-deflate": {"damage": True},
    "method-99": {"method": 99},
    "method-lzma-odd": {"method": 14},
    "encrypted": {"flags": 0x1},
}


@pytest.mark.parametrize("case", sorted(WHEEL_CASES))
def test_damaged_wheel_member_is_unreadable_not_a_traceback(tmp_path: Path, case: str) -> None:
    path = _wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    _patch_member(path, "pkg/core.py", **WHEEL_CASES[case])  # type: ignore[arg-type]
    target = WheelTarget(path)
    assert "pkg/core.py" in target.files()
    with pytest.raises(Unreadable) as info:
        target.read("pkg/core.py")
    assert "pkg/core.py" in str(info.value)
    assert target.read("pkg/__init__.py") == b""


@pytest.mark.parametrize("case", sorted(WHEEL_CASES))
def test_damaged_wheel_metadata_is_one_line(tmp_path: Path, case: str) -> None:
    path = _wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    _patch_member(path, "pkg-1.0.dist-info/METADATA", **WHEEL_CASES[case])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="METADATA"):
        WheelTarget(path)


@pytest.mark.parametrize("name", ["../pkg/core.py", "/pkg/core.py", "pkg/../../pkg/core.py", "..\\pkg\\core.py"])
def test_wheel_entry_leaving_the_wheel_is_never_the_installed_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(name, SECRET)
        zf.writestr("pkg-1.0.dist-info/METADATA", b"Name: pkg\nVersion: 1.0\n")
    target = WheelTarget(path)
    assert target.files() == frozenset({"pkg-1.0.dist-info/METADATA"})
    assert target.read("pkg/core.py") is None


def test_wheel_member_normalised(tmp_path: Path) -> None:
    path = _wheel(tmp_path / "pkg-1.0-py3-none-any.whl", {"pkg/./sub/../extra.py": b"E = 1\n"})
    assert WheelTarget(path).read("pkg/extra.py") == b"E = 1\n"


@pytest.mark.slow
def test_damaged_member_through_the_cli_is_a_per_hunk_verdict(stack_tree: tuple[GitRepo, Path],
                                                              tmp_path: Path) -> None:
    repo, tree = stack_tree
    path = tmp_path / "widget-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in ("widget/__init__.py", "widget/core.py", "widget/extra.py"):
            zf.writestr(rel, (tree / "src" / rel).read_bytes())
        zf.writestr("widget-0.1.dist-info/METADATA", b"Metadata-Version: 2.1\nName: widget\nVersion: 0.1\n")
    _patch_member(path, "widget/core.py", damage=True)
    done = run("audit", "2", "--git", str(repo.path), "--wheel", str(path), "--format", "json")
    assert "Traceback" not in done.stderr and done.returncode == 1, done.stderr
    hunks = json.loads(done.stdout)["hunks"]
    core = [h for h in hunks if h["path"] == "src/widget/core.py"]
    assert core and all(h["status"] == "unverifiable" and "damaged" in h["note"] for h in core)
    assert all(h["unverifiable"] == "not-read" for h in core)
    assert [h["status"] for h in hunks if h["path"] == "src/widget/extra.py"] == ["applied"]


def test_zlib_really_fails_on_the_damaged_member(tmp_path: Path) -> None:
    """The damage the tests use is a real one: zlib refuses the member's stream."""
    path = _wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    _patch_member(path, "pkg/core.py", damage=True)
    with zipfile.ZipFile(path) as zf, pytest.raises((zlib.error, zipfile.BadZipFile)):
        zf.read("pkg/core.py")


@pytest.mark.slow
def test_site_packages_with_fifos_and_links_out_through_the_cli(stack_tree: tuple[GitRepo, Path], tmp_path: Path,
                                                                outside: Path) -> None:
    """A whole audit over a hostile site-packages: it ends (a hang would hit run's time-out), one
    distribution's RECORD a FIFO, another's METADATA a FIFO, a third's dist-info a link out."""
    repo, tree = stack_tree
    site = tmp_path / "site"
    (site / "widget").mkdir(parents=True)
    rows = []
    for rel in ("widget/__init__.py", "widget/core.py", "widget/extra.py"):
        data = (tree / "src" / rel).read_bytes()
        (site / rel).write_bytes(data)
        rows.append(f"{rel},{_digest(data)},{len(data)}")
    info = site / "widget-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: widget\nVersion: 0.1\n")
    os.mkfifo(info / "RECORD")
    (site / "other-1.0.dist-info").mkdir()
    os.mkfifo(site / "other-1.0.dist-info" / "METADATA")
    (outside / "evil-1.0.dist-info").mkdir()
    (outside / "evil-1.0.dist-info" / "METADATA").write_text("Name: evil\nVersion: 1.0\n")
    (outside / "evil-1.0.dist-info" / "RECORD").write_text("widget/core.py,,\n")
    (site / "evil-1.0.dist-info").symlink_to(outside / "evil-1.0.dist-info", target_is_directory=True)
    done = run("audit", "2", "--git", str(repo.path), "--site-packages", str(site), "--format", "json")
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1, 2), done.stderr
    if done.returncode == 2:  # RECORD unreadable: no file list, so one clear line saying what is wrong
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    from prstack.targets.repos import installed_repos

    assert [name for name, _ in installed_repos([str(site)])] == ["widget"]


@pytest.mark.slow
def test_plan_tree_does_not_take_a_file_through_a_symlink_out(stack_tree: tuple[GitRepo, Path],
                                                              tmp_path: Path, outside: Path) -> None:
    """`plan --tree` overlays the tree's files on a commit: a file linked out of the tree is not taken."""
    repo, tree = stack_tree
    (tree / "src/widget/extra.py").unlink()
    (tree / "src/widget/extra.py").symlink_to(outside / "core.py")
    done = run("plan", "2", "--git", str(repo.path), "--tree", str(tree), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    onto = json.loads(done.stdout)["onto"]["sha"]
    # the file linked out was not read: not taken, and #2, which adds it, is not known present, so
    # the overlay goes over #1's head, which has no such file
    assert repo.git("ls-tree", onto, "--", "src/widget/extra.py") == ""
    assert all(SECRET.decode().strip() not in repo.git("show", f"{onto}:{path}")
               for path in repo.git("ls-tree", "-r", "--name-only", onto).splitlines())
