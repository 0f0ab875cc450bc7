"""Start-up of an audit's output, and the fast reading of RECORD's paths that distribution choice uses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.targets.record import parse_record, recorded_paths


@pytest.mark.slow
def test_a_json_audit_imports_no_rich_and_a_table_does(git_repo: GitRepo, tmp_path: Path) -> None:
    base = git_repo.commit("base", {"pkg/mod.py": "x = 1\n"})
    head = git_repo.commit("change", {"pkg/mod.py": "x = 2\n"})
    git_repo.git("update-ref", "refs/pull/1/head", head)
    git_repo.git("update-ref", "refs/heads/main", base)
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "mod.py").write_text("x = 2\n")
    seen = {}
    for fmt in ("json", "table"):
        probe = ("import sys\nfrom prstack.cli import main\n"
                 f"code = main(['audit', '1', '--git', {str(git_repo.path)!r}, '--tree', {str(tree)!r},"
                 f" '--format', {fmt!r}])\n"
                 "print(code, 'rich' in sys.modules)")
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
        assert "applied" in done.stdout  # the audit ran to its verdict
        seen[fmt] = done.stdout.strip().splitlines()[-1]
    assert seen == {"json": "0 False", "table": "0 True"}


@pytest.mark.parametrize("text", [
    "pkg/__init__.py,sha256=abc,10\npkg/mod.py,,\npkg-1.0.dist-info/RECORD,,\n",
    "a/./b,x\n../x,\n/abs,\nC:/x,\nc:x\n\\\\a,\n.hidden/x,\n./a,\na//b,\na/b/,\n a ,\n,,\n\n",
    "pkg/a/../../../etc/passwd,,\npkg/a/../b.py,,\nz:\\\\x,,\n1:/x,,\n\u00e4:/x,,\n",
    '"pkg/with,comma.py",sha256=x,1\nplain.py,,\n',  # quoted: the csv reader's answer
    "pkg/a.py,,\r\npkg/b.py,,\r\n",  # CRLF line ends, as pip writes RECORD
    "pkg/a\r.py,,\r\npkg/b.py,,\r\n",  # a carriage return inside a path: the csv reader's answer
    '"pkg/with,comma.py",sha256=x,1\r\nplain.py,,\r\n',  # quoted and CRLF
    "pkg/a\0.py,,\npkg/b.py,,\n",  # a NUL: the csv reader's answer
    "",
    "pkg/a.py,sha256=x,1\npkg/b.py,,",  # plain names, no line end after the last
    *(f"pkg/a.py,sha256=x,1\n{name},,\npkg/b.py,,\n" for name in (  # one name that is not plain
        "pkg/./c.py", "pkg//c.py", "pkg\\c.py", "c:c.py", ".c.py", "/c.py", "pkg/c/", "pkg/../c.py")),
    "pkg/a.py,,\npkg/c/",  # a trailing slash at the end of the text
    "./pkg/a.py,,\n",  # a leading dot at the start of the text
])
def test_recorded_paths_are_parse_records_paths(text: str) -> None:
    assert recorded_paths(text) == frozenset(e.path for e in parse_record(text))


def test_recorded_paths_keep_only_paths_inside_the_root() -> None:
    got = recorded_paths("pkg/mod.py,,\n../bin/tool,,\n/etc/passwd,,\npkg/./x.py,,\nC:/w.py,,\n")
    assert got == {"pkg/mod.py", "pkg/x.py"}
