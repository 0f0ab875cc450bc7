"""The real-world bench's projects: mirror folder, package prefix in the repo, PyPI dist and release tags."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Project:
    repo: str  # owner/name on GitHub
    dist: str  # PyPI distribution
    default: str  # default branch in the snapshot
    packages: tuple[str, ...]  # repo path prefixes the wheel ships (the package folders)
    strip: str  # repo prefix the wheel drops ("" or "src/")
    tags: tuple[tuple[str, str], ...]  # (git tag, PyPI version), oldest first

    def mirror(self) -> Path:
        """The bare snapshot, under $PRSTACK_REALWORLD_MIRRORS/<owner>+<name>/repo."""
        root = os.environ.get("PRSTACK_REALWORLD_MIRRORS", "/work/.mirror")
        return Path(root) / self.repo.replace("/", "+") / "repo"

    def shipped(self, path: str) -> bool:
        """Under a package folder, and in no hidden folder of it (pydantic/.agents/ is no package
        data: the wheels ship none of it)."""
        return any(path.startswith(p) for p in self.packages) and "/." not in path


PROJECTS: dict[str, Project] = {
    p.repo: p
    for p in (
        Project("encode/httpx", "httpx", "master", ("httpx/",), "",
                (("0.26.0", "0.26.0"), ("0.27.0", "0.27.0"), ("0.27.1", "0.27.1"),
                 ("0.27.2", "0.27.2"), ("0.28.0", "0.28.0"), ("0.28.1", "0.28.1"))),
        Project("encode/starlette", "starlette", "master", ("starlette/",), "",
                (("0.44.0", "0.44.0"), ("0.45.0", "0.45.0"), ("0.45.3", "0.45.3"),
                 ("0.46.0", "0.46.0"), ("0.46.2", "0.46.2"), ("0.47.0", "0.47.0"),
                 ("0.47.1", "0.47.1"), ("0.47.2", "0.47.2"), ("0.47.3", "0.47.3"))),
        Project("fastapi/fastapi", "fastapi", "master", ("fastapi/",), "",
                tuple((t, t) for t in ("0.140.8", "0.140.9", "0.140.10", "0.140.11",
                                        "0.140.12", "0.140.13", "0.141.0", "0.141.1"))),
        Project("pydantic/pydantic", "pydantic", "main", ("pydantic/",), "",
                tuple((f"v{v}", v) for v in ("2.12.5", "2.13.0", "2.13.1", "2.13.2", "2.13.3", "2.13.4"))),
    )
}
