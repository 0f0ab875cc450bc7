"""Golden cases as data: each folder of tests/cases/ holds a scenario (case.toml) and the expected
stdout, stderr and exit_code of one prstack command run on it; one parametrized test runs them all.

After a deliberate change of output, regenerate the expected files with
    PRSTACK_REGENERATE_CASES=1 pytest tests/test_cases.py
and review the diff of tests/cases/ before committing it (tests/cases/README.md describes the format).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, GitRepo
from helpers.targets import install_into, make_wheel
from prstack.cli import main
from prstack.demo.example import DemoBuild
from prstack.demo.fixture import export_tree
from prstack.models import HunkStatus

CASES = ROOT / "tests" / "cases"
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "case.toml").is_file())
REGENERATE = bool(os.environ.get("PRSTACK_REGENERATE_CASES"))
Files = dict[str, bytes]


def load(name: str) -> dict[str, Any]:
    with (CASES / name / "case.toml").open("rb") as f:
        return tomllib.load(f)


def edited(files: Files, step: dict[str, Any]) -> Files:
    """`files` after a step's `files` (written), `delete` and `replace` ([path, old, new]: once, must occur)."""
    out = dict(files)
    out.update({rel: text.encode() for rel, text in step.get("files", {}).items()})
    for rel in step.get("delete", []):
        del out[rel]
    for rel, old, new in step.get("replace", []):
        text = out[rel].decode()
        assert old in text, f"replace: {old!r} is not in {rel}"
        out[rel] = text.replace(old, new, 1).encode()
    return out


def tracked(repo: GitRepo) -> Files:
    names = repo.git("ls-files", "-z").split("\0")
    return {n: (repo.path / n).read_bytes() for n in names if n}


def build_repo(repo: GitRepo, commits: list[dict[str, Any]]) -> None:
    """Each commit on its branch (a new branch starts at `from`, default main), in the order given."""
    branches, current = {"main"}, "main"
    for step in commits:
        branch = step.get("branch", "main")
        if branch not in branches:
            repo.branch(branch, step.get("from", "main"))
            branches.add(branch)
        elif branch != current:
            repo.git("checkout", "--quiet", branch)
        current = branch
        if "merge" in step:
            repo.git("-c", "commit.gpgsign=false", "merge", "--quiet", "--no-ff", "-m", step["message"], step["merge"])
        else:
            before = tracked(repo)
            after = edited(before, step)
            repo.write({rel: None for rel in before if rel not in after})
            repo.write({rel: data for rel, data in after.items() if before.get(rel) != data})
            if "patch" in step:
                done = subprocess.run(["git", "-C", str(repo.path), "apply", "-"], input=step["patch"].encode(),
                                      capture_output=True)
                assert done.returncode == 0, done.stderr.decode()
            repo.commit(step["message"], {})
        if "pr" in step:
            repo.pr_ref(step["pr"])
    repo.git("checkout", "--quiet", "main")


def files_at(repo: GitRepo, rev: str) -> Files:
    names = repo.git("ls-tree", "-r", "-z", "--name-only", rev).split("\0")
    return {n: subprocess.run(["git", "-C", str(repo.path), "show", f"{rev}:{n}"], capture_output=True,
                              check=True).stdout for n in names if n}


def build_target(root: Path, repo: GitRepo | None, spec: dict[str, Any]) -> None:
    """A tree, a wheel or a site-packages from the files at `rev` (under `prefix`, which is cut), edited."""
    files: Files = files_at(repo, spec["rev"]) if repo is not None and "rev" in spec else {}
    prefix = spec.get("prefix", "")
    files = edited({n.removeprefix(prefix): d for n, d in files.items() if n.startswith(prefix)}, spec)
    kind = spec["kind"]
    if kind == "tree":
        for rel, data in files.items():
            (root / spec.get("path", "tree") / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / spec.get("path", "tree") / rel).write_bytes(data)
        return
    assert kind in ("wheel", "site-packages"), kind
    wheel = make_wheel(root / "dist", spec["name"], spec.get("version", "1.0"), files)
    if kind == "site-packages":
        install_into(wheel, root / spec.get("path", "site-packages"))


