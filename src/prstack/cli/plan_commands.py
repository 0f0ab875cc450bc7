"""The commands that plan ahead: plan (before installing) and upkeep (at each upstream release)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from prstack.cli.support import (
    SourceOptions,
    check_interpreter,
    found_source,
    parse_prs,
    progress_shown,
    show,
)
from prstack.cli.targets import TargetOptions, target_spec
from prstack.errors import InputError
from prstack.render import OutputFormat

if TYPE_CHECKING:

    from prstack.targets.base import TargetSpec
    from prstack.upkeep.series import Series
from prstack.cli.surface import (
    EXIT_CODES,
    ApiUrlOpt,
    BaseOpt,
    DistOpt,
    FormatOpt,
    GitOpt,
    InstalledOpt,
    OfflineOpt,
    PrsArg,
    PythonOpt,
    RepoOpt,
    SiteOpt,
    TreeOpt,
    WheelOpt,
    app,
    examples,
    input_files_of,
    write_output,
)


@app.command(epilog=examples(
    "prstack plan 40727 40898 --git ~/src/vllm --onto v0.20.1",
    "prstack plan 40898 --git ~/src/vllm --installed --emit-script apply.sh",
) + "\n\n" + EXIT_CODES.format(ok="the plan is clean", bad="a conflict"))
def plan(
    prs: PrsArg, git: GitOpt = None,
    onto: Annotated[str | None, typer.Option("--onto", metavar="REF", help="Ref, tag or sha to plan onto.")] = None,
    installed: InstalledOpt = False, python: PythonOpt = None, site_packages: SiteOpt = None,
    wheel: WheelOpt = None, tree: TreeOpt = None, dist: DistOpt = None, base: BaseOpt = None,
    emit_patch: Annotated[Path | None, typer.Option("--emit-patch", metavar="FILE",
                                                    help="Write the combined patch here.")] = None,
    emit_script: Annotated[Path | None, typer.Option("--emit-script", metavar="FILE",
                                                     help="Write the git commands here.")] = None,
    fmt: FormatOpt = OutputFormat.TABLE, repo: RepoOpt = None, api_url: ApiUrlOpt = None, offline: OfflineOpt = False,
) -> None:
    """Before installing: the order, what is already in, and what will conflict."""
    from prstack.plan.planning import PlanRequest, combined_patch, plan_stack
    from prstack.render.plan import plan_script, render_plan
    from prstack.sources.git.prs import ClonePRs
    from prstack.sources.github.access import Access
    from prstack.sources.open import open_clone
    from prstack.targets.repos import repo_candidates
    from prstack.targets.spec import onto_or_target

    numbers, repo = parse_prs(prs, repo)
    has_target = installed or any(v is not None for v in (python, site_packages, wheel, tree))
    onto_or_target(onto, has_target, "an onto-point")
    if onto is None and not has_target:
        raise InputError(
            "no onto-point: give --onto REF (a tag, branch or sha of the clone), or the installed "
            "target to plan onto with --installed, --python, --site-packages, --wheel or --tree."
        )
    spec = None if onto is not None else _one_target(installed, python, site_packages, wheel, tree, dist)
    git, repo = _found(SourceOptions(git, repo, api_url, offline, base), spec, numbers)
    with progress_shown():
        source = open_clone(numbers, git=git, repo=repo, access=Access(api_url, offline=offline),
                             named=(lambda: repo_candidates(spec)) if spec is not None else None).git
        result = plan_stack(PlanRequest(ClonePRs(source, numbers, base), onto=onto, target=spec))
    inputs = input_files_of(*((wheel,) if wheel is not None else ()))
    if emit_script is not None:
        write_output(emit_script, plan_script(result).encode(), inputs)
    if emit_patch is not None:
        if (patch := combined_patch(source, result)) is not None:
            write_output(emit_patch, patch, inputs)
        else:
            from prstack.render.text import clean

            print(f"{clean(str(emit_patch))} not written: the plan changes nothing on {clean(result.onto.name)}.",
                  file=sys.stderr)
    show(render_plan(result, fmt))
    raise typer.Exit(0 if result.clean else 1)


def _found(given: SourceOptions, spec: TargetSpec | None, numbers: Sequence[int]) -> tuple[Path | None, str | None]:
    """(--git, --repo) as given, or as the target's own records name them (see found_source)."""
    found = found_source(given, spec, numbers).options
    return found.git, found.repo


