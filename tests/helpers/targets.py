"""Builders for the target tests: a real repository with a PR, real wheels, real installs, the audit.

`audit_with_build` runs the library audit and hands back the target it opened too, with or
without a clone to tell what the build commit contains.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from installer import install
from installer.destinations import SchemeDictionaryDestination
from installer.sources import WheelFile

from conftest import GitRepo
from prstack.audit import audit_opened
from prstack.match.report import AuditReport
from prstack.sources.git.prs import ClonePRs
from prstack.sources.git.repo import GitClone
from prstack.targets.base import Target, TargetSpec
from prstack.targets.built_from import join_build
from prstack.targets.record import record_digest

MODEL = '''"""The model."""


def checkpoint_name(layer_id: int) -> str:
    return f"layer.{layer_id}"


def width() -> int:
    return 64
'''
MODEL_FIXED = MODEL.replace('f"layer.{layer_id}"', 'f"layer.{layer_id + 1}"')
RUNNER = '''"""The runner."""


def cache_key(layer_id: int) -> str:
    return f"kv.{layer_id}"
'''
KERNEL = "int cache_slot(int layer) {\n    return layer;\n}\n"
KERNEL_FIXED = KERNEL.replace("return layer;", "return layer + 1;")


@dataclass(frozen=True)
class Project:
    """A repository: base on main, PR #7 (the fix) at refs/pull/7/head."""

    repo: GitRepo
    base: str
    head: str

    @property
    def path(self) -> Path:
        return self.repo.path

    def files_at(self, rev: str, prefix: str = "src/", rename: str | None = None) -> dict[str, bytes]:
        """Files under `prefix` at `rev`, keyed without the prefix (optionally renaming the package)."""
        out = subprocess.run(["git", "-C", str(self.path), "archive", "--format=zip", rev], capture_output=True,
                             check=True).stdout
        with tempfile.TemporaryDirectory() as tmp:
            zpath = Path(tmp) / "a.zip"
            zpath.write_bytes(out)
            with zipfile.ZipFile(zpath) as zf:
                files = {n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}
        picked = {n.removeprefix(prefix): data for n, data in files.items() if n.startswith(prefix)}
        if rename:
            old, new = rename.split("=")
            picked = {(new + n.removeprefix(old)) if n.startswith(old) else n: d for n, d in picked.items()}
        return picked

    def checkout(self, rev: str, dest: Path) -> Path:
        """A plain copy of the tree at `rev` (an editable install's source directory)."""
        for rel, data in self.files_at(rev, prefix="").items():
            p = dest / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        return dest


def make_project(root: Path, *, package: str = "src/kvs", kernel: bool = False) -> Project:
    repo = GitRepo(root / "repo")
    files: dict[str, str | bytes | None] = {
        f"{package}/__init__.py": "",
        f"{package}/model.py": MODEL,
        f"{package}/runner.py": RUNNER,
        "tests/test_model.py": "def test_nothing() -> None:\n    pass\n",
    }
    if kernel:
        files["csrc/cache.cpp"] = KERNEL
    base = repo.commit("base", files)
    repo.branch("fix")
    fix: dict[str, str | bytes | None] = {f"{package}/model.py": MODEL_FIXED}
    if kernel:
        fix["csrc/cache.cpp"] = KERNEL_FIXED
    head = repo.commit("Fix the layer offset", fix)
    repo.pr_ref(7)
    repo.branch("main", base)
    return Project(repo, base, head)


