"""Run the whole audit on the bundled example: the library path `prstack demo` shows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prstack.audit import audit_stack
from prstack.demo.fixture import DemoRepo, build_repo, export_tree
from prstack.demo.wheel import build_wheel, install_wheel
from prstack.match.report import AuditReport
from prstack.models import TargetKind
from prstack.sources.git.repo import GitClone
from prstack.targets import TargetSpec

GREP_NEEDLE = "layer_id + 1"
GREP_FILE = "kvserve/model.py"


@dataclass(frozen=True)
class DemoBuild:
    repo: DemoRepo
    tree: Path
    """The fork build's source tree."""
    wheel: Path
    site_packages: Path


@dataclass(frozen=True)
class DemoResult:
    build: DemoBuild
    report: AuditReport
    grep_found: bool
    """Whether grep finds the fix's marker in the file a user would search."""

    def verdict(self) -> str:
        """One sentence: what grep would have concluded and what prstack found."""
        missing = [r for r in self.report.results if r.status.shipped and not r.status.present]
        grep = (
            f"grep for '{GREP_NEEDLE}' in {GREP_FILE} "
            + ("finds it, so grep says the layer-offset fix of #40727 landed" if self.grep_found
               else "does not find it, so grep says the fix is absent")
        )
        if not missing:
            return f"{grep}; prstack found every shipped hunk of the stack applied."
        places = ", ".join(
            f"#{r.hunk.pr} {r.installed_path or r.hunk.path}:{r.hunk.new_start} ({r.status.value})" for r in missing
        )
        return f"{grep}; prstack found {len(missing)} shipped hunk(s) not there: {places}."


def build(workdir: Path) -> DemoBuild:
    """The upstream repository, the fork's wheel, and a site-packages with it installed."""
    repo = build_repo(workdir / "upstream")
    tree = export_tree(repo.path, repo.fork_build, workdir / "fork-tree")
    wheel = build_wheel(tree / "src", "kvserve", f"0.3.0+g{repo.fork_build[:9]}", workdir / "dist")
    site = workdir / "venv" / "site-packages"
    install_wheel(wheel, site)
    return DemoBuild(repo, tree, wheel, site)


def run_demo(workdir: Path, numbers: tuple[int, ...] = (40898,)) -> DemoResult:
    demo = build(workdir)
    report = audit_stack(
        GitClone(demo.repo.path), numbers, TargetSpec(TargetKind.SITE_PACKAGES, str(demo.site_packages))
    )
    marker = (demo.site_packages / GREP_FILE).read_text()
    return DemoResult(demo, report, GREP_NEEDLE in marker)



MARK = ".prstack-demo"


def prepare_keep(where: Path) -> Path:
    """The folder for `demo --keep`: new or empty (built there), or an earlier demo's (rebuilt); else refused."""
    import shutil

    from prstack.errors import InputError, Option

    if where.exists() and not where.is_dir():
        raise InputError(Option("keep"),
                         f" {where}: it is a file; give a new folder, an empty one or an earlier demo's.")
    if where.is_dir() and any(where.iterdir()):
        if not (where / MARK).is_file():
            raise InputError(Option("keep"), f" {where}: the folder holds other files; give a new folder, an empty one "
                             "or an earlier demo's.")
        for child in where.iterdir():
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    try:
        where.mkdir(parents=True, exist_ok=True)
        (where / MARK).write_text("built by prstack demo --keep; rebuilt by the next one\n")
    except OSError as exc:
        raise InputError(Option("keep"), f" {where}: {exc.strerror}; give a writable folder.") from None
    return where


def rerun_commands(where: Path) -> list[str]:
    """The commands that repeat the demo's audit by hand on what `--keep` left."""
    import shlex

    repo, site = shlex.quote(str(where / "upstream")), shlex.quote(str(where / "venv" / "site-packages"))
    return [f"prstack audit 40898 --git {repo} --site-packages {site}",
            f"prstack audit 40898 --git {repo} --wheel {shlex.quote(str(next((where / 'dist').glob('*.whl'))))}",
            f"prstack graph 40898 --git {repo}"]
