"""Cold and warm audits of a 2-PR stack of a big generated repository (20,000 commits, 2,000 files)
through the GitHub path, against a local smart-HTTP git server and GitHub-shaped API on 127.0.0.1:
prints requests, bytes and time as the server counted them.

    python bench/bench_github.py [--commits N] [--files N] [--keep DIR] [--runs N] [--no-compare]

--no-compare makes the server refuse the compare endpoint, so prstack falls back to what every cold
audit did before the bounded fetch (the whole history blobless, then blobs one by one).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.gitserver import BIG_COMMITS, BIG_FILES, GitHttpServer, build_big, serve_big
from prstack.cli import main


def export(repo: Path, rev: str, dest: Path) -> Path:
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def run(server: GitHttpServer, tree: Path, cache: Path, *extra: str) -> tuple[int, int, float, dict[str, object]]:
    os.environ["PRSTACK_CACHE_DIR"] = str(cache)
    server.reset()
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = main(["audit", "2", "--repo", "acme/widget", "--api-url", server.base_url, "--tree", str(tree),
                     "--format", "json", *extra])
    took = time.perf_counter() - start
    requests, sent = server.totals()
    report = json.loads(out.getvalue())
    return requests, sent, took, {"exit": code, "prs": [(p["number"], p["status"]) for p in report["prs"]]}


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=BIG_COMMITS)
    parser.add_argument("--files", type=int, default=BIG_FILES)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-compare", action="store_true", help="refuse the compare endpoint (the old path)")
    parser.add_argument("--keep", type=Path, help="build the repository here (kept) instead of a temp dir")
    args = parser.parse_args()
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "PRSTACK_REPO"):
        os.environ.pop(name, None)
    os.environ["PATH"] = "/usr/bin:/bin"
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        start = time.perf_counter()
        big = build_big(root / "widget.git", args.commits, args.files)
        print(f"generated {args.commits} commits, {args.files} files in {time.perf_counter() - start:.1f} s")
        tree = export(big.path, "refs/pull/1/head", root / "tree")
        server = serve_big(big)
        try:
            rows: dict[str, list[tuple[int, int, float]]] = {"cold": [], "warm": []}
            for i in range(args.runs):
                cache = root / f"cache{i}"
                for kind in ("cold", "warm"):
                    if args.no_compare and kind == "cold":
                        server.fail(r"/compare/", 404)
                    requests, sent, took, verdict = run(server, tree, cache)
                    rows[kind].append((requests, sent, took))
                    if i == 0:
                        print(f"{kind}: {verdict}")
                        for hit in server.hits:
                            print(f"   {hit.method:4} {hit.status} {hit.sent:>10,} {hit.path[:90]}")
            for kind, got in rows.items():
                print(f"{kind}: requests {[r for r, _, _ in got]}, bytes {[b for _, b, _ in got]}, "
                      f"time median {statistics.median(t for _, _, t in got):.2f} s "
                      f"(runs {', '.join(f'{t:.2f}' for _, _, t in got)})")
        finally:
            server.stop()


if __name__ == "__main__":
    main_bench()
