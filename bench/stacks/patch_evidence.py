"""What the diffs themselves say about each failing patch case of a run.py result file.

    PRSTACK_STACKS_MIRRORS=/work/.mirror python bench/stacks/patch_evidence.py /tmp/stacks.jsonl

The patch oracle audits each PR's diff as GitHub serves it (merge base with main .. head), bottom
first, against the top's tree, and wants every hunk present. A fork-style child's diff is cumulative:
it holds its parent's change as the child left it, so a lower PR's hunk that the stack kept shows up
in the top's diff, rewritten or not. Where the top's history took a lower change back (a revert, a file
moved or deleted later, main's rewrite of a squash-merged parent merged back in), the top's diff holds
no trace of it, and the patches are those of two unrelated PRs: nothing but history tells them apart.

For every hunk a failing case reports not present, this script counts, from the two diffs alone (git
and unidiff, no prstack code), how many of the hunk's added lines (non-blank, stripped) the top's diff
adds to the same file, and whether the top's diff names the file at all. It prints one line per case:
the lower PRs' failing hunks, and the share of their added lines that the top's diff carries.
"""

from __future__ import annotations

import io
import json
import sys
from collections import defaultdict
from pathlib import Path

import unidiff

sys.path.insert(0, str(Path(__file__).parent))
from find import DEFAULT, git, load, mirror


def pr_diff(m: Path, head: str) -> dict[str, unidiff.PatchedFile]:
    """The PR's diff as GitHub serves it, by file path (new name)."""
    base = git(m, "merge-base", DEFAULT, head).strip()
    text = git(m, "diff", base, head)
    return {f.path: f for f in unidiff.PatchSet(io.StringIO(text))}


def added(f: unidiff.PatchedFile, new_start: int | None = None) -> set[str]:
    """Added lines (stripped, non-blank) of the file's diff, or of its hunk starting at `new_start`."""
    return {line.value.strip() for h in f if new_start is None or h.target_start == new_start
            for line in h if line.is_added and line.value.strip()}


def main() -> int:
    results = [json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines()]
    stacks = {(s.repo, s.top): s for s in load()}
    total: defaultdict[str, int] = defaultdict(int)
    for r in results:
        if r["oracle"] != "patch" or r["ok"] or not r["offending"]:
            continue
        s = stacks[(r["repo"], r["top"])]
        m = mirror(s.repo)
        heads = dict(zip(s.parents, s.parent_heads, strict=True)) | {s.top: s.top_head}
        top = pr_diff(m, s.top_head)
        lows: dict[int, dict[str, unidiff.PatchedFile]] = {}
        unnamed = carried = lines = own = 0
        for h in r["offending"]:
            if h["pr"] == s.top:
                own += 1
                continue
            low = lows.setdefault(h["pr"], pr_diff(m, heads[h["pr"]]))
            if h["path"] not in low:
                continue
            mine = added(low[h["path"]], h["new_start"])
            if h["path"] not in top:
                unnamed += 1
            lines += len(mine)
            carried += len(mine & added(top[h["path"]])) if h["path"] in top else 0
        share = f"{carried}/{lines}"
        kind = ("a hunk of the top's own diff is not present" if own
                else "the top's diff carries none of their added lines" if carried == 0
                else "the top's diff carries under half of their added lines" if 2 * carried < lines
                else "the top's diff carries half or more of their added lines")
        total[kind] += 1
        print(f"{r['repo']} #{r['top']}: {len(r['offending'])} hunk(s) not present; files the top's diff "
              f"does not name: {unnamed}; added lines the top's diff carries: {share} ({kind})")
    print()
    for kind, n in sorted(total.items()):
        print(f"{n:4d}  {kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
