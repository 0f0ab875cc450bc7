"""Derive the real-world bench's cases and their truth from git ancestry and blame (never from prstack).

Run once by a maintainer (needs the snapshots); writes cases.tsv. See bench/README.md for the rules.
    PRSTACK_REALWORLD_MIRRORS=/work/.mirror python bench/realworld/mkcases.py > bench/realworld/cases.tsv
    python bench/realworld/mkcases.py --rewritten 2 > bench/realworld/rewritten.tsv   # lines rewritten later
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from projects import PROJECTS, Project

SUBJECT = re.compile(r"\(#(\d+)\)\s*$")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def mbase(repo: Path, a: str, b: str) -> str:
    r = subprocess.run(["git", "-C", str(repo), "merge-base", a, b], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def squashes(repo: Path, rng: list[str]) -> dict[int, str]:
    """PR number -> the commit whose subject ends in (#N) in that range (non-merge commits)."""
    out: dict[int, str] = {}
    for line in git(repo, "log", "--no-merges", "--format=%H %s", *rng).splitlines():
        sha, _, subj = line.partition(" ")
        m = SUBJECT.search(subj)
        if m:
            out.setdefault(int(m.group(1)), sha)
    return out


def pr_heads(repo: Path) -> dict[int, str]:
    out = {}
    for line in git(repo, "for-each-ref", "--format=%(objectname) %(refname)", "refs/pull").splitlines():
        sha, ref = line.split()
        m = re.fullmatch(r"refs/pull/(\d+)/head", ref)
        if m:
            out[int(m.group(1))] = sha
    return out


def changed(repo: Path, a: str, b: str) -> list[str]:
    return [p for p in git(repo, "diff", "--no-renames", "--name-only", a, b).splitlines() if p]


def added_lines(repo: Path, c: str, path: str) -> int:
    out = git(repo, "diff", "--no-renames", "--numstat", f"{c}^", c, "--", path).split()
    return int(out[0]) if out and out[0].isdigit() else -1


def survives(repo: Project, c: str, tag: str, files: list[str]) -> bool:
    """Every line commit c added to a shipped file is still blamed on c at the tag."""
    r = repo.mirror()
    for f in files:
        n = added_lines(r, c, f)
        if n < 0:
            return False
        try:
            blame = git(r, "blame", "--porcelain", tag, "--", f)
        except subprocess.CalledProcessError:
            if n == 0:
                continue  # a deleted file: gone at the tag means it stayed deleted
            return False
        got = sum(1 for line in blame.splitlines() if line.startswith(c + " "))
        if got != n:
            return False
    return True


def merges_main(repo: Path, head: str, default: str) -> bool:
    """The PR's own range holds a merge commit with a parent on the default branch."""
    for line in git(repo, "rev-list", "--merges", "--parents", head, "--not", default).splitlines():
        for parent in line.split()[2:]:
            if subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", parent, default],
                              capture_output=True).returncode == 0:
                return True
    return False


def stacked_on(repo: Path, head: str, default: str, heads: dict[str, int], me: int) -> int | None:
    """Another PR's head inside this PR's own range (its commits not on the default branch)."""
    for sha in git(repo, "rev-list", head, "--not", default).split()[1:]:
        n = heads.get(sha)
        if n is not None and n != me:
            return n
    return None


