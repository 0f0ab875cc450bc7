"""Choosing the distribution to audit: by the PRs' files, the repository URL, what is on disk. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from packaging.utils import canonicalize_name

from prstack.errors import InputError, Option
from prstack.models import EditableSource
from prstack.placement.paths import PathMap, nearest_packages, path_parts, repo_packages, shared_tail, top_level_of


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


Shipped = list[tuple[tuple[str, ...], tuple[str, ...]]]
"""(installed path's parts, repository path's parts) of each of the PRs' files a candidate ships."""


def _shipped(cand: DistFiles, repo_paths: Sequence[str], names: frozenset[str], repo_files: Sequence[str]) -> Shipped:
    """The PRs' files this candidate ships. A candidate none of whose files is named like one of
    them is passed over after one look at each of its file names (no path map built)."""
    if not any(f.rpartition("/")[2] in names for f in cand.files):
        return []
    pmap = PathMap(cand.files, repo_files)
    out = []
    for path in repo_paths:
        loc = pmap.locate(path)
        if loc.placement == "shipped" and loc.installed_path:
            out.append((path_parts(loc.installed_path), path_parts(path)))
    return out


def _pool(candidates: Sequence[DistFiles], packages: frozenset[str]) -> Sequence[DistFiles]:
    """The candidates worth a path map. When some install one of the repository's packages as a
    top-level name, those and the ones holding a copy of such a package deeper down (a vendored
    pip/_vendor/rich/): the others can only share file names with the project. Else every candidate
    (a package renamed on install, a repository without packages)."""
    if not packages:
        return candidates
    own, near = False, []
    for cand in candidates:
        holds = _holds(cand.files, packages)
        if holds == "top":
            own = True
            near.append(cand)
        elif holds == "deeper":
            near.append(cand)
    return near if own else candidates


@lru_cache(maxsize=4096)
def _holds(files: frozenset[str], packages: frozenset[str]) -> str:
    """"top" when `files` install one of `packages` as a top-level name, else "deeper" when they hold
    a copy of one deeper down, else "" (looked through once per run: a distribution in another
    environment of the run is the same set of paths)."""
    names = "|".join(map(re.escape, sorted(packages)))
    # searched in a candidate's paths joined by newlines: this looks at every file of every candidate
    top = re.compile(f"\n(?:{names})(?:/|\\.[^/\n]*\n)")  # acme/..., or a module acme.py, acme.cpython-311.so
    deeper = re.compile(f"/(?:{names})/")  # pip/_vendor/acme/...
    text = "\n" + "\n".join(files) + "\n"
    if top.search(text):
        return "top"
    return "deeper" if deeper.search(text) else ""


@dataclass(frozen=True)
class _Scored:
    """A candidate shipping some of the PRs' files, and how it ranks (computed once)."""

    dist: DistFiles
    shipped: Shipped
    kept: int
    """The shipped files whose installed path keeps the repository's folder and name (no folder
    renamed on the way): a folder renamed on the evidence of common names alone (the repo's
    httpx/ as boto3/, for their __init__.py and exceptions.py) loses to the distribution that
    installs the repository's own package, even when the PRs' other files left that package."""
    fit: int
    """Path parts shared at the end with the repository's paths: ties on the file count go to
    `acme/kv/model.py` over `acme/other/model.py` for the repo's `src/acme/kv/model.py`
    (namespace packages, where every sibling ships a model.py)."""
    depth: int
    """Folders the installed paths add in front of what they share with the repository's paths:
    a vendored copy (pip/_vendor/rich/console.py) loses to the real one (rich/console.py)."""
    vendored: bool
    """Its copy of the files sits inside another package: pip/_vendor/rich/, typer/_click/."""
    close: bool
    """Worth naming as another candidate: some file shares its folder and name with the repo's,
    that folder one of the repository's packages (pygments/console.py is no copy of
    rich/console.py, nor other/core/utils.py of src/acme/core/utils.py; pip/_vendor/rich/console.py is)."""

    @property
    def rank(self) -> tuple[int, int, int, int]:
        return self.kept, len(self.shipped), self.fit, -self.depth


