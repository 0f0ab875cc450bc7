"""Make what the lineage bench reads: the work clones (both kinds, lineage.REFS) and the wheels of every
case's releases, cases.tsv's and reverts.tsv's (downloaded, unpacked).

    PRSTACK_REALWORLD_MIRRORS=/work/.mirror python bench/lineage/setup_cache.py
Clones, wheels and unpacked trees go under $PRSTACK_REALWORLD_CACHE (default ~/.cache/prstack-realworld),
never into git; each is made once. Exit 1 when a snapshot or a wheel is missing.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lineage import HERE, PROJECTS, REFS, cache_dir, fetch_wheel, load_cases, make_clone, wheel_spec

TAGS = ("tag_first", "tag_newest", "tag_before", "tag_held", "tag_reverted")  # cases.tsv's, reverts.tsv's


def main() -> int:
    cases = [c for f in (HERE / "cases.tsv", HERE / "reverts.tsv") for c in load_cases(f)]
    bad = 0
    for repo in sorted({c["repo"] for c in cases}):
        p = PROJECTS[repo]
        if not (p.mirror() / "objects").is_dir():
            print(f"missing snapshot {p.mirror()}: fetch github:{repo} (set PRSTACK_REALWORLD_MIRRORS)")
            bad += 1
            continue
        for refs in REFS:
            print(f"{repo}: clone {make_clone(p, refs, {c['pr'] for c in cases if c['repo'] == repo})}", flush=True)
    for spec in sorted({wheel_spec(PROJECTS[c["repo"]], c[t]) for c in cases for t in TAGS if c.get(t, "-") != "-"}):
        if fetch_wheel(spec) is None:
            print(f"no wheel for {spec} on PyPI: add its version to lineage.LINEAGE's no_wheel and run pick.py again")
            bad += 1
    print(f"cache: {cache_dir()}  ({len(cases)} cases)")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
