"""Run the real-world bench: prstack vs per-PR `git apply --check -R` and `patch -R --dry-run` on real PRs.

    PRSTACK_REALWORLD_MIRRORS=/work/.mirror python bench/realworld/run.py            # every case
    python bench/realworld/run.py --limit 40 --repo encode/httpx --label merged       # a subset
    python bench/realworld/run.py --views      # audit config-less snapshots through a view with a config
    python bench/realworld/run.py --site-packages   # prstack audits a real environment (environment.py)
    python bench/realworld/run.py --variants all    # prstack through every clone shape (clones.py), same cases
Needs `prepare.py` first (and `environment.py` for --site-packages). Prints PR-level accuracy, false
"present", false "missing", cases answered and wall time per tool; writes every answer to
$PRSTACK_REALWORLD_CACHE/results.tsv.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from clones import VARIANTS, clone_for, view_of
from environment import census, site_for
from prepare import cache_dir, load_cases, unpacked, wheel_path
from projects import PROJECTS, Project

PRSTACK = [sys.executable, "-m", "prstack"]
STATUS = {"applied": "present", "missing": "absent", "partial": "absent", "not-shipped": "not-shipped"}


def run_prstack(case: dict[str, str], repo: Path, installed: bool) -> tuple[str, float, str]:
    target = (["--site-packages", str(site_for(case["wheel"]))] if installed
              else ["--wheel", str(wheel_path(case["wheel"]))])
    t0 = time.perf_counter()
    r = subprocess.run([*PRSTACK, "audit", case["pr"], "--git", str(repo), *target, "--format", "json"],
                       capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode == 2 or not r.stdout.strip():
        return "exit-2", dt, (r.stderr.strip().splitlines() or [""])[-1][:200]
    try:
        data = json.loads(r.stdout)
    except json.JSONDecodeError:
        return "exit-2", dt, "no JSON"
    asked = [pr for pr in data["prs"] if pr["number"] == int(case["pr"])]
    if not asked:
        return "exit-2", dt, "asked PR not in report"
    if case["label"].startswith("stacked"):  # truth covers the whole branch: the asked PR and those under it
        answers = {STATUS.get(pr["status"], pr["status"]) for pr in data["prs"]}
        answer = next((a for a in ("absent", "present") if a in answers), "not-shipped")
        return answer, dt, json.dumps({pr["number"]: pr["counts"] for pr in data["prs"]})
    return STATUS.get(asked[0]["status"], asked[0]["status"]), dt, json.dumps(asked[0]["counts"])


def peer_diff(case: dict[str, str], p: Project) -> str:
    """The PR's net diff (base..head) restricted to the package folders (not their hidden folders, as
    `Project.shipped`), paths as the wheel has them."""
    m = p.mirror()
    args = ["git", "-C", str(m), "diff", "--no-renames", "--binary", case["base"], case["head"]]
    if p.strip:
        args.append(f"--relative={p.strip}")
    args += ["--", *[x[len(p.strip):] if p.strip else x for x in p.packages], ":(exclude,glob)**/.*/**"]
    return subprocess.run(args, capture_output=True, text=True, errors="replace").stdout


def run_peer(tool: str, case: dict[str, str], p: Project) -> tuple[str, float, str]:
    t0 = time.perf_counter()
    diff = peer_diff(case, p)
    if not diff.strip():
        return "not-shipped", time.perf_counter() - t0, "no file under the package folders"
    tree = unpacked(case["wheel"])
    cmd = (["git", "apply", "--check", "-R", "-"] if tool == "git-apply"
           else ["patch", "-R", "--dry-run", "-p1", "-f", "-s"])
    r = subprocess.run(cmd, input=diff, cwd=tree, capture_output=True, text=True)
    return ("present" if r.returncode == 0 else "absent"), time.perf_counter() - t0, ""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0, help="at most this many cases (spread over the file)")
    ap.add_argument("--repo", default="", help="only this owner/name")
    ap.add_argument("--label", default="", help="only cases whose label starts with this")
    ap.add_argument("--views", action="store_true", help="run prstack on a view with a config (item 8 aside)")
    ap.add_argument("--variants", default="snapshot",
                    help=f"clone shapes prstack reads, comma-separated, or all: {', '.join(VARIANTS)}")
    ap.add_argument("--cases", default="", help="another cases file (rewritten.tsv: lines rewritten later)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--prstack-only", action="store_true")
    ap.add_argument("--site-packages", action="store_true",
                    help="prstack audits each case's real environment (environment.py) instead of its wheel")
    a = ap.parse_args()
    variants = list(VARIANTS) if a.variants == "all" else a.variants.split(",")
    if unknown := [v for v in variants if v not in VARIANTS]:
        print(f"unknown variant {unknown[0]}; one of {', '.join(VARIANTS)}")
        return 2
    every = load_cases(Path(a.cases)) if a.cases else load_cases()
    cases = [c for c in every if c["repo"].startswith(a.repo) and c["label"].startswith(a.label)]
    if a.limit and len(cases) > a.limit:
        step = len(cases) / a.limit
        cases = [cases[int(i * step)] for i in range(a.limit)]
    missing = [c["wheel"] for c in cases if wheel_path(c["wheel"]) is None or not unpacked(c["wheel"]).is_dir()]
    if missing:
        print(f"run prepare.py first: no wheel for {missing[0]}")
        return 2
    if a.site_packages:
        if not all(site_for(c["wheel"]).is_dir() for c in cases):
            print("run environment.py first: a case's environment is not built")
            return 2
        files, dists = census(site_for(cases[0]["wheel"]))
        print(f"prstack audits --site-packages of real environments: ~{files:,} files in {dists} distributions")
    projects = sorted({c["repo"] for c in cases})
    tools = [f"prstack {v}" if len(variants) > 1 else "prstack" for v in variants]
    peers = [] if a.prstack_only else ["git-apply", "patch"]
    results: dict[str, list[tuple[str, float, str]]] = {}
    wall: dict[str, float] = {}
    for tool, variant in zip(tools, variants, strict=True):
        repos = {r: (view_of(PROJECTS[r]) if a.views else clone_for(PROJECTS[r], variant)) for r in projects}
        results[tool], wall[tool] = _each(cases, a.jobs, lambda c, repos=repos: run_prstack(
            c, repos[c["repo"]], a.site_packages))
        right = sum(x[0] == c["truth"] for x, c in zip(results[tool], cases, strict=True))
        print(f"{tool}: {right}/{len(cases)} right in {wall[tool]:.1f}s", flush=True)
    for tool in peers:
        results[tool], wall[tool] = _each(cases, a.jobs, lambda c, tool=tool: run_peer(tool, c, PROJECTS[c["repo"]]))
    tools += peers
    out = cache_dir() / "results.tsv"
    with out.open("w") as f:
        f.write("\t".join(["repo", "pr", "wheel", "label", "flags", "truth", *tools, "prstack_detail"]) + "\n")
        for i, c in enumerate(cases):
            f.write("\t".join([c["repo"], c["pr"], c["wheel"], c["label"], c["flags"], c["truth"],
                               *[results[t][i][0] for t in tools], results[tools[0]][i][2]]) + "\n")
    n = len(cases)
    print(f"{n} cases ({len({(c['repo'], c['pr']) for c in cases})} PRs, {len(projects)} repos); "
          f"{os.cpu_count()} cores, {a.jobs} jobs, load {os.getloadavg()[0]:.1f}; results in {out}")
    _table(tools, cases, results, wall)
    for repo in projects:
        idx = [i for i, c in enumerate(cases) if c["repo"] == repo]
        print(f"\n{repo} ({len(idx)} cases)")
        _table(tools, [cases[i] for i in idx], {t: [results[t][i] for i in idx] for t in tools}, None)
    ours = [t for t in tools if t.startswith("prstack")]
    differ = [i for i in range(n) if len({results[t][i][0] for t in ours}) > 1]
    if differ:
        print(f"\n{len(differ)} case(s) answered differently by the clone shapes:")
        for i in differ:
            c = cases[i]
            print(f"  {c['repo']} #{c['pr']} {c['wheel']} truth {c['truth']}: "
                  + ", ".join(f"{t.removeprefix('prstack ')} {results[t][i][0]}" for t in ours))
    wrong = [(t, i) for t in ours for i in range(n) if results[t][i][0] != cases[i]["truth"]]
    for t, i in wrong[:40]:
        c = cases[i]
        print(f"  wrong: {t} {c['repo']} #{c['pr']} {c['wheel']} {c['label']} truth {c['truth']} said "
              f"{results[t][i][0]}: {results[t][i][2][:160]}")
    return 0


def _each(cases: list[dict[str, str]], jobs: int,
          one: Callable[[dict[str, str]], tuple[str, float, str]]) -> tuple[list[tuple[str, float, str]], float]:
    t0 = time.perf_counter()
    with ThreadPoolExecutor(jobs) as ex:
        got = list(ex.map(one, cases))
    return got, time.perf_counter() - t0


def _table(tools: list[str], cases: list[dict[str, str]], results: dict[str, list[tuple[str, float, str]]],
           wall: dict[str, float] | None) -> None:
    """One row per tool (each clone shape of prstack, then the peers): the bench's figures."""
    n = len(cases)

    def count(r: list[tuple[str, float, str]], test: Callable[[str, str], bool]) -> int:
        return sum(test(x[0], c["truth"]) for x, c in zip(r, cases, strict=True))

    print(f"{'':24}{'answered':>10}{'false present':>15}{'false missing':>15}{'PR-level':>10}"
          + ("" if wall is None else f"{'wall':>9}"))
    for t in tools:
        r = results[t]
        print(f"{t:24}{sum(x[0] != 'exit-2' for x in r):>6}/{n:<3}"
              f"{count(r, lambda x, y: x == 'present' != y):>15}{count(r, lambda x, y: x == 'absent' != y):>15}"
              f"{100 * count(r, lambda x, y: x == y) / n:>9.1f}%"
              + ("" if wall is None else f"{wall[t]:>8.1f}s"))


if __name__ == "__main__":
    raise SystemExit(main())
