"""Targets built from a stack's tree as users install its top: a wheel, pip's site-packages, an editable
install, a container image; `target_args` gives prstack's option for each.

- tree: the tree itself (`--tree`).
- wheel: a py3-none-any wheel of the repository's packages (`SHIPPED`) under their import names, with a
  dist-info (METADATA, WHEEL, top_level.txt, RECORD of sha256 digests and sizes) (`--wheel`).
- site: that wheel installed by pip into a fresh folder (`pip install --no-deps --no-compile --target`)
  (`--site-packages`).
- editable: a site-packages whose dist-info has PEP 610's direct_url.json (editable, the tree's file URL)
  and a .pth naming the tree's folder that holds the package, as pip's editable install of a src/ or flat
  layout leaves it (`--site-packages`).
- image: a `docker save` tar of one layer holding the site folder under
  usr/local/lib/python3.11/site-packages (`--image`).

Files outside the package (tests, docs) are in none but the tree: their hunks are not shipped.
Only the standard library and pip are used.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

KINDS = ("tree", "wheel", "site", "editable", "image")
VERSION = "0.0.0"
IMAGE_SITE = "usr/local/lib/python3.11/site-packages"


@dataclass(frozen=True)
class Shipped:
    """What a repository ships: its packages' folders in the tree (those of `folders` that are there; a
    layout may change between heads, and a second package may come and go) and its distribution's name."""

    folders: tuple[str, ...]
    dist: str

    def present(self, tree: Path) -> list[str]:
        return [f for f in self.folders if (tree / f / "__init__.py").is_file()]


# Checked against the heads of stacks.tsv (git ls-tree) and their pyproject.toml/setup.py: lerobot and
# accelerate have src/ at every head, llama-stack a flat llama_stack/; torchtune ships recipes/ beside
# torchtune/ (packages.find include), torchtitan torchtitan_recipes/ where it is; torchtune's earliest
# heads (llm/, diffusion/) hold neither.
SHIPPED = {
    "huggingface/trl": Shipped(("trl",), "trl"),
    "pytorch/ao": Shipped(("torchao",), "torchao"),
    "huggingface/peft": Shipped(("src/peft",), "peft"),
    "meta-llama/llama-stack": Shipped(("llama_stack", "src/llama_stack"), "llama_stack"),
    "pytorch/torchtitan": Shipped(("torchtitan", "torchtitan_recipes"), "torchtitan"),
    "huggingface/accelerate": Shipped(("src/accelerate",), "accelerate"),
    "huggingface/lerobot": Shipped(("src/lerobot", "lerobot"), "lerobot"),
    "pytorch/torchtune": Shipped(("torchtune", "recipes"), "torchtune"),
}


class NoTarget(ValueError):
    """The tree cannot give this target (no package of the repository in it): a skip's reason."""


def target_args(kind: str, repo: str, tree: Path, work: Path) -> list[str]:
    """prstack's target option for `kind` built from `tree` in `work` (a new folder)."""
    if kind == "tree":
        return ["--tree", str(tree)]
    shipped = SHIPPED.get(repo)
    if shipped is None:
        raise NoTarget(f"no shipped package known for {repo} (targets.SHIPPED)")
    folders = shipped.present(tree)
    if not folders:
        raise NoTarget(f"the tree holds none of {', '.join(shipped.folders)}")
    work.mkdir(parents=True)
    if kind == "editable":
        return ["--site-packages", str(editable_site(tree, folders, shipped.dist, work / "site-packages"))]
    wheel = make_wheel(tree, folders, shipped.dist, work)
    if kind == "wheel":
        return ["--wheel", str(wheel)]
    site = pip_install(wheel, work / "site-packages")
    if kind == "site":
        return ["--site-packages", str(site)]
    if kind == "image":
        return ["--image", str(docker_save(site, work / "image.tar", f"bench/{shipped.dist.lower()}:top"))]
    raise ValueError(f"unknown target kind {kind}; known: {', '.join(KINDS)}")


def record_row(name: str, data: bytes) -> str:
    """A RECORD line as pip writes it: sha256 in urlsafe base64 without padding, and the size."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def dist_info(dist: str, folders: list[str], extra: dict[str, bytes]) -> dict[str, bytes]:
    """The dist-info's files but RECORD, keyed by their path in the wheel or site-packages."""
    di = dist_info_dir(dist)
    files = {
        f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {VERSION}\n".encode(),
        f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: prstack-bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{di}/top_level.txt": "".join(f"{Path(f).name}\n" for f in folders).encode(),
    }
    return files | {f"{di}/{name}": data for name, data in extra.items()}


