"""Audits a real-sized container image and the site-packages it holds, side by side; then cross-checks
prstack's reading of an image against the real tools (skopeo, umoci).

    python bench/bench_image.py                   # build once (minutes), then measure: median of 5
    PRSTACK_IMAGE_CACHE=/tmp/imgcache python bench/bench_image.py --repeat 3
    python bench/bench_image.py --no-tools        # skip the skopeo/umoci cross-check
    python bench/bench_image.py --ab /tmp/old/src --repeat 7 --only docker   # A/B against other code

`--ab SRC` runs the images' audits with the prstack under SRC (a folder holding prstack/, e.g. an
older commit's `git archive HEAD~5 src | tar -x -C /tmp/old`) and with this checkout's, alternating
(old, new, then new, old: the machine's load hits both alike), and prints each side's medians (wall, CPU
of the process and the children it waited for: git, the blob hasher) and new/old ratios: of the
medians, and the median of each round's new/old (paired); the load average before and after.
`--first` runs the bench and its audits ahead of the machine's other work, as on a quiet machine (a
session of their own whose scheduling group has the highest priority; Linux, as root): on a machine
shared with other busy work, the blob hasher's core is otherwise someone else's.

What it builds, in $PRSTACK_IMAGE_CACHE (default ~/.cache/prstack-image), each once:
- wheels from PyPI (`pip download`: the data-science and cloud packages below, their dependencies, and
  httpx 0.27.1, the audited project), installed with `pip install --target` (byte-compiled, as a
  Dockerfile's `pip install` leaves them): a site-packages of tens of thousands of files;
- two images of it, written with the standard library (tarfile, gzip, hashlib, json): a `docker save`
  tarball of plain layers, and OCI image layouts of gzip and of zstd layers. Three layers: a base (with a file
  and a folder later layers remove), the environment without the project (the big one), the project
  with a whiteout and an opaque folder over the base's.

The audit: encode/httpx #3106 (bench/realworld/cases.tsv: in httpx 0.27.1) through the snapshot of
encode/httpx ($PRSTACK_REALWORLD_MIRRORS, default /work/.mirror, as bench/realworld/clones.view_of
makes it), against each image (`--image`) and against the site-packages (`--site-packages`). Each run
is a fresh process (`--child`); its clock starts once prstack is imported. Per target: wall median,
bytes read from the image file or layout (the target's own count), bytes the process read through
read(2) (/proc/self/io rchar: the git pipes, the tree's files, the image; not what its children read,
git itself or the process hashing the image's blobs), its peak RSS (ru_maxrss),
and the verdicts (they must be the same for every target).

The cross-check (skopeo and umoci from Debian's packages): `skopeo copy docker-archive:… oci:…
--dest-compress` turns our tarball into an OCI layout of gzip layers written by Go's tools, `umoci
unpack` applies its layers to a folder; prstack's merged view of that image (every file of its
site-packages, and each file's bytes) is compared to umoci's tree, and the verdicts for the image to
those for umoci's unpacked site-packages.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, os.environ.get("PRSTACK_BENCH_SRC") or str(HERE.parent / "src"))
"""The prstack a child audits with: this checkout's, or the one `--ab` names."""
sys.path.insert(0, str(HERE / "realworld"))

PACKAGES = ["plotly", "pandas", "scipy", "numpy", "sympy", "matplotlib", "scikit-learn", "botocore",
            "transformers", "pyarrow", "kubernetes", "mypy", "httpx==0.27.1"]
PROJECT = ("httpx", "httpx-0.27.1.dist-info")
"""The audited project's folders in the site-packages (its own layer, as a Dockerfile's last step)."""
SITE = "usr/local/lib/python3.11/site-packages"
REPO, PR = "encode/httpx", 3106
LAYER_TAR = "application/vnd.oci.image.layer.v1.tar"
LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
LAYER_ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd"