def build_scenario(root: Path, case: dict[str, Any], demo: Callable[[], DemoBuild]) -> dict[str, str]:
    """Build the scenario in `root`; returns the command's placeholders (temporary paths) and their names."""
    places: dict[str, str] = {}
    if case.get("demo"):
        built = demo()
        head = export_tree(built.repo.path, built.repo.heads[40898], root / "demo-head-tree")
        places = {"demo_repo": str(built.repo.path), "demo_site_packages": str(built.site_packages),
                  "demo_wheel": str(built.wheel), "demo_head_tree": str(head)}
    repo = None
    if case.get("commit"):
        repo = GitRepo(root / "repo")
        build_repo(repo, case["commit"])
    for spec in case.get("target", []):
        build_target(root, repo, spec)
    for rel in case.get("plain_dirs", []):
        (root / rel).mkdir(parents=True, exist_ok=True)
    return places


@pytest.fixture(scope="session")
def scenarios(tmp_path_factory: pytest.TempPathFactory,
              request: pytest.FixtureRequest) -> Iterator[Callable[[str], tuple[Path, dict[str, str]]]]:
    """Scenarios built once a session (cases that `use` another share its build), the demo only when asked."""
    built: dict[str, tuple[Path, dict[str, str]]] = {}

    def scenario(name: str) -> tuple[Path, dict[str, str]]:
        if name not in built:
            root = tmp_path_factory.mktemp(name)
            places = build_scenario(root, load(name), lambda: request.getfixturevalue("demo_build"))
            built[name] = (root, places)
        return built[name]

    yield scenario


def normalise(text: str, root: Path, places: dict[str, str]) -> str:
    """Temporary paths out (longest first); everything else (shas included: commit dates are fixed) stays."""
    names = {str(root.resolve()): "<case>", str(root): "<case>"}
    names |= {path: f"<{key}>" for key, path in places.items()}
    names |= {str(Path(path).resolve()): f"<{key}>" for key, path in places.items()}
    for path in sorted(names, key=len, reverse=True):
        text = text.replace(path, names[path])
    return text


def hunk_statuses(stdout: str) -> list[str]:
    data = json.loads(stdout)
    assert data["schema"] == "prstack.audit/2"
    return [h["status"] for h in data["hunks"]]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.slow
def test_case(name: str, scenarios: Callable[[str], tuple[Path, dict[str, str]]],
              monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    case = load(name)
    root, places = scenarios(case.get("uses", name))
    monkeypatch.chdir(root)
    monkeypatch.setenv("PRSTACK_CACHE_DIR", str(root / "cache"))
    argv = [arg.format(case=root, **places) for arg in shlex.split(case["command"])]
    code = main(argv)
    out, err = capsys.readouterr()
    got = {"stdout": normalise(out, root, places), "stderr": normalise(err, root, places), "exit_code": f"{code}\n"}
    folder = CASES / name
    if REGENERATE:
        for file, text in got.items():
            (folder / file).write_text(text)
    missing = [file for file in got if not (folder / file).is_file()]
    assert not missing, f"{name}: no expected {missing}; run PRSTACK_REGENERATE_CASES=1 pytest tests/test_cases.py"
    assert got == {file: (folder / file).read_text() for file in got}
    if code == 2:  # bad input: one line on stderr, nothing on stdout
        assert out == "" and len(err.splitlines()) == 1 and err.startswith("prstack: error: "), err
    want = case.get("statuses")
    if want is not None and "json" in argv:
        assert hunk_statuses(out) == want
    elif want is not None:
        for status in want:
            assert status in out, status


def test_every_hunk_status_has_a_case() -> None:
    declared = {status for name in NAMES for status in load(name).get("statuses", [])}
    assert declared == {s.value for s in HunkStatus}
    in_json = {status for name in NAMES if "json" in load(name)["command"] and load(name).get("statuses")
               for status in hunk_statuses((CASES / name / "stdout").read_text())}
    assert in_json == {s.value for s in HunkStatus}  # each in an expected JSON output, not only declared