@app.command(epilog=examples(
    "prstack upkeep 40727 40898 --git ~/src/vllm --onto v0.21.0",
    "prstack upkeep --patch patches/ --git ~/src/vllm --releases 'v0.2*' --write refreshed/",
    "prstack upkeep --wheel dist/vllm-0.21.0-cp312-linux_x86_64.whl   # the carried set of ./pyproject.toml",
    "prstack upkeep --patch patches/ --release-wheel wheels/pkg-1.0-py3-none-any.whl "
    "--release-wheel wheels/pkg-1.1-py3-none-any.whl",
) + "\n\n" + EXIT_CODES.format(ok="every item is retire or keep", bad="an item is partly upstream or needs a rebase"))
def upkeep(
    prs: Annotated[list[str] | None, typer.Argument(
        metavar="[PR...]", help="Carried PRs (N, #N or URL); none: the manifest's.", show_default=False)] = None,
    git: GitOpt = None,
    patch: Annotated[list[str] | None, typer.Option(
        "--patch", metavar="FILE", help="A carried patch, folder of patches or quilt series (repeatable).")] = None,
    releases: Annotated[str | None, typer.Option(
        "--releases", metavar="PATTERN", help="Tags that are releases, a glob (default: tags that are versions).")
    ] = None,
    release_wheel: Annotated[list[str] | None, typer.Option(
        "--release-wheel", metavar="WHEEL", help="A release as its wheel file, instead of the clone's tags "
        "(repeatable; in the order of the versions in their names; the newest is the default candidate).")] = None,
    repo: Annotated[str | None, typer.Option(
        "--repo", metavar="OWNER/NAME", help="Read the PRs from GitHub (into prstack's cache, as audit does); "
        "the releases then come from --release-wheel, or from --git's tags.")] = None,
    api_url: ApiUrlOpt = None, offline: OfflineOpt = False,
    onto: Annotated[str | None, typer.Option(
        "--onto", metavar="REF", help="The candidate: a ref of the clone (default: the newest release).")] = None,
    installed: InstalledOpt = False, python: PythonOpt = None, site_packages: SiteOpt = None,
    wheel: WheelOpt = None, tree: TreeOpt = None, dist: DistOpt = None,
    write: Annotated[Path | None, typer.Option(
        "--write", metavar="DIR", help="Write the refreshed series for the candidate here (with a `series` file), "
        "replacing the folder whole.")] = None,
    in_place: Annotated[bool, typer.Option(
        "--in-place", help="Let --write replace the folder the carried patches are read from.")] = False,
    manifest: Annotated[Path | None, typer.Option(
        "--manifest", metavar="FILE", help="prstack.toml or pyproject.toml declaring the carried set "
        "(default: the one in this folder, when no PR or patch is given).")] = None,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """For each carried PR or patch: retire, keep or rebase on the candidate, and the first release holding it."""
    from prstack.render.upkeep import render_upkeep
    from prstack.sources.git.repo import GitClone
    from prstack.upkeep.carrying import Carried, UpkeepRequest
    from prstack.upkeep.carrying import upkeep as run_upkeep
    from prstack.upkeep.manifest import find_manifest, read_manifest
    from prstack.upkeep.series import refreshed_series

    numbers, repo = parse_prs(prs or [], repo)
    notes: dict[str, str] = {}
    if manifest is not None or (not numbers and not patch):
        declared = read_manifest(manifest or find_manifest(Path.cwd()))
        numbers, patch, notes = list(declared.numbers), list(declared.patches), declared.notes
        git, releases = git or declared.git, releases or declared.releases
        dist = dist or declared.distribution
    has_target = installed or any(v is not None for v in (python, site_packages, wheel, tree))
    spec = _one_target(installed, python, site_packages, wheel, tree, dist) if has_target else None
    if spec is not None and not patch:  # a clone the target was installed from; its repository for wheels
        found_git, found_repo = _found(SourceOptions(git, repo, api_url, offline), spec, numbers)
        git, repo = found_git, (found_repo if release_wheel else repo)
    if repo is not None and git is None and not release_wheel:
        raise InputError("--repo reads the PRs from GitHub, not the releases: give each release with "
                         "--release-wheel WHEEL, or a clone with its tags (--git PATH).")
    with progress_shown():
        clone, meta = GitClone(git) if git else None, {}
        if repo is not None and numbers:
            from prstack.sources.github.access import Access
            from prstack.sources.open import open_clone

            opened = open_clone(numbers, git=git, repo=repo, access=Access(api_url, offline=offline))
            clone, meta = opened.git, dict(opened.meta)
        carried = Carried(tuple(numbers), tuple(patch or ()), notes, meta)
        done = run_upkeep(UpkeepRequest(carried, clone, releases=releases, onto=onto, target=spec,
                                        release_wheels=tuple(release_wheel or ()),
                                        stdin=_stdin_if("-" in carried.patches)))
    if write is not None:
        from prstack.files import read_if_file

        _write_series(write, refreshed_series(done.report, done.candidate_file, read_if_file),
                      input_files_of(*(patch or ()), *((manifest,) if manifest is not None else ())), in_place)
    show(render_upkeep(done.report, fmt))
    raise typer.Exit(0 if done.report.settled else 1)


def _write_series(folder: Path, series: Series, inputs: Sequence[Path], in_place: bool) -> None:
    """The refreshed series swapped in whole for `folder`; never over the carried patches unless asked."""
    from prstack.files import holding, replace_series_folder
    from prstack.render.text import clean

    if not in_place and (held := holding(folder, inputs)) is not None:
        raise InputError(f"--write {folder}: it holds {held}, read by this run; write to another folder, or "
                         "give --in-place to replace the carried patches with the refreshed series.")
    replace_series_folder(folder, series.files)
    left = "".join(f"  not refreshed (still in series, after a comment): {clean(n)}: {clean(why)}\n" for n, why in
                   ((f"#{i.number}" if i.patch is None else i.patch, why) for i, why in series.unwritten))
    sys.stderr.write(f"wrote {len(series.written)} patch(es) and a series file to {clean(str(folder))}; "
                     f"dropped {len(series.dropped)} retired\n{left}")


def _one_target(installed: bool, python: str | None, site_packages: Path | None, wheel: Path | None,
                tree: Path | None, dist: str | None) -> TargetSpec:
    """The one target of a plan or an upkeep, as its options give it."""
    options = TargetOptions(installed, (python,) if python is not None else (),
                            (site_packages,) if site_packages is not None else (),
                            (wheel,) if wheel is not None else (), (tree,) if tree is not None else (), dist=dist)
    return target_spec(options, check_interpreter)


def _stdin_if(asked: bool) -> bytes:
    """Standard input's bytes where a patch is given as '-' (one more than a patch may hold, at most)."""
    from prstack.sources.patch.files import PATCH_MAX_BYTES

    return sys.stdin.buffer.read(PATCH_MAX_BYTES + 1) if asked else b""