def cache() -> Path:
    d = Path(os.environ.get("PRSTACK_IMAGE_CACHE", Path.home() / ".cache" / "prstack-image"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def site_packages() -> Path:
    """The environment, installed once from wheels downloaded once."""
    site = cache() / "site"
    if (site / ".complete").exists():
        return site
    wheels = cache() / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", str(wheels),
                    *PACKAGES], check=True)
    shutil.rmtree(site, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site),
                    *map(str, sorted(wheels.glob("*.whl")))], check=True)
    (site / ".complete").write_text("")
    return site


# -- images, with the standard library -----------------------------------------------------------------

def _info(name: str, kind: bytes = tarfile.REGTYPE, size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mtime = kind, size, 1_700_000_000
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    return info


def _add_tree(tar: tarfile.TarFile, root: Path, into: str, keep: object) -> None:
    """Every file of `root` for which keep(top-level name) holds, under `into`, folders first."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        top = rel.split("/", 1)[0]
        if rel == ".":
            dirnames[:] = [d for d in dirnames if keep(d)]  # type: ignore[operator]
            filenames = [f for f in filenames if keep(f) and not f.startswith(".")]  # type: ignore[operator]
        elif not keep(top):  # type: ignore[operator]
            continue
        base = into if rel == "." else f"{into}/{rel}"
        tar.addfile(_info(base, tarfile.DIRTYPE))
        for f in sorted(filenames):
            path = Path(dirpath) / f
            if path.is_symlink():
                info = _info(f"{base}/{f}", tarfile.SYMTYPE)
                info.linkname = os.readlink(path)
                tar.addfile(info)
                continue
            with path.open("rb") as handle:
                tar.addfile(_info(f"{base}/{f}", size=path.stat().st_size), handle)


def _folders(tar: tarfile.TarFile, path: str) -> None:
    parts = path.split("/")
    for i in range(1, len(parts) + 1):
        tar.addfile(_info("/".join(parts[:i]), tarfile.DIRTYPE))


def _small(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    tar.addfile(_info(name, size=len(data)), io.BytesIO(data))


def build_layers(site: Path) -> list[Path]:
    """The three layer tars (plain), written once."""
    out = cache() / "layers"
    paths = [out / "base.tar", out / "env.tar", out / "project.tar"]
    if all(p.exists() for p in paths):
        return paths
    out.mkdir(exist_ok=True)
    with tarfile.open(paths[0], "w", format=tarfile.PAX_FORMAT) as tar:
        _folders(tar, "usr/local/bin")
        _small(tar, "usr/local/bin/python3.11", b"\x7fELF (an interpreter)\n")
        _folders(tar, "usr/local/lib/python3.11")
        _small(tar, "usr/local/lib/python3.11/os.py", b"import sys\n")
        _folders(tar, "tmp/build")
        _small(tar, "tmp/build/wheel-cache.bin", b"\0" * 65536)
        _folders(tar, "root/.cache/pip/http")
        _small(tar, "root/.cache/pip/http/entry", b"cached\n")
    with tarfile.open(paths[1], "w", format=tarfile.PAX_FORMAT) as tar:
        _folders(tar, SITE)
        _add_tree(tar, site, SITE, lambda top: top not in PROJECT)
    with tarfile.open(paths[2], "w", format=tarfile.PAX_FORMAT) as tar:
        _folders(tar, SITE)
        _add_tree(tar, site, SITE, lambda top: top in PROJECT)
        _small(tar, "tmp/build/.wh.wheel-cache.bin", b"")
        _folders(tar, "root/.cache/pip")
        _small(tar, "root/.cache/pip/.wh..wh..opq", b"")
    return paths


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _config(diff_ids: list[str]) -> bytes:
    return json.dumps({"architecture": "amd64", "os": "linux", "config": {"Env": ["PATH=/usr/local/bin"]},
                       "rootfs": {"type": "layers", "diff_ids": [f"sha256:{d}" for d in diff_ids]}}).encode()


def docker_archive(layers: list[Path]) -> Path:
    """A `docker save` tarball of the plain layers."""
    dest = cache() / "image-docker.tar"
    if dest.exists():
        return dest
    diff_ids = [_sha256(p) for p in layers]
    config = _config(diff_ids)
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    manifest = json.dumps([{"Config": config_name, "RepoTags": ["bench/httpx:0.27.1"],
                            "Layers": [f"{d}/layer.tar" for d in diff_ids]}]).encode()
    part = dest.with_suffix(".part")
    with tarfile.open(part, "w") as tar:
        for digest, path in zip(diff_ids, layers, strict=True):
            tar.add(path, arcname=f"{digest}/layer.tar")
        _small(tar, config_name, config)
        _small(tar, "manifest.json", manifest)
    part.rename(dest)
    return dest


def oci_layout(layers: list[Path], compression: str) -> Path:
    """An OCI image layout (a folder) of the layers compressed: "gzip" (level 6, as Go's default) or
    "zstd" (level 3, as buildx's compression=zstd)."""
    dest = cache() / f"image-oci-{compression}"
    if (dest / "index.json").exists():
        return dest
    blobs = dest / "blobs" / "sha256"
    blobs.mkdir(parents=True, exist_ok=True)
    descriptors = []
    for path in layers:
        packed = blobs / "packing"
        with path.open("rb") as src, packed.open("wb") as sink:
            if compression == "gzip":
                with gzip.GzipFile(fileobj=sink, mode="wb", compresslevel=6, mtime=0) as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            else:
                import zstandard

                zstandard.ZstdCompressor(level=3).copy_stream(src, sink)
        digest = _sha256(packed)
        packed.rename(blobs / digest)
        size = (blobs / digest).stat().st_size
        descriptors.append({"mediaType": LAYER_GZIP if compression == "gzip" else LAYER_ZSTD,
                            "digest": f"sha256:{digest}", "size": size})
    config = _config([_sha256(p) for p in layers])
    (blobs / hashlib.sha256(config).hexdigest()).write_bytes(config)
    manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                      "digest": "sha256:" + hashlib.sha256(config).hexdigest(), "size": len(config)},
                           "layers": descriptors}).encode()
    (blobs / hashlib.sha256(manifest).hexdigest()).write_bytes(manifest)
    (dest / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    (dest / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "size": len(manifest),
         "digest": "sha256:" + hashlib.sha256(manifest).hexdigest(),
         "platform": {"os": "linux", "architecture": "amd64"}}]}))
    return dest


