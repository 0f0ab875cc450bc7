"""Files and series folders written as pip writes them: the old content or the complete new one, a
link at the destination replaced and never written through, an input of the run refused, a folder
that holds more than a series never swapped away."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from prstack.errors import InputError
from prstack.files import replace_series_folder, write_file


def test_a_file_is_replaced_whole_and_no_temporary_is_left(tmp_path: Path) -> None:
    dest = tmp_path / "report.json"
    dest.write_text("old\n")
    write_file(dest, b"new\n")
    assert dest.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_link_at_the_destination_is_replaced_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH=/usr/bin\n")
    dest = tmp_path / "apply.sh"
    os.symlink(victim, dest)
    write_file(dest, b"git am\n")
    assert victim.read_text() == "export PATH=/usr/bin\n"
    assert not dest.is_symlink() and dest.read_bytes() == b"git am\n"


def test_an_input_of_the_run_is_refused(tmp_path: Path) -> None:
    given = tmp_path / "fix.patch"
    given.write_text("diff\n")
    with pytest.raises(InputError, match="an input of this run"):
        write_file(given, b"report\n", inputs=[tmp_path / "other.patch", given])
    assert given.read_text() == "diff\n"
    link = tmp_path / "out.json"
    os.symlink(given, link)
    write_file(link, b"report\n", inputs=[given])  # (the link is replaced; the input it pointed to is spared)
    assert given.read_text() == "diff\n" and link.read_bytes() == b"report\n"


def test_a_folder_is_no_file_to_write(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="it is a folder"):
        write_file(tmp_path, b"x")


def test_private_files_are_the_users_alone(tmp_path: Path) -> None:
    write_file(tmp_path / "entry.json", b"{}", private=True)
    assert stat.S_IMODE((tmp_path / "entry.json").stat().st_mode) == 0o600


def test_a_series_folder_is_swapped_in_whole(tmp_path: Path) -> None:
    dest = tmp_path / "refreshed"
    dest.mkdir()
    (dest / "series").write_text("old.patch\n")
    (dest / "old.patch").write_text("old\n")
    replace_series_folder(dest, {"series": b"new.patch\n", "new.patch": b"new\n"})
    assert {p.name: p.read_bytes() for p in dest.iterdir()} == {"series": b"new.patch\n", "new.patch": b"new\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["refreshed"]


def test_a_folder_with_other_files_is_never_swapped_away(tmp_path: Path) -> None:
    dest = tmp_path / "home"
    dest.mkdir()
    (dest / ".bashrc").write_text("mine\n")
    with pytest.raises(InputError, match=r"\.bashrc"):
        replace_series_folder(dest, {"series": b""})
    assert (dest / ".bashrc").read_text() == "mine\n"


def test_a_link_to_a_folder_is_replaced_as_a_link(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep\n")
    dest = tmp_path / "refreshed"
    os.symlink(elsewhere, dest)
    replace_series_folder(dest, {"series": b""})
    assert not dest.is_symlink() and (dest / "series").read_bytes() == b""
    assert (elsewhere / "keep.txt").read_text() == "keep\n"


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from prstack.files import write_file
    dest = Path(sys.argv[1])
    for n in range(10_000):
        write_file(dest, bytes([65 + n % 2]) * (8 << 20))
""")


@pytest.mark.slow
def test_sigkill_at_any_moment_leaves_the_old_or_the_whole_new_file(tmp_path: Path) -> None:
    """A process rewriting an 8 MB file over and over, killed at 20 moments: each time the file is one
    of the complete contents, never a part."""
    dest = tmp_path / "report"
    dest.write_bytes(b"old")
    whole = {b"old", b"A" * (8 << 20), b"B" * (8 << 20)}
    for attempt in range(20):
        child = subprocess.Popen([sys.executable, "-c", WRITER, str(dest)])
        time.sleep(0.05 + 0.013 * attempt)
        child.kill()
        child.wait(timeout=30)
        assert dest.read_bytes() in whole, f"a part after the kill at attempt {attempt}"