def make_wheel(out_dir: Path, name: str, version: str, files: Mapping[str, bytes], *,
               metadata: tuple[str, ...] = (), dist_info: Mapping[str, str] | None = None) -> Path:
    """A py3-none-any wheel holding `files`, METADATA (plus `metadata` header lines), WHEEL, RECORD."""
    out_dir.mkdir(parents=True, exist_ok=True)
    di = f"{name.replace('-', '_')}-{version}.dist-info"
    entries = dict(files)
    head = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"{m}\n" for m in metadata)
    entries[f"{di}/METADATA"] = head.encode()
    entries[f"{di}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: prstack-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    for fname, text in (dist_info or {}).items():
        entries[f"{di}/{fname}"] = text.encode()
    record = "".join(f"{arc},sha256={record_digest(data)},{len(data)}\n" for arc, data in entries.items())
    path = out_dir / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for arc, data in entries.items():
            zf.writestr(arc, data)
        zf.writestr(f"{di}/RECORD", record + f"{di}/RECORD,,\n")
    return path


def install_into(wheel: Path, site: Path, *, installer: str = "pip", direct_url: dict[str, object] | None = None,
                 overwrite: bool = False) -> None:
    """Install like pip: INSTALLER, direct_url.json (PEP 610) when given, files over existing ones."""
    site.mkdir(parents=True, exist_ok=True)
    scheme = {key: str(site) for key in ("purelib", "platlib")}
    scheme |= {key: str(site.parent / key) for key in ("headers", "scripts", "data")}
    dest = SchemeDictionaryDestination(scheme, interpreter="python3", script_kind="posix",
                                       overwrite_existing=overwrite)
    extra = {"INSTALLER": f"{installer}\n".encode()}
    if direct_url is not None:
        extra["direct_url.json"] = json.dumps(direct_url).encode()
    with WheelFile.open(wheel) as source:
        install(source, dest, additional_metadata=extra)


def audit_with_build(project: Project, spec: TargetSpec, numbers: tuple[int, ...] = (7,),
                     clone: bool = True) -> tuple[AuditReport, Target]:
    """The library audit with its build join, and the target it opened; `clone=False` joins the
    metadata as if no clone were at hand (containment unknown)."""
    report, target = audit_opened(ClonePRs(GitClone(project.path), numbers), spec)
    if clone:
        return report, target
    build = join_build(target.evidence, report.target.distribution or report.target.kind, report.prs,
                       report.results, None, None)
    return replace(report, build=build), target


def statuses(report: AuditReport) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in report.results:
        out.setdefault(r.hunk.path, []).append(r.status.value)
    return out


# A project whose PR #7 changes only its tests and docs, and wheels of it
TEST = "from kvs.model import checkpoint_name\n\n\ndef test_name() -> None:\n    assert checkpoint_name(1)\n"
TEST_MORE = TEST + "\n\ndef test_width() -> None:\n    assert True\n"
LICENSE = "MIT License\n\nCopyright (c) acme\n"
AUTHORS = "acme\n"


def make_tests_only(root: Path, folder: str = "repo") -> tuple[GitRepo, str]:
    """src/kvs with LICENSE, AUTHORS.rst, docs; PR #7 changes only tests/ and docs/. Returns the
    repo and the head commit."""
    repo = GitRepo(root / folder)
    base = repo.commit("base", {
        "src/kvs/__init__.py": "", "src/kvs/model.py": MODEL, "src/kvs/runner.py": RUNNER,
        "tests/test_model.py": TEST, "docs/index.md": "# kvs\n", "LICENSE": LICENSE, "AUTHORS.rst": AUTHORS,
        ".github/workflows/ci.yml": "on: push\n",
    })
    repo.branch("fix")
    head = repo.commit("More tests", {"tests/test_model.py": TEST_MORE, "docs/index.md": "# kvs\n\nMore.\n",
                                      ".github/workflows/ci.yml": "on: [push, pull_request]\n"})
    repo.pr_ref(7)
    repo.branch("main", base)
    return repo, head


def package(top: str = "kvs") -> dict[str, bytes]:
    return {f"{top}/__init__.py": b"", f"{top}/model.py": MODEL.encode(), f"{top}/runner.py": RUNNER.encode()}


def wheel_of(root: Path, name: str, files: dict[str, bytes], metadata: tuple[str, ...] = ()) -> Path:
    return make_wheel(root / f"d-{name}", name, "1.0", files, metadata=metadata,
                      dist_info={"LICENSE": LICENSE, "AUTHORS.rst": AUTHORS})