# -- one audit, in a fresh process ------------------------------------------------------------------------

def _rchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    return 0


def _cpu() -> float:
    """CPU seconds of this process (all its threads) and of its children waited for (git, a hasher)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def child(kind: str, path: str, git: str) -> None:
    """One audit; prints its measures as JSON."""
    from prstack.audit import audit_opened
    from prstack.sources.git.prs import ClonePRs
    from prstack.sources.git.repo import GitClone
    from prstack.targets.base import TargetSpec

    read_before, start, cpu = _rchar(), time.perf_counter(), _cpu()
    done, target = audit_opened(ClonePRs(GitClone(Path(git)), [PR]), TargetSpec(kind, path))
    wall, cpu = time.perf_counter() - start, _cpu() - cpu
    import prstack

    print(json.dumps({"wall": wall, "cpu": cpu, "rchar": _rchar() - read_before,
                      "src": str(Path(prstack.__file__).parent.parent),
                      "image_bytes": getattr(target, "bytes_read", None),
                      "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                      "verdicts": [[h.hunk.path, h.hunk.old_start, h.status.value] for h in done.results],
                      "layers": dict(done.target.image.files) if done.target.image else {}}))


def measure(kind: str, path: Path, git: Path, src: Path | None = None) -> dict[str, object]:
    env = {**os.environ, "PRSTACK_BENCH_SRC": str(src)} if src is not None else None
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(path), str(git)], capture_output=True,
                         text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{kind} {path}: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def _mb(n: float | None) -> str:
    return "-" if n is None else f"{n / 1e6:9.1f}"


def compare_audits(targets: list[tuple[str, str, Path]], git: Path, repeat: int) -> None:
    runs: dict[str, list[dict[str, object]]] = {label: [] for label, _, _ in targets}
    for _ in range(repeat):  # (the targets alternate: the machine's load hits each alike)
        for label, kind, path in targets:
            runs[label].append(measure(kind, path, git))
    print(f"\n{'target':<34} {'wall s':>7} {'image MB read':>14} {'rchar MB':>9} {'peak RSS MB':>11}  verdicts")
    first = None
    for label, _, _ in targets:
        r = runs[label]
        verdicts = r[0]["verdicts"]
        first = verdicts if first is None else first
        print(f"{label:<34} {statistics.median(float(x['wall']) for x in r):7.2f} "  # type: ignore[arg-type]
              f"{_mb(r[0]['image_bytes']):>14} "  # type: ignore[arg-type]
              f"{_mb(statistics.median(int(x['rchar']) for x in r)):>9} "  # type: ignore[call-overload]
              f"{statistics.median(int(x['maxrss_kb']) for x in r) / 1e3:11.1f}  "  # type: ignore[call-overload]
              f"{'same' if verdicts == first else 'DIFFERENT'} "
              f"({', '.join(sorted({v[2] for v in verdicts}))}; {len(verdicts)} hunks)")  # type: ignore[attr-defined]


def _load() -> str:
    return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _first_in_line() -> None:
    """This process and its children ahead of the machine's other work: a session of their own (the
    kernel schedules each session's group as one), its group and itself at nice -20."""
    try:
        if os.getsid(0) != os.getpid():
            os.setsid()
        Path("/proc/self/autogroup").write_text("-20")
        os.nice(-20 - os.nice(0))
    except OSError as exc:
        raise SystemExit(f"--first: {exc} (it needs Linux and root)") from None


