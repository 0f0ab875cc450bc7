"""A distribution's name compared the PEP 503 way everywhere: runs of '-', '_' and '.' are one
separator and case does not count, whether the name comes from --dist, METADATA or a repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from prstack.placement.choose import Asked, DistFiles, choose
from prstack.targets.installed import find_distributions
from prstack.targets.repos import installed_repos

SPELLINGS = [("a__b", "A-B", "a-b"), ("a__b", "a.b", "a-b"), ("A.b-C", "a_b_c", "a-b-c"),
             ("A.b-C", "a--B__c", "a-b-c")]
"""(the name METADATA gives, the name asked for, the one key both come to)"""


def _site(tmp_path: Path, name: str) -> Path:
    site = tmp_path / "site-packages"
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "RECORD").write_text(f"pkg/core.py,,\n{info.name}/METADATA,,\n")
    (site / "pkg").mkdir()
    (site / "pkg" / "core.py").write_text("x = 1\n")
    return site


@pytest.mark.parametrize(("installed", "wanted", "key"), SPELLINGS)
def test_dist_chooses_the_distribution_however_its_name_is_spelled(installed: str, wanted: str, key: str) -> None:
    other = DistFiles("other", "2.0", frozenset({"other/core.py"}))
    mine = DistFiles(installed, "1.0", frozenset({"pkg/core.py"}))
    assert choose([other, mine], ["pkg/core.py"], ["pkg/core.py"], "site", Asked(wanted)).dist is mine


@pytest.mark.parametrize(("installed", "wanted", "key"), SPELLINGS)
def test_site_packages_and_its_repositories_key_a_name_alike(tmp_path: Path, installed: str, wanted: str,
                                                             key: str) -> None:
    site = _site(tmp_path, installed)
    found = find_distributions([str(site)])
    assert list(found) == [key]
    assert [name for name, _ in installed_repos([str(site)], wanted)] == [installed]
