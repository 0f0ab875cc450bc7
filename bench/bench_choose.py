"""Times choosing the distribution on a big site-packages whose file names recur across distributions.

    python bench/bench_choose.py                 # 40 distributions, about 20,000 files
    python bench/bench_choose.py --scale 2       # twice the distributions and files
    python bench/bench_choose.py --keep /tmp/env # keep the site-packages to inspect

It writes a site-packages (plain files plus *.dist-info/METADATA and RECORD, as pip leaves them):
distributions whose packages share file names (__init__.py, utils.py, base.py, ...), one of them the
project of a generated repository (src/ layout, tests/, docs/), and PR paths of a 50-PR stack (the
project's modules, its tests, its docs). Then, `--repeat` times, it reads the distributions
(`find_distributions`), chooses (`choose`) and opens the whole target (`open_target`), and prints
the medians of CPU time (the work is single-threaded; on a shared machine wall time says
more about the neighbours). No network; it puts `src/` on the path.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from prstack.placement.choose import choose
from prstack.targets.base import TargetSpec, open_target
from prstack.targets.installed import find_distributions

COMMON = ("__init__.py", "utils.py", "base.py", "config.py", "types.py", "errors.py", "core.py",
          "models.py", "main.py", "version.py", "compat.py", "helpers.py", "base_manager.py")
FOLDERS = ("", "core", "utils", "models", "io", "api", "internal", "backends", "plugins", "cli")


def package_files(rng: random.Random, top: str, n: int) -> list[str]:
    """`n` module paths under `top`, most of them named like the other packages' modules."""
    out = {f"{top}/__init__.py"}
    while len(out) < n:
        folder = rng.choice(FOLDERS)
        sub = f"{folder}/{rng.choice(FOLDERS)}" if folder and rng.random() < 0.3 else folder
        name = rng.choice(COMMON) if rng.random() < 0.6 else f"mod_{rng.randrange(10_000)}.py"
        prefix = f"{top}/{sub}/" if sub else f"{top}/"
        out.add(prefix + name)
        if sub:
            out.add(prefix + "__init__.py")
    return sorted(out)


def write_dist(site: Path, name: str, files: list[str]) -> None:
    di = site / f"{name}-1.0.dist-info"
    di.mkdir(parents=True)
    (di / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
                                 f"Project-URL: Source, https://github.com/someone/{name}\n")
    (di / "INSTALLER").write_text("pip\n")
    record = [f"{f},," for f in files]
    record += [f"{di.name}/{m},," for m in ("METADATA", "INSTALLER", "RECORD")]
    (di / "RECORD").write_text("\n".join(record) + "\n")
    for f in files:
        p = site / f
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"# {name}: {f}\n")


def build(root: Path, dists: int, files_per_dist: int, seed: int = 7) -> tuple[Path, list[str], list[str]]:
    """The site-packages, the PR paths and the repository's files."""
    rng = random.Random(seed)
    site = root / "site-packages"
    project = package_files(rng, "acme", files_per_dist)
    write_dist(site, "acme", project)
    for i in range(dists - 1):
        top = f"pkg{i:03d}"
        files = package_files(rng, top, files_per_dist)
        if i == 3:  # a distribution vendoring a copy of the project
            files += [f"{top}/_vendor/{f}" for f in project[: files_per_dist // 4]]
        write_dist(site, top, files)
    tests = [f"tests/{f.removeprefix('acme/').replace('/', '_')}" for f in project[::3]]
    tests = [t if t.endswith("__init__.py") else t.replace("tests/", "tests/test_") for t in tests]
    docs = [f"docs/{i}.md" for i in range(40)]
    repo_files = [f"src/{f}" for f in project] + tests + docs + ["pyproject.toml", "README.md"]
    modules = [f"src/{f}" for f in rng.sample(project, 120)]
    pr_paths = sorted(set(modules + rng.sample(tests, 40) + docs[:10]))
    return site, pr_paths, repo_files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=1, help="multiply distributions and files")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="build the site-packages here and keep it")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="prstack-choose-"))
    site, pr_paths, repo_files = build(root, 40 * args.scale, 520)
    found = find_distributions([str(site)])
    total = sum(len(meta.files) for _, meta in found.values())
    print(f"{len(found)} distributions, {total} files; {len(pr_paths)} PR paths, {len(repo_files)} repo files")
    reads, chooses, opens = [], [], []
    for _ in range(args.repeat):
        t0 = time.process_time()
        found = find_distributions([str(site)])
        t1 = time.process_time()
        choice = choose([m for _, m in found.values()], pr_paths, repo_files, str(site))
        t2 = time.process_time()
        open_target(TargetSpec("site-packages", str(site)), pr_paths, repo_files)
        t3 = time.process_time()
        reads.append(t1 - t0)
        chooses.append(t2 - t1)
        opens.append(t3 - t2)
    print(f"chosen: {choice.dist.name} ({choice.reason}); others named: {', '.join(choice.candidates) or '-'}")
    med = statistics.median
    print(f"median CPU time of {args.repeat}: read {med(reads) * 1000:.0f} ms, choose {med(chooses) * 1000:.0f} ms, "
          f"open_target (read + choose + open) {med(opens) * 1000:.0f} ms")
    if args.keep is None:
        import shutil

        shutil.rmtree(root)


if __name__ == "__main__":
    main()