def _walls(runs: list[dict[str, object]]) -> str:
    return " ".join(f"{float(r['wall']):.2f}" for r in runs)  # type: ignore[arg-type]


def ab(old: Path, targets: list[tuple[str, str, Path]], git: Path, repeat: int) -> None:
    """Each target audited `repeat` times by the prstack under `old` and by this checkout's, alternating;
    medians and ratios."""
    new = HERE.parent / "src"
    print(f"A/B: old = {old}, new = {new}; {repeat} runs each, alternating; nice {os.nice(0)}; {_load()}")
    runs: dict[tuple[str, str], list[dict[str, object]]] = {}
    for n in range(repeat):
        for label, kind, path in targets:
            for side, src in (("old", old), ("new", new)) if n % 2 == 0 else (("new", new), ("old", old)):
                run = measure(kind, path, git, src)
                if Path(str(run["src"])) != src:
                    raise SystemExit(f"the {side} run imported prstack from {run['src']}, not {src}")
                runs.setdefault((label, side), []).append(run)
    print(f"\n{'target':<34} {'wall old':>8} {'new':>6} {'ratio':>6} {'paired':>6}  {'cpu old':>7} {'new':>6} "
          f"{'ratio':>6}  verdicts")
    for label, _, _ in targets:
        old_runs, new_runs = runs[(label, "old")], runs[(label, "new")]
        wall = [statistics.median(float(r["wall"]) for r in side) for side in (old_runs, new_runs)]  # type: ignore[arg-type]
        cpu = [statistics.median(float(r["cpu"]) for r in side) for side in (old_runs, new_runs)]  # type: ignore[arg-type]
        same = all(r["verdicts"] == old_runs[0]["verdicts"] for r in old_runs + new_runs)
        paired = statistics.median(float(n["wall"]) / float(o["wall"])  # type: ignore[arg-type]
                                   for o, n in zip(old_runs, new_runs, strict=True))
        print(f"{label:<34} {wall[0]:8.2f} {wall[1]:6.2f} {wall[1] / wall[0]:6.3f} {paired:6.3f}  {cpu[0]:7.2f} "
              f"{cpu[1]:6.2f} "
              f"{cpu[1] / cpu[0]:6.3f}  {'same' if same else 'DIFFERENT'}")
        print(f"{'':<34} walls: old {_walls(old_runs)}; new {_walls(new_runs)}")
    print(_load())


