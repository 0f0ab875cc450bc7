"""Run the lineage bench: merged PRs audited against the real wheels of releases that hold them and of the one before.

    export PRSTACK_REALWORLD_MIRRORS=/work/.mirror
    python bench/lineage/setup_cache.py                              # clones and wheels, once
    python bench/lineage/run.py                                      # every case, the prstack on PATH
    PRSTACK=/work/main/.venv/bin/prstack python bench/lineage/run.py # another checkout's prstack
    python bench/lineage/run.py --repo encode/httpx --limit 5 --no-upkeep   # a quick subset

For each case of cases.tsv (a merged PR, see pick.py) and each of its releases — (a) tag_first, the first
release whose tag holds the landing commit, (b) tag_newest, (c) tag_before — the truth is
`git merge-base --is-ancestor LANDING TAG` (exit 0 for (a) and (b), 1 for (c)), and:
- prstack: `prstack audit N --git CLONE --wheel W --format json`, right when its exit code is the truth's;
  each of the PR's shipped hunks is present when its status is applied or relocated or it has a
  `superseded_by`;
- git apply: `git apply -R --check` of the PR's diff (merge base .. head, shipped files only, paths as the
  wheel has them) in the unpacked wheel, right when it passes exactly where the truth holds;
- git tag --contains LANDING (in the clone): right when it lists the tag exactly where the truth holds;
- upkeep: `prstack upkeep N --git CLONE --onto TAG_NEWEST --format json`: the PR's verdict (retire
  wanted: the release holds it) and its first_release against ancestry's, the oldest by version of the
  releases upkeep lists whose tag holds the landing.
Prints one table per measure, a row per project and a total; writes every answer to
$PRSTACK_REALWORLD_CACHE/lineage/results.tsv and lists the wrong answers.

With `--cases bench/lineage/reverts.tsv` (pick_reverts.py: PRs reverted later) the releases are (a) tag_held,
the first holding the landing and not the revert, (r) tag_reverted, the first holding the revert, and (c);
a release holds the PR when it holds the landing and not the revert, and the tables' "(a)/(b)" columns
count the releases holding it, "(c)" those that do not. No upkeep on them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lineage import (
    PROJECTS,
    REFS,
    Project,
    cache_dir,
    clone_path,
    git,
    is_ancestor,
    load_cases,
    unpacked,
    wheel_path,
    wheel_spec,
)

ROLES = {"a": "tag_first", "b": "tag_newest", "c": "tag_before"}
REVERTED_ROLES = {"a": "tag_held", "r": "tag_reverted", "c": "tag_before"}  # reverts.tsv (pick_reverts.py)
PRESENT = ("applied", "relocated")
TIMEOUT = 600
MAX_JOBS = 2  # the machine's two cores are shared


@dataclass
class Audit:
    """One case against one release: the truth and every tool's answer."""

    case: dict[str, str]
    role: str
    tag: str
    holds: bool = False  # the oracle
    exit: int | str = ""  # prstack's exit code; "timeout", or "no report" when it printed none (a crash)
    hunks: Counter[str] = field(default_factory=Counter)  # the PR's shipped hunks by status ("superseded" apart)
    all_present: bool = False
    others: list[int] = field(default_factory=list)  # other PRs in the report (taken as ones it stacks on)
    seconds: float = 0.0
    apply_ok: bool = False
    contains: bool = False
    peer_seconds: float = 0.0

    @property
    def right(self) -> bool:
        return self.exit == (0 if self.holds else 1)


@dataclass
class Upkeep:
    case: dict[str, str]
    exit: int | str = ""
    verdict: str = ""
    state: str = ""
    first_release: str | None = None
    ancestry_first: str | None = None
    seconds: float = 0.0


def prstack_command() -> list[str]:
    """$PRSTACK, else the prstack on PATH."""
    exe = os.environ.get("PRSTACK") or shutil.which("prstack")
    if not exe:
        raise SystemExit("no prstack: set PRSTACK=/path/to/prstack or put one on PATH")
    return [exe]