def _score(dist: DistFiles, shipped: Shipped, packages: frozenset[str]) -> _Scored:
    fit = depth = inside = kept = 0
    close = False
    for iparts, rparts in shipped:
        shared = shared_tail(iparts, rparts)
        head = len(iparts) - shared
        fit += shared
        kept += shared >= min(2, len(iparts))
        depth += head
        # a copy inside another package: two folders in front (typer/_click/core.py for the repo's
        # src/click/core.py), or one in front of the repository's own package (vendor/click/core.py)
        # (not a namespace sibling: acme/other/model.py for src/acme/kv/model.py starts inside the repo's paths)
        copy = (head >= 2 and iparts[0] not in rparts) or (head == 1 and shared >= 2 and iparts[1] in packages)
        inside += copy
        close = close or copy or (shared >= min(2, len(rparts)) and (
            not packages or any(part in packages for part in rparts[len(rparts) - shared : -1])))
    return _Scored(dist, shipped, kept, fit, depth, bool(shipped) and 2 * inside > len(shipped), close)


@dataclass(frozen=True)
class Asked:
    """What the user and the PR source say of the PRs' project: the distribution named with --dist,
    the repository (OWNER/NAME), other names it goes by (its clone's folder)."""

    dist: str | None = None
    repo: str | None = None
    names: Sequence[str] = ()


def choose(
    candidates: Sequence[DistFiles],
    repo_paths: Iterable[str],
    repo_files: Iterable[str],
    where: str,
    asked: Asked = Asked(),
    intact: Intact | None = None,
) -> Choice:
    """The distribution that ships the PRs' files (or the one named with --dist, `asked.dist`).

    Ranked by the number of the PRs' files shipped under their own folder and name, then by the
    number shipped at all (a renamed package folder counts there), then by how closely the installed paths
    follow the repository's (namespace siblings), then by fewer folders in front. Ties are broken
    by a Project-URL or direct_url.json naming `asked.repo` (OWNER/NAME), then by a name like the
    repository's (`asked.names`, or NAME of the repository), then by which candidate's RECORD matches the files
    on disk (of two distributions installed over each other, the files are the last one's); else
    the candidates are named and --dist asked for.

    When no distribution ships any of them (a PR of tests, docs or CI), the project's own
    distribution is the one found by its URL, its name or its top-level packages (those of the
    repository): nothing of the PRs is in it. A vendored copy (a folder inside another package)
    is never chosen on its own: without --dist that is an error naming it.

    The project is known by its files: when a candidate installs one of the repository's packages
    (top-level name), only it and the candidates holding a copy of such a package are weighed, and
    a tests- or docs-only PR falls to it even where another distribution ships files named like the
    PRs'. Linear in the candidates' files: one look at each path, and a path map only for the
    candidates weighed that ship a file named like one of the PRs' (usually the chosen one alone).
    """
    wanted, repo, names = asked.dist, asked.repo, asked.names
    paths, files = list(repo_paths), list(repo_files)
    basenames = frozenset(p.rpartition("/")[2] for p in paths)
    packages = repo_packages(files)
    hints = _Hints(repo.lower() if repo else None,
                   frozenset(canonicalize_name(n) for n in (*names, *([repo.rpartition("/")[2]] if repo else [])) if n),
                   packages, nearest_packages(paths, files) if len(packages) > 1 else packages)

    pool = _pool(candidates, packages)

    def scored_all() -> list[_Scored]:
        out = []
        for cand in pool:
            shipped = _shipped(cand, paths, basenames, files)
            if shipped:
                out.append(_score(cand, shipped, packages))
        return out

    if wanted is not None:
        key = canonicalize_name(wanted)
        for cand in candidates:
            if canonicalize_name(cand.name) == key:
                return Choice(cand, f"--dist {wanted}", _rest(scored_all(), cand))
        raise InputError(Option("dist"), f" {wanted}: not installed in {where}; check the name with pip list.")
    every = scored_all()
    scored = [sc for sc in every if not sc.vendored]
    if not scored:
        return _the_project(candidates, every, hints, where)
    scored.sort(key=lambda sc: (*(-x for x in sc.rank), canonicalize_name(sc.dist.name)))
    best = scored[0].rank
    tied = [sc for sc in scored if sc.rank == best]
    if len(tied) == 1:
        n = len(scored)
        reason = "the only distribution shipping the PRs' files" if n == 1 else "ships the PRs' files most closely"
        return Choice(scored[0].dist, reason, _rest(every, scored[0].dist))
    if hints.repo:
        by_repo = [sc for sc in tied if hints.repo in sc.dist.repos]
        if len(by_repo) == 1:
            chosen = by_repo[0].dist
            return Choice(chosen, f"its Project-URL or direct_url names {hints.repo}", _rest(every, chosen))
    by_name = [sc for sc in tied if canonicalize_name(sc.dist.name) in hints.names]
    if len(by_name) == 1:
        return Choice(by_name[0].dist, "named like the repository", _rest(every, by_name[0].dist))
    if intact is not None:
        counts = [(intact(sc.dist, ["/".join(i) for i, _ in sc.shipped]), sc.dist) for sc in tied]
        top = max(c for c, _ in counts)
        winners = [cand for c, cand in counts if c == top]
        if top and len(winners) == 1:
            reason = "its RECORD matches the files on disk (installed last)"
            return Choice(winners[0], reason, _rest(every, winners[0]))
    shown = ", ".join(sorted(sc.dist.name for sc in tied))
    raise InputError(f"several distributions in {where} ship the PRs' files ({shown}); pick one with ",
                     Option("dist"), ".")