# -- the cross-check with skopeo and umoci ------------------------------------------------------------

def _against_tree(layout: Path, tree: Path) -> tuple[set[str], str]:
    """prstack's merged view of the image at `layout` against a tree umoci unpacked: its files, and a line
    comparing the file sets and every common file's bytes."""
    from prstack.targets.layers import Blobs, find_manifest, merge_layers, read_file

    on_disk = {str(p.relative_to(tree)): p for p in tree.rglob("*") if p.is_file() and not p.is_symlink()}
    blobs = Blobs(layout)
    merged = merge_layers(blobs, find_manifest(blobs, None))
    ours = {path for path, entry in merged.entries.items() if entry.kind == "file"}
    order = sorted(ours & on_disk.keys(), key=lambda p: (merged.entries[p].layer, merged.entries[p].offset))
    differ = [p for p in order if read_file(blobs, merged, merged.streams, p, 1 << 40) != on_disk[p].read_bytes()]
    media = ", ".join(sorted({layer.media_type.rpartition(".")[2] for layer in merged.layers}))
    return ours, (f"{len(merged.layers)} layers ({media}): files prstack {len(ours)}, umoci {len(on_disk)}; "
                  f"only prstack {len(ours - on_disk.keys())}, only umoci {len(on_disk.keys() - ours)}; "
                  f"bytes differ {len(differ)} of {len(order)} compared")


def _unpacked(layout: Path, bundle: Path) -> Path:
    if not (bundle / "rootfs").exists():
        subprocess.run(["umoci", "unpack", "--rootless", "--image", f"{layout}:bench", str(bundle)], check=True,
                       capture_output=True)
    return bundle / "rootfs"


def repacked_by_umoci(layout: Path) -> tuple[Path, Path]:
    """A layer written by umoci itself on top of the image: a folder and a file removed (its whiteouts),
    a file added; the layout, and the tree it was made from."""
    dest, tree = cache() / "image-umoci", _unpacked(layout, cache() / "umoci-bundle-repacked")
    if not (dest / "index.json").exists():
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(layout, dest)
        site = tree / SITE
        shutil.rmtree(site / "sympy" / "physics", ignore_errors=True)
        (site / "isympy.py").unlink(missing_ok=True)
        (site / "added_by_umoci.py").write_text("ADDED = True\n")
        subprocess.run(["umoci", "repack", "--image", f"{dest}:bench", str(tree.parent)], check=True,
                       capture_output=True)
    return dest, tree


