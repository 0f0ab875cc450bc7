"""Build a pure-Python wheel of a src-layout tree and install it: real wheels, no build backend."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from installer import install
from installer.destinations import SchemeDictionaryDestination
from installer.sources import WheelFile

WHEEL_META = "Wheel-Version: 1.0\nGenerator: prstack-demo\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def build_wheel(package_root: Path, name: str, version: str, out_dir: Path,
                direct_url: str | None = None) -> Path:
    """Zip every file under `package_root` (the folder holding the import packages, e.g. src/)
    with METADATA, WHEEL and RECORD, as a py3-none-any wheel."""
    out_dir.mkdir(parents=True, exist_ok=True)
    dist_info = f"{name}-{version}.dist-info"
    wheel_path = out_dir / f"{name}-{version}-py3-none-any.whl"
    entries: list[tuple[str, bytes]] = []
    for path in sorted(package_root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            entries.append((path.relative_to(package_root).as_posix(), path.read_bytes()))
    entries.append((f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()))
    entries.append((f"{dist_info}/WHEEL", WHEEL_META.encode()))
    if direct_url is not None:
        entries.append((f"{dist_info}/direct_url.json", direct_url.encode()))
    record = "".join(f"{arc},{_record_hash(data)},{len(data)}\n" for arc, data in entries)
    record += f"{dist_info}/RECORD,,\n"
    with zipfile.ZipFile(wheel_path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc, data in entries:
            zf.writestr(arc, data)
        zf.writestr(f"{dist_info}/RECORD", record)
    return wheel_path


def install_wheel(wheel_path: Path, site_packages: Path) -> None:
    """Install a wheel into a bare site-packages directory (scripts and data beside it)."""
    site_packages.mkdir(parents=True, exist_ok=True)
    scheme = {key: str(site_packages) for key in ("purelib", "platlib")}
    scheme |= {key: str(site_packages.parent / key) for key in ("headers", "scripts", "data")}
    destination = SchemeDictionaryDestination(scheme, interpreter="python3", script_kind="posix")
    with WheelFile.open(wheel_path) as source:
        install(source, destination, additional_metadata={})