def dist_stem(dist: str) -> str:
    return dist.replace("-", "_")


def dist_info_dir(dist: str) -> str:
    return f"{dist_stem(dist)}-{VERSION}.dist-info"


def with_record(files: dict[str, bytes], dist: str) -> dict[str, bytes]:
    """`files` and the RECORD listing them (and itself, with no digest), as pip writes it."""
    record = f"{dist_info_dir(dist)}/RECORD"
    return files | {record: ("".join(record_row(n, d) for n, d in files.items()) + f"{record},,\n").encode()}


def package_files(tree: Path, folders: list[str]) -> dict[str, bytes]:
    """The packages' files under their import names (`src/peft/x.py` -> `peft/x.py`); a symlink gives the
    file it points at, as a wheel build copies it; dangling links and caches are left out."""
    out = {}
    for folder in folders:
        root = tree / folder
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                path = Path(dirpath) / name
                if path.is_file() and not name.endswith((".pyc", ".pyo")):
                    out[f"{root.name}/{path.relative_to(root).as_posix()}"] = path.read_bytes()
    return out


def make_wheel(tree: Path, folders: list[str], dist: str, out: Path) -> Path:
    """A py3-none-any wheel of the packages at `tree/folder`s, with its dist-info and RECORD."""
    files = with_record(package_files(tree, folders) | dist_info(dist, folders, {}), dist)
    path = out / f"{dist_stem(dist)}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def pip_install(wheel: Path, site: Path) -> Path:
    """`wheel` installed by pip into the new folder `site`, laid out as site-packages."""
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile", "--no-index",
                    "--disable-pip-version-check", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, text=True)
    return site


def editable_site(tree: Path, folders: list[str], dist: str, site: Path) -> Path:
    """A site-packages holding an editable install of the tree: a .pth naming the folder that holds the
    packages (src/ or the tree's root) and a dist-info with direct_url.json, INSTALLER and RECORD."""
    direct = {"url": tree.resolve().as_uri(), "dir_info": {"editable": True}}
    pth = f"__editable__.{dist_stem(dist)}-{VERSION}.pth"
    holders = dict.fromkeys(str((tree / f).parent.resolve()) for f in folders)
    files = with_record({pth: "".join(f"{h}\n" for h in holders).encode()} | dist_info(dist, folders, {
        "INSTALLER": b"pip\n", "REQUESTED": b"", "direct_url.json": json.dumps(direct).encode()}), dist)
    for name, data in files.items():
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return site


def docker_save(site: Path, dest: Path, tag: str) -> Path:
    """A `docker save` tar of an image of one layer: `site`'s files under IMAGE_SITE. manifest.json names
    the config (its diff_ids the layer's sha256) and the layer (<sha256>/layer.tar)."""
    layer = dest.with_suffix(".layer.tar")
    with tarfile.open(layer, "w", format=tarfile.PAX_FORMAT) as tar:
        parts = IMAGE_SITE.split("/")
        for i in range(1, len(parts) + 1):
            tar.addfile(_dir_info("/".join(parts[:i])))
        for dirpath, dirnames, filenames in os.walk(site):
            dirnames.sort()
            rel = Path(dirpath).relative_to(site).as_posix()
            base = IMAGE_SITE if rel == "." else f"{IMAGE_SITE}/{rel}"
            for d in dirnames:
                tar.addfile(_dir_info(f"{base}/{d}"))
            for name in sorted(filenames):
                tar.add(Path(dirpath) / name, f"{base}/{name}", recursive=False)
    layer_hex = _sha256_file(layer)
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                         "rootfs": {"type": "layers", "diff_ids": [f"sha256:{layer_hex}"]}}).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    manifest = json.dumps([{"Config": config_name, "RepoTags": [tag], "Layers": [f"{layer_hex}/layer.tar"]}]).encode()
    with tarfile.open(dest, "w") as tar:
        for name, data in ((config_name, config), ("manifest.json", manifest)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        tar.addfile(_dir_info(layer_hex))
        tar.add(layer, f"{layer_hex}/layer.tar", recursive=False)
    layer.unlink()
    return dest


def _dir_info(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1_700_000_000
    return info


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()

