"""Choosing the distribution to audit: by the PRs' files, the repository URL, what is on disk. Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from prstack.errors import InputError
from prstack.targets.editable import EditableSource
from prstack.targets.layout import PathMap


@dataclass(frozen=True)
class DistFiles:
    """One distribution's identity and file list, as read from its metadata."""

    name: str
    version: str | None
    files: frozenset[str]
    """Installed paths relative to the site directory (an editable install's source files too)."""
    direct_url: str | None = None
    repos: frozenset[str] = frozenset()
    """OWNER/NAME (lower case) of its Project-URLs and direct_url.json."""
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    """Installed path -> absolute path, for files read elsewhere than the site directory
    (an editable install's source tree)."""
    editable: EditableSource | None = field(default=None, compare=False)
    """Set for an editable install: where its source is and what says so."""


@dataclass(frozen=True)
class Choice:
    """The distribution chosen, why, and the others that also ship the PRs' files."""

    dist: DistFiles
    reason: str
    candidates: tuple[str, ...] = ()


Intact = Callable[[DistFiles, Sequence[str]], int]
"""(candidate, its installed paths of the PRs' files) -> how many of them match its RECORD."""


def normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _shipped(cand: DistFiles, repo_paths: Sequence[str], repo_files: Sequence[str]) -> list[str]:
    """Installed paths of the PRs' files this candidate ships."""
    names = {PurePosixPath(p).name for p in repo_paths}
    if not any(PurePosixPath(f).name in names for f in cand.files):
        return []
    pmap = PathMap(cand.files, repo_files)
    found = [pmap.locate(p) for p in repo_paths]
    return [loc.installed_path for loc in found if loc.placement == "shipped" and loc.installed_path]


def _fit(shipped: Sequence[str], repo_paths: Sequence[str]) -> int:
    """How closely the installed paths follow the repository's: path parts shared at the end.

    Ties on the file count go to `acme/kv/model.py` over `acme/other/model.py` for the repo's
    `src/acme/kv/model.py` (namespace packages, where every sibling ships a model.py)."""
    total = 0
    for installed in shipped:
        iparts = PurePosixPath(installed).parts
        total += max(_tail(iparts, PurePosixPath(r).parts) for r in repo_paths)
    return total


def _depth(shipped: Sequence[str], repo_paths: Sequence[str]) -> int:
    """Folders the installed paths add in front of what they share with the repository's paths:
    a vendored copy (pip/_vendor/rich/console.py) loses to the real one (rich/console.py)."""
    total = 0
    for installed in shipped:
        iparts = PurePosixPath(installed).parts
        total += len(iparts) - max(_tail(iparts, PurePosixPath(r).parts) for r in repo_paths)
    return total


def _tail(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def choose(
    candidates: Sequence[DistFiles],
    repo_paths: Iterable[str],
    repo_files: Iterable[str],
    wanted: str | None,
    where: str,
    *,
    repo: str | None = None,
    intact: Intact | None = None,
) -> Choice:
    """The distribution that ships the PRs' files (or the one named with --dist).

    Ranked by the number of the PRs' files shipped, then by how closely the installed paths
    follow the repository's (namespace siblings), then by fewer folders in front (a vendored
    copy loses). Ties are broken by a Project-URL or direct_url.json naming `repo`
    (OWNER/NAME), then by which candidate's RECORD matches the files on disk (of two
    distributions installed over each other, the files are the last one's); else the
    candidates are named and --dist asked for.
    """
    paths, files = list(repo_paths), list(repo_files)
    if wanted is not None:
        key = normalise(wanted)
        for cand in candidates:
            if normalise(cand.name) == key:
                rest = [(_shipped(c, paths, files), c) for c in candidates]
                return Choice(cand, f"--dist {wanted}", _rest(rest, cand, paths))
        raise InputError(f"--dist {wanted}: not installed in {where}; check the name with pip list.")
    scored = [(shipped, cand) for cand in candidates if (shipped := _shipped(cand, paths, files))]
    if not scored:
        raise InputError(
            f"no distribution in {where} ships any file the PRs change; "
            "name it with --dist NAME or check the target."
        )

    def rank(sc: tuple[list[str], DistFiles]) -> tuple[int, int, int]:
        return len(sc[0]), _fit(sc[0], paths), -_depth(sc[0], paths)

    scored.sort(key=lambda sc: (*(-x for x in rank(sc)), normalise(sc[1].name)))
    best = rank(scored[0])
    tied = [sc for sc in scored if rank(sc) == best]
    if len(tied) == 1:
        n = len(scored)
        reason = "the only distribution shipping the PRs' files" if n == 1 else "ships the PRs' files most closely"
        return Choice(scored[0][1], reason, _rest(scored, scored[0][1], paths))
    if repo:
        by_repo = [sc for sc in tied if repo.lower() in sc[1].repos]
        if len(by_repo) == 1:
            chosen = by_repo[0][1]
            return Choice(chosen, f"its Project-URL or direct_url names {repo.lower()}", _rest(scored, chosen, paths))
    if intact is not None:
        counts = [(intact(cand, shipped), cand) for shipped, cand in tied]
        top = max(c for c, _ in counts)
        winners = [cand for c, cand in counts if c == top]
        if top and len(winners) == 1:
            reason = "its RECORD matches the files on disk (installed last)"
            return Choice(winners[0], reason, _rest(scored, winners[0], paths))
    names = ", ".join(sorted(c.name for _, c in tied))
    raise InputError(f"several distributions in {where} ship the PRs' files ({names}); pick one with --dist.")


def _rest(scored: Sequence[tuple[list[str], DistFiles]], chosen: DistFiles, paths: Sequence[str]) -> tuple[str, ...]:
    """The other candidates worth naming, sorted."""
    return tuple(sorted(c.name for shipped, c in scored if c is not chosen and shipped and _close(shipped, paths)))


def _close(shipped: Sequence[str], paths: Sequence[str]) -> bool:
    """Worth naming as another candidate: some file shares its folder and name with the repo's
    (pygments/console.py is no copy of rich/console.py; pip/_vendor/rich/console.py is)."""
    return any(
        _tail(PurePosixPath(i).parts, PurePosixPath(r).parts) >= min(2, len(PurePosixPath(r).parts))
        for i in shipped for r in paths
    )
