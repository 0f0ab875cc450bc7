"""Run the real-world bench: prstack vs per-PR `git apply --check -R` and `patch -R --dry-run` on real PRs.

    PRSTACK_REALWORLD_MIRRORS=/work/.mirror python bench/realworld/run.py            # every case
    python bench/realworld/run.py --limit 40 --repo encode/httpx --label merged       # a subset
    python bench/realworld/run.py --views      # audit config-less snapshots through a view with a config
    python bench/realworld/run.py --site-packages   # prstack audits a real environment (environment.py)
Needs `prepare.py` first (and `environment.py` for --site-packages). Prints PR-level accuracy, false
"present", false "missing", cases answered and wall time per tool; writes every answer to
$PRSTACK_REALWORLD_CACHE/results.tsv.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from environment import census, site_for
from prepare import cache_dir, load_cases, unpacked, wheel_path
from projects import PROJECTS, Project

PRSTACK = [sys.executable, "-m", "prstack"]
STATUS = {"applied": "present", "missing": "absent", "partial": "absent", "not-shipped": "not-shipped"}


def view_of(p: Project) -> Path:
    """A repo with a config whose objects and refs are the snapshot's (for snapshots without `config`)."""
    m = p.mirror()
    if (m / "config").exists():
        return m
    v = cache_dir() / "views" / p.repo.replace("/", "+")
    if not (v / "config").exists():
        subprocess.run(["git", "init", "-q", "--bare", str(v)], check=True)
        (v / "objects" / "info" / "alternates").write_text(str(m / "objects") + "\n")
        shutil.copy(m / "packed-refs", v / "packed-refs")
        shutil.copytree(m / "refs", v / "refs", dirs_exist_ok=True)
        shutil.copy(m / "HEAD", v / "HEAD")
    return v


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
    """The PR's net diff (base..head) restricted to the package folders, paths as the wheel has them."""
    m = p.mirror()
    args = ["git", "-C", str(m), "diff", "--no-renames", "--binary", case["base"], case["head"]]
    if p.strip:
        args.append(f"--relative={p.strip}")
    args += ["--", *[x[len(p.strip):] if p.strip else x for x in p.packages]]
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
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--prstack-only", action="store_true")
    ap.add_argument("--site-packages", action="store_true",
                    help="prstack audits each case's real environment (environment.py) instead of its wheel")
    a = ap.parse_args()
    cases = [c for c in load_cases() if c["repo"].startswith(a.repo) and c["label"].startswith(a.label)]
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
    repos = {r: (view_of(PROJECTS[r]) if a.views else PROJECTS[r].mirror()) for r in {c["repo"] for c in cases}}
    tools = ["prstack"] + ([] if a.prstack_only else ["git-apply", "patch"])
    results: dict[str, list[tuple[str, float, str]]] = {}
    wall: dict[str, float] = {}
    for tool in tools:
        def one(c: dict[str, str], tool: str = tool) -> tuple[str, float, str]:
            if tool == "prstack":
                return run_prstack(c, repos[c["repo"]], a.site_packages)
            return run_peer(tool, c, PROJECTS[c["repo"]])
        t0 = time.perf_counter()
        with ThreadPoolExecutor(a.jobs) as ex:
            results[tool] = list(ex.map(one, cases))
        wall[tool] = time.perf_counter() - t0
    out = cache_dir() / "results.tsv"
    with out.open("w") as f:
        f.write("\t".join(["repo", "pr", "wheel", "label", "flags", "truth", *tools, "prstack_detail"]) + "\n")
        for i, c in enumerate(cases):
            f.write("\t".join([c["repo"], c["pr"], c["wheel"], c["label"], c["flags"], c["truth"],
                               *[results[t][i][0] for t in tools], results["prstack"][i][2]]) + "\n")
    n = len(cases)
    print(f"{n} cases ({len({(c['repo'], c['pr']) for c in cases})} PRs, {len(repos)} repos); "
          f"{os.cpu_count()} cores, {a.jobs} jobs; results in {out}")
    print(f"{'':26}" + "".join(f"{t:>14}" for t in tools))
    def count(r: list[tuple[str, float, str]], test) -> int:  # type: ignore[no-untyped-def]
        return sum(bool(test(x[0], c["truth"])) for x, c in zip(r, cases, strict=True))

    rows = {
        "PR-level accuracy": lambda r: f"{100 * count(r, lambda a, t: a == t) / n:.1f}%",
        'false "present"': lambda r: str(count(r, lambda a, t: a == "present" != t)),
        'false "missing"': lambda r: str(count(r, lambda a, t: a == "absent" != t)),
        "cases answered (no exit 2)": lambda r: f"{sum(x[0] != 'exit-2' for x in r)}/{n}",
    }
    for name, fn in rows.items():
        print(f"{name:26}" + "".join(f"{fn(results[t]):>14}" for t in tools))
    print(f"{'wall time':26}" + "".join(f"{wall[t]:>13.1f}s" for t in tools))
    for label in sorted({c["label"] for c in cases}):
        idx = [i for i, c in enumerate(cases) if c["label"] == label]
        print(f"  {label + f' ({len(idx)})':24}" + "".join(
            f"{100 * sum(results[t][i][0] == cases[i]['truth'] for i in idx) / len(idx):>13.1f}%" for t in tools))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