@dataclass(frozen=True)
class _Hints:
    """What says which distribution is the PRs' project, when none ships their files."""

    repo: str | None
    """OWNER/NAME, lower case."""
    names: frozenset[str]
    """Names the repository goes by, normalised."""
    packages: frozenset[str]
    """The repository's own top-level import names."""
    nearest: frozenset[str] = frozenset()
    """Of those, the ones whose project folder holds the PRs' files (a monorepo's several projects)."""


def _the_project(candidates: Sequence[DistFiles], every: Sequence[_Scored], hints: _Hints, where: str) -> Choice:
    """The project's distribution when none ships the PRs' files: by its URL, its name, its packages."""
    pool, why = list(candidates), []
    if hints.repo and (sub := [c for c in pool if hints.repo in c.repos]):
        pool, why = sub, [f"its Project-URL or direct_url names {hints.repo}"]
    # each piece of evidence narrows the pool, or names the one candidate (a wheel, a lone dist)
    if (len(pool) > 1 or not why) and (sub := [c for c in pool if canonicalize_name(c.name) in hints.names]):
        pool, why = sub, [*why, "it is named like the repository"]
    if pool and (len(pool) > 1 or not why) and hints.packages:
        overlap = [(len(top_level_of(c.files) & hints.packages), c) for c in pool]
        most = max(n for n, _ in overlap)
        if most:
            pool = [c for n, c in overlap if n == most]
            # a monorepo's projects (pydantic, pydantic-core): the one whose folder holds the PRs' files
            near = [c for c in pool if top_level_of(c.files) & hints.nearest]
            pool = near if 0 < len(near) < len(pool) else pool
            shared = sorted(top_level_of(pool[0].files) & hints.packages)
            why = [*why, f"it installs the repository's package{'s' if len(shared) > 1 else ''} {', '.join(shared)}"
                   + (", whose project folder holds the PRs' files" if pool is near else "")]
    if why and len(pool) == 1:
        chosen = pool[0]
        return Choice(chosen, f"ships none of the PRs' files; the project's distribution: {'; '.join(why)}",
                      _rest(every, chosen))
    if why:
        shown = ", ".join(sorted(c.name for c in pool))
        raise InputError(f"several distributions in {where} may be the PRs' project ({shown}), none ships their "
                         "files; pick one with ", Option("dist"), ".")
    copies = [sc for sc in every if sc.vendored]
    if copies:
        sc = max(copies, key=lambda s: (len(s.shipped), canonicalize_name(s.dist.name)))
        iparts, rparts = sc.shipped[0]
        folder = "/".join(iparts[: len(iparts) - shared_tail(iparts, rparts)])
        found_in = f"{sc.dist.name} {sc.dist.version or ''}".rstrip()
        raise InputError(f"the PRs' project is not installed in {where}; only a vendored copy of it was found, "
                         f"{folder}/ in {found_in}; to audit that copy, give ", Option("dist"), f" {sc.dist.name}.")
    raise InputError(
        f"no distribution in {where} ships any file the PRs change, and none is their project by its "
        "URL, name or packages; name it with ", Option("dist"), " NAME or check the target."
    )


def _rest(scored: Sequence[_Scored], chosen: DistFiles) -> tuple[str, ...]:
    """The other candidates worth naming, sorted."""
    return tuple(sorted(sc.dist.name for sc in scored if sc.dist is not chosen and sc.close))
