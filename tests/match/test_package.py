"""The package index finds a block's places once and answers later asks (other files left out,
asked further or less far) exactly as a fresh index would."""

from __future__ import annotations

from itertools import islice, permutations

from hypothesis import given, settings
from hypothesis import strategies as st

from prstack.match.package import PackageIndex, key
from prstack.match.text import LEVELS, LOOSEST
from prstack.placement.paths import PathMap

BLOCK = ("log.info('start')", "metrics.count('calls')", "state.touch()")


def _files() -> dict[str, bytes]:
    body = "\n".join(BLOCK) + "\n"
    return {
        f"pkg/m{i}.py": (f"def f{i}():\n" + body + ("\n" if i % 2 else "") + "    return 1\n" + body).encode()
        for i in range(6)
    } | {"pkg/other.py": b"log.info('start')\nsomething_else()\nstate.touch()\n"}


def test_places_asked_again_match_a_fresh_index() -> None:
    shared = PackageIndex(_files)
    first = list(islice(shared.find_all(BLOCK, exclude="pkg/m0.py"), 3))
    assert first == [("pkg/m1.py", 2), ("pkg/m1.py", 7), ("pkg/m2.py", 2)]
    for exclude in (None, "pkg/m1.py", ("pkg/m0.py", "pkg/m3.py"), "pkg/other.py"):
        fresh = list(PackageIndex(_files).find_all(BLOCK, exclude=exclude))
        assert list(shared.find_all(BLOCK, exclude=exclude)) == fresh
    assert len(list(shared.find_all(BLOCK))) == 12
    assert shared.find_block(BLOCK, exclude="pkg/m0.py") == ("pkg/m1.py", 2)
    assert list(shared.find_all(("log.info('start')", "state.touch()"))) == []


def test_a_tie_between_two_installed_prefixes_maps_to_neither_whatever_the_order() -> None:
    """Two installed folders vote alike for the repository's folder (a new folder whose file names
    its siblings have too): neither is evidence, and the answer must not depend on the order sets
    iterate in (it changed with PYTHONHASHSEED)."""
    installed = ["pkg/__init__.py", "pkg/core.py", "pkg/a/mod.py", "pkg/a/util.py", "pkg/b/mod.py", "pkg/b/util.py"]
    repo = ["pkg/__init__.py", "pkg/core.py", "pkg/new/mod.py", "pkg/new/util.py"]
    answers = {PathMap(list(order), list(files)).locate("pkg/new/mod.py").installed_path
               for order in permutations(installed) for files in (repo, repo[::-1])}
    assert answers == {"pkg/new/mod.py"}
    # one folder with more votes is a renamed one
    renamed = PathMap(["kvs/mod.py", "kvs/util.py", "kvs/other.py"], ["lib/kvserve/mod.py", "lib/kvserve/util.py"])
    assert renamed.locate("lib/kvserve/mod.py").installed_path == "kvs/mod.py"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" \t\f\v\r'\"a\u00e9\u00a0\u2028\udcff", max_size=12))
def test_a_lines_key_is_its_loosest_normalisation_in_utf8(line: str) -> None:
    """The key the index holds a line by is the line at the loosest level, UTF-8 encoded with
    each stray byte's escape kept apart, whatever whitespace, quotes and stray bytes it holds."""
    assert key(line) == LEVELS[LOOSEST][1](line).encode("utf-8", "surrogatepass")