def rows_for(p: Project, per_pair: int, unmerged: int) -> list[list[str]]:
    r = p.mirror()
    heads = pr_heads(r)
    by_sha = {sha: n for n, sha in heads.items()}
    on_default = squashes(r, [p.default])
    rows: list[list[str]] = []
    tags = list(p.tags)
    for (ta, va), (tb, vb) in itertools.pairwise(tags):
        before = squashes(r, [ta])
        side = side_commits(r, ta, tb)
        picked = 0
        for n, c in sorted(squashes(r, [tb, f"^{ta}"]).items()):
            if n in before or n not in heads or picked >= per_pair:
                continue
            if side and (patch_id(r, c) in side["ids"] or f"#{n}" in side["text"]):
                continue  # cherry-picked onto the older release's branch under another subject
            head = heads[n]
            base = mbase(r, head, f"{c}^")
            if not base:
                continue
            files = changed(r, f"{c}^", c)
            ship = [f for f in files if p.shipped(f)]
            mm = merges_main(r, head, f"{c}^")
            st = stacked_on(r, head, f"{c}^", by_sha, n)
            flags = ",".join(x for x in ("merges-main" if mm else "", f"stacked-on-{st}" if st else "") if x)
            label = "merged" if ship else "merged-tests-docs"
            rewritten = bool(ship) and not survives(p, c, tb, ship)
            if rewritten != REWRITTEN:
                continue  # later edits rewrote some of its lines: kept apart (--rewritten), truth by history
            if rewritten:
                label = "merged-rewritten"
            picked += 1
            for dist, truth in ((va, "absent"), (vb, "present")):
                rows.append([p.repo, str(n), head, base, f"{p.dist}=={dist}", label, flags or "-",
                             truth if ship else "not-shipped", c])
    # never merged: no (#N) commit on the default branch, head not on it, newest first
    last = tags[-1]
    default_tip = git(r, "rev-parse", p.default).strip()
    count = 0
    for n in sorted(heads, reverse=True):
        if count >= unmerged or n in on_default:
            continue
        head = heads[n]
        if subprocess.run(["git", "-C", str(r), "merge-base", "--is-ancestor", head, default_tip],
                          capture_output=True).returncode == 0:
            continue
        base = mbase(r, head, p.default)  # its own change, as GitHub shows it
        if not base:
            continue
        files = changed(r, base, head)
        if not files or len(files) > 40:
            continue
        ship = [f for f in files if p.shipped(f)]
        if ship and already_there(r, base, head, last[0], ship):
            continue  # every added line already in the release: ambiguous, dropped
        mm = merges_main(r, head, last[0])
        st = stacked_on(r, head, last[0], by_sha, n)
        flags = ",".join(x for x in ("merges-main" if mm else "", f"stacked-on-{st}" if st else "") if x)
        count += 1
        rows.append([p.repo, str(n), head, base, f"{p.dist}=={last[1]}",
                     "unmerged" if ship else "unmerged-tests-docs", flags or "-",
                     "absent" if ship else "not-shipped", "-"])
    # stacked and never merged: another open PR's head inside this PR's own range
    seen = {row[1] for row in rows}
    stacked = 0
    for n in sorted(heads, reverse=True):
        if stacked >= unmerged or n in on_default or str(n) in seen:
            continue
        head = heads[n]
        st = stacked_on(r, head, p.default, by_sha, n)
        if st is None or st in on_default:
            continue
        base = mbase(r, head, p.default)
        files = changed(r, base, head) if base else []
        if not files or len(files) > 60:
            continue
        ship = [f for f in files if p.shipped(f)]
        if ship and already_there(r, base, head, last[0], ship):
            continue
        mm = merges_main(r, head, p.default)
        flags = ",".join(x for x in ("merges-main" if mm else "", f"stacked-on-{st}") if x)
        stacked += 1
        rows.append([p.repo, str(n), head, base, f"{p.dist}=={last[1]}",
                     "stacked-unmerged" if ship else "stacked-unmerged-tests-docs", flags,
                     "absent" if ship else "not-shipped", "-"])
    return rows


def patch_id(r: Path, c: str) -> str:
    diff = git(r, "show", "--format=", c)
    out = subprocess.run(["git", "-C", str(r), "patch-id", "--stable"], input=diff, capture_output=True,
                         text=True).stdout.split()
    return out[0] if out else ""


def side_commits(r: Path, ta: str, tb: str) -> dict[str, set[str] | str]:
    """Commits of the older release not in the newer one's history (a maintenance branch)."""
    fork = mbase(r, ta, tb)
    shas = git(r, "rev-list", "--no-merges", ta, f"^{fork}").split()
    if not shas:
        return {}
    ids = {patch_id(r, c) for c in shas}
    return {"ids": ids, "text": git(r, "log", "--format=%B", ta, f"^{fork}")}


def already_there(r: Path, base: str, head: str, tag: str, files: list[str]) -> bool:
    diff = git(r, "diff", "--no-renames", base, head, "--", *files)
    added = {ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")}
    added.discard("")
    text = ""
    for f in files:
        try:
            text += git(r, "show", f"{tag}:{f}")
        except subprocess.CalledProcessError:
            return False
    have = {ln.strip() for ln in text.splitlines()}
    return added <= have


REWRITTEN = "--rewritten" in sys.argv
"""Only the merged PRs some of whose lines a later commit rewrote before the newer release."""


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--rewritten"]
    per_pair = int(args[0]) if args else 4
    unmerged = 0 if REWRITTEN else int(args[1]) if len(args) > 1 else 10
    print("\t".join(["repo", "pr", "head", "base", "wheel", "label", "flags", "truth", "merged_as"]))
    stats: Counter[str] = Counter()
    for p in PROJECTS.values():
        for row in rows_for(p, per_pair, unmerged):
            stats[row[5] + "/" + row[7]] += 1
            print("\t".join(row), flush=True)
    print(dict(stats), file=sys.stderr)


if __name__ == "__main__":
    main()