def run_json(cmd: list[str], key: str) -> tuple[int | str, dict[str, Any], float]:
    """The command's exit code, its JSON report and its seconds; the code is "timeout", or "no report" when
    stdout holds no JSON object with `key` (a traceback also exits 1: it must not count as an answer)."""
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timeout", {}, time.perf_counter() - t0
    dt = time.perf_counter() - t0
    try:
        data = json.loads(r.stdout) if r.stdout.strip() else {}
    except json.JSONDecodeError:
        data = {}
    if not isinstance(data, dict) or key not in data:
        return ("no report" if r.returncode in (0, 1) else r.returncode), {}, dt
    return r.returncode, data, dt


def audit(prstack: list[str], clones: dict[str, Path], a: Audit) -> Audit:
    p = PROJECTS[a.case["repo"]]
    clone = clones[p.repo]
    n = int(a.case["pr"])
    a.holds = is_ancestor(clone, a.case["landing"], a.tag) and not (
        "revert" in a.case and is_ancestor(clone, a.case["revert"], a.tag))
    w = wheel_path(wheel_spec(p, a.tag))
    a.exit, data, a.seconds = run_json([*prstack, "audit", str(n), "--git", str(clone), "--wheel", str(w),
                                        "--format", "json"], "prs")
    hunks = [h for h in data.get("hunks", []) if h["pr"] == n and h["status"] != "not-shipped"]
    a.others = sorted(pr["number"] for pr in data.get("prs", []) if pr["number"] != n)
    for h in hunks:
        a.hunks["superseded" if h.get("superseded_by") else h["status"]] += 1
    a.all_present = bool(hunks) and all(h["status"] in PRESENT or h.get("superseded_by") for h in hunks)
    t0 = time.perf_counter()
    diff = peer_diff(p, clone, a.case)
    a.apply_ok = subprocess.run(["git", "apply", "-R", "--check", "-"], input=diff, cwd=unpacked(wheel_spec(p, a.tag)),
                                capture_output=True, text=True).returncode == 0
    a.contains = a.tag in git(clone, "tag", "--contains", a.case["landing"]).split()
    a.peer_seconds = time.perf_counter() - t0
    return a


def peer_diff(p: Project, clone: Path, case: dict[str, str]) -> str:
    """The PR's diff (merge base .. head) limited to its shipped files, paths as the wheel has them."""
    args = ["diff", "--no-renames", "--binary", case["base"], case["head"]]
    if p.strip:
        args.append(f"--relative={p.strip}")
    args += ["--", *[x.removeprefix(p.strip) for x in p.packages], ":(exclude,glob)**/.*/**"]
    return git(clone, *args)


def upkeep(prstack: list[str], clones: dict[str, Path], u: Upkeep) -> Upkeep:
    clone = clones[u.case["repo"]]
    n = int(u.case["pr"])
    u.exit, data, u.seconds = run_json([*prstack, "upkeep", str(n), "--git", str(clone), "--onto",
                                        u.case["tag_newest"], "--format", "json"], "items")
    item = next((i for i in data.get("items", []) if i.get("pr") == n), None)
    if item:
        u.verdict, u.state = item.get("verdict") or "", item.get("state") or ""
        u.first_release = item.get("first_release")
    holding = set(git(clone, "tag", "--contains", u.case["landing"]).split())
    listed = [r["name"] for r in data.get("releases", []) if r["name"] in holding]
    u.ancestry_first = min(listed, key=_version, default=None)
    return u


def first_release_right(u: Upkeep) -> bool:
    return u.first_release is not None and u.first_release == u.ancestry_first


