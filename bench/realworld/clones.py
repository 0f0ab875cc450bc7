"""The clone shapes the real-world bench audits through: each made from the snapshot, kept in the cache.

    python bench/realworld/clones.py                 # make every variant of every project (once)
    python bench/realworld/run.py --variants all     # audit every case through each of them

A variant is a real clone as users have them: a local mirror's clone (origin a path), one whose
remote was removed, a fork's clone (origin the user's own fork, the project as `upstream`), a bare
mirror, a shallow clone with the PR refs fetched, and a CI cache's `--reference` clone whose origin
is the GitHub URL. Each holds the PR refs as refs/pull/N/head. Everything lives under
$PRSTACK_REALWORLD_CACHE/clones/<variant>/<owner>+<name>; a folder appears only once complete.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from prepare import HERE, cache_dir, load_cases
from projects import PROJECTS, Project

PULLS = "+refs/pull/*/head:refs/pull/*/head"
TAGS = "+refs/tags/*:refs/tags/*"


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def view_of(p: Project) -> Path:
    """A bare repository with a config whose objects and refs are the snapshot's (the snapshots
    come without one): the `origin` every variant is cloned from."""
    m = p.mirror()
    if (m / "config").exists():
        return m
    v = cache_dir() / "views" / p.repo.replace("/", "+")
    if not (v / "config").exists():
        subprocess.run(["git", "init", "-q", "--bare", str(v)], check=True)
        (v / "objects" / "info" / "alternates").write_text(str(m / "objects") + "\n")
        shutil.copy(m / "packed-refs", v / "packed-refs")
        shutil.copytree(m / "refs", v / "refs", dirs_exist_ok=True)
        shutil.copy(m / "HEAD", v / "HEAD")
    return v


def _local_origin(p: Project, src: Path, dst: Path) -> None:
    """`git clone /srv/mirror/project.git`: origin a path, then the PR refs fetched from it."""
    git("clone", "-q", "--no-checkout", str(src), str(dst))
    git("fetch", "-q", "origin", PULLS, cwd=dst)


def _no_remote(p: Project, src: Path, dst: Path) -> None:
    """A clone whose remote was removed (a tarball's repository, a copied CI workspace)."""
    _local_origin(p, src, dst)
    git("remote", "remove", "origin", cwd=dst)


def _fork(p: Project, src: Path, dst: Path) -> None:
    """A fork's clone: origin the user's fork (its default branch behind the project's, at the
    oldest bench release), the project as `upstream` with the PR refs fetched from it."""
    _local_origin(p, src, dst)
    git("remote", "rename", "origin", "upstream", cwd=dst)
    git("remote", "set-url", "upstream", f"https://github.com/{p.repo}.git", cwd=dst)
    owner_less = p.repo.split("/")[1]
    git("remote", "add", "origin", f"https://github.com/prstack-bench-user/{owner_less}.git", cwd=dst)
    stale = git("rev-parse", f"{p.tags[0][0]}^{{commit}}", cwd=dst)
    git("update-ref", f"refs/remotes/origin/{p.default}", stale, cwd=dst)
    git("symbolic-ref", "refs/remotes/origin/HEAD", f"refs/remotes/origin/{p.default}", cwd=dst)
    git("update-ref", f"refs/heads/{p.default}", stale, cwd=dst)


def _bare_mirror(p: Project, src: Path, dst: Path) -> None:
    """`git clone --mirror`: bare, every ref of origin (PR refs included), origin a path."""
    git("clone", "-q", "--mirror", str(src), str(dst))


def _shallow(p: Project, src: Path, dst: Path) -> None:
    """`git clone --depth N`, N deep enough for the oldest bench release and every case's fork
    point and the longest of the bench's PRs, with those PR refs (and the PRs they stack on) and
    the release tags, as a CI job fetches the PRs it audits (httpx's and starlette's oldest open
    PRs fork so early that their clones end up whole; fastapi's and pydantic's stay cut). A clone
    cut above a PR's fork point cannot say what the PR changed: prstack stops and says how to
    deepen it."""
    cases = [c for c in _all_cases() if c["repo"] == p.repo]
    oldest = git("rev-parse", f"{p.tags[0][0]}^{{commit}}", cwd=src)
    forks = {git("merge-base", oldest, p.default, cwd=src), *(c["base"] for c in cases)}
    depth = max(int(git("rev-list", "--count", f"{f}..{p.default}", cwd=src)) for f in forks) + 50
    _tolerant_init(src, dst)
    pack = f"--upload-pack={_upload_pack()}"
    numbers = sorted({n for c in cases for n in (c["pr"], *(f.removeprefix("stacked-on-") for f in c["flags"].split(",")
                                                          if f.startswith("stacked-on-")))}, key=int)
    main = [f"+refs/heads/{p.default}:refs/remotes/origin/{p.default}",
            *(f"+refs/tags/{t}:refs/tags/{t}" for t, _ in p.tags)]
    longest = max(int(git("rev-list", "--count", f"{c['base']}..{c['head']}", cwd=src)) for c in cases) + 2
    prs = [f"+refs/pull/{n}/head:refs/pull/{n}/head" for n in numbers]
    # one fetch: a later `fetch --depth` into a shallow clone shortens what an earlier one fetched
    git("fetch", "-q", "--no-tags", f"--depth={max(depth, longest)}", "--filter=blob:limit=1g", pack, "origin",
        *main, *prs, cwd=dst)
    git("symbolic-ref", "refs/remotes/origin/HEAD", f"refs/remotes/origin/{p.default}", cwd=dst)
    git("update-ref", f"refs/heads/{p.default}", f"refs/remotes/origin/{p.default}", cwd=dst)
    git("symbolic-ref", "HEAD", f"refs/heads/{p.default}", cwd=dst)


def _all_cases() -> list[dict[str, str]]:
    """The cases of every cases file (cases.tsv, rewritten.tsv)."""
    return [c for f in sorted(HERE.glob("*.tsv")) for c in load_cases(f)]


def _tolerant_init(src: Path, dst: Path) -> None:
    """An empty clone of `src` (origin file://src) that accepts the few blobs the snapshots lack
    (as a partial clone would: a transfer that lacks them otherwise aborts)."""
    git("init", "-q", str(dst))
    git("remote", "add", "origin", f"file://{src}", cwd=dst)
    git("config", "core.repositoryformatversion", "1", cwd=dst)
    git("config", "extensions.partialClone", "origin", cwd=dst)
    git("config", "remote.origin.promisor", "true", cwd=dst)


def _upload_pack() -> str:
    """An upload-pack that packs past the few blobs the snapshots lack (a transfer would abort)."""
    hook = cache_dir() / "pack-objects-allow-missing"
    if not hook.exists():
        hook.write_text('#!/bin/sh\nexec "$@" --missing=allow-any\n')
        hook.chmod(0o755)
    return f"git -c uploadpack.packObjectsHook={hook} -c uploadpack.allowFilter=true upload-pack"


def _reference(p: Project, src: Path, dst: Path) -> None:
    """A CI cache's clone: `git clone --reference CACHE URL`, objects borrowed from the cache,
    origin the project's GitHub URL, the PR refs fetched."""
    pack = f"--upload-pack={_upload_pack()}"
    git("clone", "-q", "--no-checkout", "--reference", str(src), pack, f"file://{src}", str(dst))
    git("fetch", "-q", pack, "origin", PULLS, cwd=dst)
    git("remote", "set-url", "origin", f"https://github.com/{p.repo}.git", cwd=dst)


VARIANTS: dict[str, Callable[[Project, Path, Path], None] | None] = {
    "snapshot": None,  # the bare snapshot as fetched: no config, no remote
    "local-origin": _local_origin,
    "no-remote": _no_remote,
    "fork-upstream": _fork,
    "bare-mirror": _bare_mirror,
    "shallow": _shallow,
    "reference": _reference,
}


def clone_for(p: Project, variant: str) -> Path:
    """The project's clone of that shape, made once."""
    make = VARIANTS[variant]
    if make is None:
        return p.mirror()
    final = cache_dir() / "clones" / variant / p.repo.replace("/", "+")
    if final.is_dir():
        return final
    tmp = final.with_name(final.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    make(p, view_of(p), tmp)
    _repoint(tmp, final)
    tmp.rename(final)
    return final


def _repoint(tmp: Path, final: Path) -> None:
    """A clone's own paths (a worktree's core settings name none; alternates may) after the rename."""
    for alt in (tmp / "objects" / "info" / "alternates", tmp / ".git" / "objects" / "info" / "alternates"):
        if alt.exists():
            alt.write_text(alt.read_text().replace(str(tmp), str(final)))


def main() -> int:
    names = sys.argv[1:] or list(VARIANTS)
    for variant in names:
        for p in PROJECTS.values():
            print(f"{variant:14} {p.repo:20} {clone_for(p, variant)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