def tools_check(archive: Path, git: Path) -> None:
    if not (shutil.which("skopeo") and shutil.which("umoci")):
        print("\ncross-check skipped: skopeo or umoci missing (apt-get install -y skopeo umoci)")
        return
    layout = cache() / "image-skopeo"
    if not (layout / "index.json").exists():
        subprocess.run(["skopeo", "copy", "-q", "--dest-compress", f"docker-archive:{archive}", f"oci:{layout}:bench"],
                       check=True)
    tree = _unpacked(layout, cache() / "umoci-bundle")
    ours, line = _against_tree(layout, tree)
    print("\ncross-check: `skopeo copy --dest-compress docker-archive: oci:`, then `umoci unpack`")
    print(f"  {line}")
    for gone in ("tmp/build/wheel-cache.bin", "root/.cache/pip/http/entry"):
        print(f"  /{gone} (removed by our whiteout / opaque folder): prstack {'has' if gone in ours else 'has not'}, "
              f"umoci {'has' if (tree / gone).exists() else 'has not'}")
    image = measure("image", layout, git)
    unpacked = measure("site-packages", tree / SITE, git)
    same = image["verdicts"] == unpacked["verdicts"]
    print(f"  verdicts: --image (skopeo's layout) {'==' if same else '!='} --site-packages (umoci's tree): "
          f"{', '.join(sorted({v[2] for v in image['verdicts']}))}")  # type: ignore[attr-defined]
    repacked, changed = repacked_by_umoci(layout)
    ours, line = _against_tree(repacked, changed)
    print("cross-check: `umoci repack` of that tree with a folder and a file removed, a file added")
    print(f"  {line}")
    print(f"  removed: prstack {'has' if f'{SITE}/isympy.py' in ours else 'has not'} isympy.py, "
          f"{sum(1 for p in ours if p.startswith(f'{SITE}/sympy/physics/'))} files in sympy/physics/ (umoci's tree "
          f"{sum(1 for p in (changed / SITE / 'sympy' / 'physics').rglob('*'))}, the image below "
          f"{sum(1 for p in (cache() / 'site' / 'sympy' / 'physics').rglob('*') if p.is_file())}); "
          f"added: prstack {'has' if f'{SITE}/added_by_umoci.py' in ours else 'has not'} added_by_umoci.py")
    image = measure("image", repacked, git)
    unpacked = measure("site-packages", changed / SITE, git)
    same = image["verdicts"] == unpacked["verdicts"]
    print(f"  verdicts: --image (umoci's layout) {'==' if same else '!='} --site-packages (its tree)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-tools", action="store_true")
    parser.add_argument("--build-only", action="store_true", help="build what is missing in the cache, then stop")
    parser.add_argument("--ab", type=Path, metavar="SRC",
                        help="A/B: the images audited by the prstack under SRC and by this checkout's, alternating")
    parser.add_argument("--only", action="append", choices=["docker", "gzip", "zstd"],
                        help="with --ab: only this image (repeatable)")
    parser.add_argument("--first", action="store_true",
                        help="run ahead of the machine's other work, as on a quiet machine (Linux, root)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.first:
        _first_in_line()
    from clones import view_of
    from projects import PROJECTS

    git = view_of(PROJECTS[REPO])
    site = site_packages()
    layers = build_layers(site)
    archive, layout, zstd = docker_archive(layers), oci_layout(layers, "gzip"), oci_layout(layers, "zstd")
    files = [p for p in site.rglob("*") if p.is_file()]
    print(f"site-packages: {len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.0f} MB; "
          f"layers (plain) {' + '.join(f'{p.stat().st_size / 1e6:.0f}' for p in layers)} MB; "
          f"gzip layers {sum(p.stat().st_size for p in (layout / 'blobs' / 'sha256').iterdir()) / 1e6:.0f} MB; "
          f"zstd layers {sum(p.stat().st_size for p in (zstd / 'blobs' / 'sha256').iterdir()) / 1e6:.0f} MB")
    if args.build_only:
        return
    if args.ab:
        images = {"docker": ("--image docker save (plain layers)", "image", archive),
                  "gzip": ("--image OCI layout (gzip layers)", "image", layout),
                  "zstd": ("--image OCI layout (zstd layers)", "image", zstd)}
        ab(args.ab.resolve(), [images[k] for k in args.only or images], git, args.repeat)
        return
    print(f"audit {REPO} #{PR} (httpx 0.27.1), median of {args.repeat} fresh processes")
    compare_audits([("--image docker save (plain layers)", "image", archive),
                    ("--image OCI layout (gzip layers)", "image", layout),
                    ("--image OCI layout (zstd layers)", "image", zstd),
                    ("--site-packages (the same files)", "site-packages", site)], git, args.repeat)
    if not args.no_tools:
        tools_check(archive, git)


if __name__ == "__main__":
    main()