def _version(tag: str) -> Version:
    try:
        return Version(tag)
    except InvalidVersion:
        return Version("999999")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default="", help="only this owner/name")
    ap.add_argument("--limit", type=int, default=0, help="at most this many PRs per project (spread over its list)")
    ap.add_argument("--jobs", "-j", type=int, default=MAX_JOBS, help=f"parallel processes (at most {MAX_JOBS})")
    ap.add_argument("--no-upkeep", action="store_true")
    ap.add_argument("--refs", choices=REFS, default="all",
                    help="the work clones' PR refs: every one of the snapshot (default), or the cases' alone (faster)")
    ap.add_argument("--cases", default="", help="another cases file")
    a = ap.parse_args()
    cases = select(load_cases(Path(a.cases)) if a.cases else load_cases(), a.repo, a.limit)
    targets = [(c, role, c[col]) for c in cases for role, col in roles(c).items() if c[col] != "-"]
    missing = [wheel_spec(PROJECTS[c["repo"]], tag) for c, _, tag in targets
               if wheel_path(wheel_spec(PROJECTS[c["repo"]], tag)) is None]
    clones = {r: clone_path(PROJECTS[r], a.refs) for r in {c["repo"] for c in cases}}
    if missing or not all(c.is_dir() for c in clones.values()):
        print("run setup_cache.py first: " + (f"no wheel for {missing[0]}" if missing else "a clone is missing"))
        return 2
    prstack = prstack_command()
    jobs = max(1, min(a.jobs, MAX_JOBS))
    audits = [Audit(c, role, tag) for c, role, tag in targets]
    upkeeps = [] if a.no_upkeep else [Upkeep(c) for c in cases if "revert" not in c]
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(jobs) as ex:
        done_u = ex.map(lambda u: upkeep(prstack, clones, u), upkeeps)
        done_a = list(ex.map(lambda x: audit(prstack, clones, x), audits))
        done_up = list(done_u)
    wall = time.perf_counter() - t0
    version = subprocess.run([*prstack, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"prstack {prstack[0]} ({version}); clones with {a.refs} PR refs; {len(cases)} PRs, {len(done_a)} audits, "
          f"{len(done_up)} upkeeps; "
          f"{jobs} jobs, {os.cpu_count()} cores, load {load0:.1f} -> {os.getloadavg()[0]:.1f}; wall {wall:.0f}s")
    repos = sorted({c["repo"] for c in cases})
    report(repos, done_a, done_up)
    write_results(done_a, done_up)
    return 0


def roles(case: dict[str, str]) -> dict[str, str]:
    return REVERTED_ROLES if "revert" in case else ROLES


def select(cases: list[dict[str, str]], repo: str, limit: int) -> list[dict[str, str]]:
    out = []
    for r in sorted({c["repo"] for c in cases if c["repo"].startswith(repo)}):
        mine = [c for c in cases if c["repo"] == r]
        if limit and len(mine) > limit:
            mine = [mine[i * len(mine) // limit] for i in range(limit)]
        out += mine
    return out


def report(repos: list[str], audits: list[Audit], upkeeps: list[Upkeep]) -> None:
    rows = [*repos, "total"]

    def of(r: str, xs: list[Audit]) -> list[Audit]:
        return [x for x in xs if r == "total" or x.case["repo"] == r]

    def frac(xs: list[Audit], test: Callable[[Audit], bool]) -> str:
        return f"{sum(map(test, xs))}/{len(xs)}"

    print("\nprstack audit N --git CLONE --wheel W  ((a) first release holding the PR, (b) newest, (c) release before)")
    print(f"{'':20}{'PRs':>5}{'(a)/(b) exit 0':>16}{'+ each hunk':>13}{'(c) exit 1':>12}{'false present':>15}"
          f"{'no answer':>11}{'prstack s':>11}")
    for r in rows:
        xs = of(r, audits)
        ab, c = [x for x in xs if x.holds], [x for x in xs if not x.holds]
        print(f"{r:20}{len({x.case['pr'] for x in xs}):>5}{frac(ab, lambda x: x.right):>16}"
              f"{frac(ab, lambda x: x.right and x.all_present):>13}{frac(c, lambda x: x.right):>12}"
              f"{sum(x.exit == 0 for x in c):>15}{sum(x.exit not in (0, 1) for x in xs):>11}"
              f"{sum(x.seconds for x in xs):>11.1f}")
    print("\npeers on the same cases: git apply -R --check (PR diff on the unpacked wheel); git tag --contains LANDING")
    print(f"{'':20}{'apply (a)/(b)':>15}{'apply (c)':>11}{'apply false present':>21}{'tag (a)/(b)':>13}"
          f"{'tag (c)':>9}{'peers s':>9}")
    for r in rows:
        xs = of(r, audits)
        ab, c = [x for x in xs if x.holds], [x for x in xs if not x.holds]
        print(f"{r:20}{frac(ab, lambda x: x.apply_ok):>15}{frac(c, lambda x: not x.apply_ok):>11}"
              f"{sum(x.apply_ok for x in c):>21}{frac(ab, lambda x: x.contains):>13}"
              f"{frac(c, lambda x: not x.contains):>9}{sum(x.peer_seconds for x in xs):>9.1f}")
    hunks = Counter[str]()
    for x in audits:
        if x.holds:
            hunks.update(x.hunks)
    print("\nhunk statuses of (a)/(b) cases: " + ", ".join(f"{k} {v}" for k, v in hunks.most_common()))
    if upkeeps:
        print("\nprstack upkeep N --git CLONE --onto TAG_NEWEST")
        print(f"{'':20}{'PRs':>5}{'retire':>9}{'first_release = ancestry':>26}{'no answer':>11}"
              f"{'upkeep s':>10}  verdicts")
        for r in rows:
            us = [u for u in upkeeps if r == "total" or u.case["repo"] == r]
            verdicts = Counter(u.verdict or f"exit {u.exit}" for u in us)
            print(f"{r:20}{len(us):>5}{sum(u.verdict == 'retire' for u in us):>9}"
                  f"{sum(map(first_release_right, us)):>26}"
                  f"{sum(u.exit not in (0, 1) for u in us):>11}"
                  f"{sum(u.seconds for u in us):>10.1f}  " + ", ".join(f"{k} {v}" for k, v in verdicts.most_common()))


def case_id(c: dict[str, str], tag: str = "") -> str:
    return f"{c['repo']}#{c['pr']}" + (f"@{tag}" if tag else "")


def write_results(audits: list[Audit], upkeeps: list[Upkeep]) -> None:
    """Every answer: lineage/results.tsv (one audit a row), lineage/upkeep.tsv (one PR a row)."""
    d = cache_dir() / "lineage"
    d.mkdir(parents=True, exist_ok=True)
    with (d / "results.tsv").open("w") as f:
        f.write("case\trole\ttruth\tprstack_exit\tall_present\thunks\tgit_apply\ttag_contains\tseconds\tother_prs\n")
        for x in audits:
            hunks = ",".join(f"{k}:{v}" for k, v in sorted(x.hunks.items()))
            f.write(f"{case_id(x.case, x.tag)}\t{x.role}\t{'holds' if x.holds else 'lacks'}\t{x.exit}\t"
                    f"{x.all_present}\t{hunks}\t{x.apply_ok}\t{x.contains}\t{x.seconds:.2f}\t{others(x)}\n")
    with (d / "upkeep.tsv").open("w") as f:
        f.write("case\texit\tstate\tverdict\tfirst_release\tancestry_first\tseconds\n")
        for u in upkeeps:
            f.write(f"{case_id(u.case)}\t{u.exit}\t{u.state}\t{u.verdict}\t{u.first_release}\t{u.ancestry_first}\t"
                    f"{u.seconds:.2f}\n")
    wrong = [x for x in audits if not x.right]
    print(f"\n{len(wrong)} wrong audits (every answer in {d}/results.tsv and upkeep.tsv):")
    for x in wrong:
        print(f"  {case_id(x.case, x.tag)} ({x.role}, {x.case['how']}) exit {x.exit}, truth "
              f"{'holds' if x.holds else 'lacks'}: " + ", ".join(f"{k} {v}" for k, v in x.hunks.most_common())
              + (f"; with {others(x)}" if x.others else ""))


def others(x: Audit) -> str:
    return " ".join(f"#{n}" for n in x.others)


if __name__ == "__main__":
    raise SystemExit(main())
