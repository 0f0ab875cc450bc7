"""Whether a target holds the PRs' project at all, known by the repository's own files. Pure.

A target that holds nothing of the project (another project's wheel, an unrelated folder, an
environment without it) would otherwise pass: every file of the PRs "not shipped", exit 0. The
project is known by its packages, the folders of the repository with an __init__.py under
`src/`, `python/` or the root (whatever the clone's remotes say): a target holds the project
when some folder of it is named like one of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prstack.errors import Option, Part
from prstack.placement.paths import repo_packages


def package_source(paths: Iterable[str], repo_files: Iterable[str]) -> list[str]:
    """The paths that lie inside one of the repository's own packages (shipped-looking source,
    as opposed to tests, docs and CI)."""
    files = set(repo_files)
    packages = repo_packages(files)
    return [path for path in paths if _in_package(path.split("/"), packages, files)]


def _in_package(parts: list[str], packages: frozenset[str], files: set[str]) -> bool:
    if len(parts) == 2 and parts[0] == "src" and parts[1].removesuffix(".py") in packages:
        return True  # a top-level module under src/
    return any(parts[i] in packages and "/".join(parts[: i + 1]) + "/__init__.py" in files
               for i in range(len(parts) - 1))


def holds_project(target_files: Iterable[str], repo_files: Iterable[str]) -> bool:
    """Whether some folder of the target, or a top-level module, is named like one of the
    repository's packages."""
    packages = repo_packages(repo_files)
    for path in target_files:
        parts = path.split("/")
        if any(part in packages for part in parts[:-1]) or parts[-1].removesuffix(".py") in packages:
            return True
    return False


def absent_project(pr_paths: Sequence[str], repo_files: Sequence[str], target_files: Iterable[str],
                   found: str) -> tuple[Part, ...] | None:
    """The one line to stop on when the PRs change the project's package source and the target
    holds none of the project's packages (None when it holds them, or the PRs change only tests,
    docs or CI). `found`: what the target is, for the message."""
    source = package_source(pr_paths, repo_files)
    if not source or holds_project(target_files, repo_files):
        return None
    names = ", ".join(sorted(repo_packages(repo_files)))
    return (f"the target holds nothing of the PRs' project (its package{'s' if ',' in names else ''} {names}; "
            f"the PRs change {source[0]}{' and more' if len(source) > 1 else ''}): found {found}. "
            "Give the project's own target, or ", Option("dist"), " NAME to audit a distribution anyway.")
