"""Editable installs (PEP 660 finders, .pth path entries, legacy .egg-link): the source they point at.

Everything here reads files as text; nothing is imported or executed.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path, PurePosixPath

from prstack.models import EditableSource
from prstack.targets.confined import text_confined

_FINDER = re.compile(r"^__editable___.*_finder\.py$")
_EDITABLES_MAP = re.compile(r"""map_module\(\s*(['"])([\w.]+)\1\s*,\s*(['"])(.+?)\3\s*\)""")
_SKIP_DIRS = frozenset({"__pycache__", ".git", ".hg", ".tox", ".nox", ".venv", "node_modules", "build", "dist"})


def _finder_mapping(text: str) -> dict[str, str]:
    """MAPPING = {...} of a setuptools PEP 660 finder, read with ast (never executed)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        )
        value = node.value if isinstance(node, ast.AnnAssign | ast.Assign) else None
        if isinstance(target, ast.Name) and target.id == "MAPPING" and value is not None:
            try:
                mapping = ast.literal_eval(value)
            except ValueError:
                return {}
            if isinstance(mapping, dict):
                return {str(k): str(v) for k, v in mapping.items() if isinstance(v, str)}
    return {}


def _pth_paths(text: str, site: Path) -> list[str]:
    """Directory lines of a .pth file (import lines are code, not paths: skipped)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "import ", "import\t")):
            continue
        path = Path(line) if os.path.isabs(line) else site / line
        if path.is_dir():
            out.append(str(path.resolve()))
    return out


def _read(path: Path) -> str | None:
    """A small metadata file's text, confined to its folder (a symlink out, a FIFO or a huge file: None)."""
    return text_confined(str(path.parent), path.name, _SMALL)


_SMALL = 1 << 20
_REF = re.compile(r"refs/(?:[\w.+@-]+/)*[\w.+@-]+")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def find_editable(site: Path, recorded: Iterable[str]) -> EditableSource | None:
    """The editable source of a distribution, from the finder or .pth files its RECORD lists."""
    top_files = _top_level(frozenset(recorded))
    for name in top_files:
        if _FINDER.match(name) and (text := _read(site / name)) is not None:
            mapping = _finder_mapping(text)
            if mapping:
                roots = tuple((k.replace(".", "/"), str(Path(v))) for k, v in sorted(mapping.items()))
                return EditableSource("pep660-finder", name, _as_package_roots(roots))
    for name in top_files:
        if name.endswith(".py") and (text := _read(site / name)) is not None and "map_module" in text:
            found = _EDITABLES_MAP.findall(text)
            if found:
                roots = tuple((mod.replace(".", "/"), path) for _, mod, _, path in found)
                return EditableSource("editables", name, _as_package_roots(roots))
    for name in top_files:
        if name.endswith(".pth") and (text := _read(site / name)) is not None:
            paths = _pth_paths(text, site)
            if paths:
                return EditableSource("pth", name, tuple(("", p) for p in paths))
    return None


@lru_cache(maxsize=4096)
def _top_level(recorded: frozenset[str]) -> tuple[str, ...]:
    """The files at the top of the site directory among `recorded`, in order (the paths of a RECORD
    parsed before, the same distribution in another target of the run, are looked through once)."""
    return tuple(sorted(p for p in recorded if "/" not in p))


def _as_package_roots(roots: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """A module mapped to its __init__.py (editables) or to a .py file maps its folder or file."""
    out = []
    for prefix, target in roots:
        path = Path(target)
        if path.name == "__init__.py":
            out.append((prefix, str(path.parent)))
        elif path.suffix == ".py":
            out.append((prefix.rpartition("/")[0], str(path.parent) + "/" + path.name))
        else:
            out.append((prefix, str(path)))
    return tuple(out)


def find_egg_links(site: Path) -> dict[str, EditableSource]:
    """Legacy `setup.py develop` installs: <name>.egg-link in `site`, keyed by the link's name."""
    found = {}
    for link in sorted(site.glob("*.egg-link")):
        text = _read(link)
        lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
        if lines and Path(lines[0]).is_dir():
            found[link.stem] = EditableSource("egg-link", link.name, (("", str(Path(lines[0]).resolve())),))
    return found


def source_files(source: EditableSource, top_level: Sequence[str]) -> dict[str, Path]:
    """installed path -> the source file an editable install runs; path entries keep to the
    distribution's top-level packages when they are known."""
    files: dict[str, Path] = {}
    for prefix, directory in source.roots:
        root = Path(directory)
        if root.is_file():
            files[f"{prefix}/{root.name}".lstrip("/")] = root
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            rel = Path(dirpath).relative_to(root)
            if prefix == "" and rel == Path("."):
                wanted = set(top_level)
                dirnames[:] = [d for d in dirnames if not wanted or d in wanted]
                filenames = [f for f in filenames if f.endswith((".py", ".so", ".pyd"))
                             and (not wanted or f.split(".", 1)[0] in wanted)]
            dirnames[:] = sorted(
                d for d in dirnames if d not in _SKIP_DIRS and not d.endswith((".egg-info", ".dist-info"))
            )
            for name in filenames:
                if name.endswith((".pyc", ".pyo")):
                    continue
                installed = PurePosixPath(prefix, rel.as_posix(), name).as_posix()
                files[installed.removeprefix("./")] = Path(dirpath) / name
    return files


def _git_dirs(root: Path) -> tuple[Path, Path] | None:
    """(git folder, common git folder) of a checkout: the same folder for a plain or bare clone;
    a worktree's or submodule's own folder and the one its `commondir` names."""
    git = root / ".git"
    if not git.exists() and (root / "HEAD").is_file() and (root / "refs").is_dir():
        return root, root  # a bare clone
    if git.is_file():  # a worktree or submodule: "gitdir: <path>"
        text = (_read(git) or "").strip()
        if not text.startswith("gitdir: "):
            return None
        git = (root / text.removeprefix("gitdir: ")).resolve()
    elif not git.is_dir():
        return None
    common = git / "commondir"
    return git, ((git / (_read(common) or "").strip()).resolve() if common.is_file() else git)


def _ref_commit(common: Path, ref: str) -> str | None:
    """The commit a ref names, from its loose file or packed-refs (a ref leaving the folder names none)."""
    if not _REF.fullmatch(ref) or ".." in ref.split("/"):  # `ref: /etc/hostname`, `refs/heads/../../x`
        return None
    loose = (text_confined(str(common), ref, _SMALL) or "").strip()
    if loose:
        return loose if _SHA.fullmatch(loose) else None
    for line in (text_confined(str(common), "packed-refs") or "").splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and _SHA.fullmatch(sha):
            return sha
    return None


def git_head(root: Path) -> str | None:
    """The commit a checkout's .git/HEAD points at, read from files (git is not run)."""
    try:
        dirs = _git_dirs(root)
        if dirs is None:
            return None
        head = (_read(dirs[0] / "HEAD") or "").strip()
        if not head.startswith("ref: "):
            return head if _SHA.fullmatch(head) else None
        return _ref_commit(dirs[1], head.removeprefix("ref: ").strip())
    except (OSError, ValueError):
        return None


def pr_ref_heads(root: Path, numbers: Iterable[int]) -> dict[int, str]:
    """PR number -> head commit, for the PRs among `numbers` whose refs a checkout holds
    (refs/pull/N/head, or refs/remotes/R/pr/N of its remotes), read from files (git is not run)."""
    try:
        dirs = _git_dirs(root)
        if dirs is None:
            return {}
        common = dirs[1]
        remotes = sorted(git_remote_urls(root))
        found = {}
        for number in numbers:
            refs = [f"refs/pull/{number}/head", *(f"refs/remotes/{r}/{tail}" for r in remotes
                                                  for tail in (f"pr/{number}", f"pull/{number}/head"))]
            if head := next((c for ref in refs if (c := _ref_commit(common, ref))), None):
                found[number] = head
        return found
    except (OSError, ValueError):
        return {}


def git_remote_urls(root: Path) -> dict[str, str]:
    """Remote name -> URL of a checkout's remotes, read from its git config (git is not run)."""
    try:
        dirs = _git_dirs(root)
        config = (text_confined(str(dirs[1]), "config", _SMALL) or "") if dirs else ""
    except (OSError, ValueError):
        return {}
    urls: dict[str, str] = {}
    remote = None
    for line in config.splitlines():
        line = line.strip()
        if line.startswith("["):
            m = _REMOTE.fullmatch(line)
            remote = m.group(1) if m else None
        elif remote is not None and (m := _URL_LINE.fullmatch(line)):
            urls.setdefault(remote, m.group(1).strip().strip('"'))
    return urls


_REMOTE = re.compile(r'\[remote\s+"([^"]+)"\]')
_URL_LINE = re.compile(r"url\s*=\s*(.+)", re.I)


def enclosing_checkout(directory: Path, depth: int = 6) -> tuple[Path, str] | None:
    """The git checkout holding `directory` (it or a parent up to `depth` levels) and its HEAD."""
    here = directory.resolve()
    for folder in [here, *here.parents][:depth]:
        if (folder / ".git").exists():
            commit = git_head(folder)
            return (folder, commit) if commit else None
    return None
