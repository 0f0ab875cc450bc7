"""The command line as a user meets it, run as a real process: help, version, PR forms, errors, demo --keep."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.ghserver import build_stack, serve_stack
from prstack.demo.example import DemoBuild

COMMANDS = ["audit", "graph", "hunks", "demo", "plan", "fetch", "cache", "cache info", "cache clear"]


def run(*args: str, env: dict[str, str] | None = None, from_bash: bool = False,
        **kw: object) -> subprocess.CompletedProcess[str]:
    """prstack run as a process; `from_bash`: with a bash as its parent, as when a user types it
    (typer finds the shell for completion from the process tree, which a detached test run lacks)."""
    full = {**os.environ, "NO_COLOR": "1", **(env or {})}
    command = [sys.executable, "-m", "prstack", *args]
    if from_bash:
        command = ["bash", "-c", '"$@"; exit $?', "bash", *command]
    return subprocess.run(command, capture_output=True, text=True, env=full,
                          **kw)  # type: ignore[call-overload, no-any-return]


def test_help_and_version_import_no_github_git_or_graph_library() -> None:
    probe = ("import sys\nfrom prstack.cli import main\nfor a in (['--help'], ['--version'], ['audit', '-h']):\n"
             "    main(a)\nprint(sorted(m for m in ('github', 'git', 'networkx', 'unidiff', 'requests') "
             "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.slow
def test_version_and_short_help() -> None:
    done = run("--version")
    assert done.returncode == 0 and done.stdout.startswith("prstack 0.")
    assert run("-h").stdout == run("--help").stdout


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.slow
def test_every_help_shows_examples_clean_metavars(command: str) -> None:
    done = run(*command.split(), "--help")
    assert done.returncode == 0, done.stderr
    assert "Examples:" in done.stdout and "$ prstack" in done.stdout
    assert "<bool>" not in done.stdout and "<list" not in done.stdout
    if command in ("audit", "graph", "hunks", "plan", "fetch", "demo"):
        assert "Exit codes: 0" in done.stdout


@pytest.mark.slow
def test_completion_is_offered() -> None:
    assert "--install-completion" in run("--help").stdout
    done = run("--show-completion", env={"SHELL": "/bin/bash"}, from_bash=True)
    assert done.returncode == 0 and "prstack" in done.stdout


@pytest.mark.parametrize("args", [[], ["cache"]])
@pytest.mark.slow
def test_bare_command_prints_help_and_succeeds(args: list[str]) -> None:
    done = run(*args)
    assert done.returncode == 0 and done.stdout.startswith("Usage: prstack") and done.stderr == ""


@pytest.mark.parametrize("args", [
    ["audit", "1", "--bogus"], ["audit"], ["graph", "1", "--format", "png"], ["audit", "x", "--installed"],
    ["audit", "1", "--python", "/etc/passwd"], ["audit", "1", "--python", ""], ["audit", "1", "--python", "/bin/true"],
    ["audit", "1", "--python", "/"], ["nosuch"],
])
@pytest.mark.slow
def test_bad_usage_is_one_line_and_exit_2(args: list[str]) -> None:
    done = run(*args)
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("prstack: error: ")


@pytest.mark.slow
def test_pr_as_hash_and_url(demo_build: DemoBuild) -> None:
    git = str(demo_build.repo.path)
    plain = run("hunks", "40898", "--git", git, "--format", "json")
    hashed = run("hunks", "#40898", "--git", git, "--format", "json")
    assert plain.returncode == hashed.returncode == 0, hashed.stderr
    assert json.loads(plain.stdout) == json.loads(hashed.stdout)
    clash = run("hunks", "https://github.com/a/b/pull/1", "--repo", "c/d", "--git", git)
    assert clash.returncode == 2 and "not of c/d" in clash.stderr


@pytest.mark.slow
def test_a_pr_url_also_names_the_repository(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "upstream")
    build_stack(repo)
    server = serve_stack(repo.path)
    try:
        env = {"PRSTACK_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "GITHUB_TOKEN": "",
               "GH_TOKEN": "", "PRSTACK_REPO": ""}
        by_url = run("hunks", "https://github.com/acme/widget/pull/2", "--api-url", server.base_url,
                     "--format", "json", env=env, cwd=tmp_path)
        by_repo = run("hunks", "2", "--repo", "acme/widget", "--api-url", server.base_url, "--format", "json",
                      env=env, cwd=tmp_path)
    finally:
        server.stop()
    assert by_url.returncode == by_repo.returncode == 0, by_url.stderr
    assert json.loads(by_url.stdout) == json.loads(by_repo.stdout)


@pytest.mark.slow
def test_an_internal_error_exits_2_with_one_line_and_traceback_on_request(tmp_path: Path) -> None:
    # a planted fault stands for a bug: it must not exit 1, the code of a finding
    (tmp_path / "sitecustomize.py").write_text(
        "import prstack.cli.support as s\n"
        "def boom(*a, **k):\n    raise ZeroDivisionError('planted')\n"
        "s.target_spec = s.target_specs = boom\n"
        "import prstack.cli.audit_commands as c\nc.target_spec = c.target_specs = boom\n")
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = run("audit", "1", "--installed", env=env)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "bug in prstack" in done.stderr and "PRSTACK_DEBUG=1" in done.stderr
    debug = run("audit", "1", "--installed", env={**env, "PRSTACK_DEBUG": "1"})
    assert debug.returncode == 2 and "Traceback" in debug.stderr and "ZeroDivisionError" in debug.stderr


@pytest.mark.slow
def test_demo_keep_reuses_its_folder_refuses_others_and_prints_commands(tmp_path: Path) -> None:
    keep = tmp_path / "kept"
    first = run("demo", "--keep", str(keep))
    assert first.returncode == 1, first.stderr
    assert "prstack audit 40898 --git" in first.stderr
    again = run("demo", "--keep", str(keep))
    assert again.returncode == 1, again.stderr
    line = next(x.strip() for x in again.stderr.splitlines() if "--site-packages" in x)
    rerun = run(*line.split()[1:])
    assert rerun.returncode == 1 and "missing" in rerun.stdout
    (tmp_path / "file").write_text("x")
    other = tmp_path / "other"
    other.mkdir()
    (other / "mine.txt").write_text("x")
    for target in (tmp_path / "file", other):
        done = run("demo", "--keep", str(target))
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "--keep" in done.stderr
    assert (other / "mine.txt").read_text() == "x"


@pytest.mark.slow
def test_output_never_fails_to_encode(demo_build: DemoBuild, tmp_path: Path) -> None:
    ascii_only = run("demo", env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"})
    assert ascii_only.returncode == 1 and "Traceback" not in ascii_only.stderr
    odd = tmp_path.joinpath(os.fsdecode(b"tree-\xff"))
    odd.mkdir()
    (odd / "kvserve").mkdir()
    done = run("audit", "40898", "--git", str(demo_build.repo.path), "--tree", str(odd), "--dist", "kvserve")
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    assert "tree-\\xff" in done.stdout  # the undecodable byte of the path, shown escaped


@pytest.mark.slow
def test_progress_on_a_terminal_only(demo_build: DemoBuild) -> None:
    args = ["audit", "40898", "--git", str(demo_build.repo.path), "--site-packages", str(demo_build.site_packages)]
    piped = run(*args)
    assert piped.returncode == 1 and piped.stderr == ""
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    proc = subprocess.Popen([sys.executable, "-m", "prstack", *args], stdout=subprocess.PIPE, stderr=follower,
                            env=env)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    proc.communicate()
    os.close(leader)
    assert proc.returncode == 1
    assert b"matching" in seen or b"reading the stack" in seen


@pytest.mark.parametrize("toml", ['[tool]\nprstack = "x"\n', "tool = 3\n", "[tool.prstack]\nrepo = 5\n", "[x\n"])
@pytest.mark.slow
def test_a_malformed_tool_prstack_section_is_no_crash(tmp_path: Path, toml: str) -> None:
    (tmp_path / "pyproject.toml").write_text(toml)
    done = run("hunks", "1", cwd=tmp_path, env={"PRSTACK_REPO": "", "GITHUB_TOKEN": "", "GH_TOKEN": ""})
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "bug in prstack" not in done.stderr and "--repo" in done.stderr


@pytest.mark.parametrize("args", [["hunks", "40898", "--base", "nosuchref"], ["plan", "40898", "--onto", "nosuch"]])
@pytest.mark.slow
def test_a_bad_ref_says_what_to_do(demo_build: DemoBuild, args: list[str]) -> None:
    done = run(*args, "--git", str(demo_build.repo.path))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "is not a commit or ref" in done.stderr and "fetch it" in done.stderr


@pytest.mark.slow
def test_library_warnings_and_log_lines_stay_off_stderr(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(
        "import logging, warnings\nimport prstack.cli.audit_commands as c\nreal = c.parse_prs\n"
        "def noisy(*a, **k):\n    warnings.warn('library noise', DeprecationWarning)\n"
        "    logging.getLogger('github.Requester').warning('Following Github server redirection')\n"
        "    return real(*a, **k)\nc.parse_prs = noisy\n")
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", "PYTHONWARNINGS": "always"}
    done = run("audit", "x", "--installed", env=env)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    shown = run("audit", "x", "--installed", env={**env, "PRSTACK_DEBUG": "1"})
    assert "redirection" in shown.stderr  # the check above could fail


def test_completion_installs_with_typers_option(tmp_path: Path) -> None:
    done = run("--install-completion", env={"HOME": str(tmp_path), "SHELL": "/bin/bash"}, from_bash=True)
    assert done.returncode == 0, done.stderr
    script = tmp_path / ".bash_completions" / "prstack.sh"
    assert "_PRSTACK_COMPLETE" in script.read_text() and str(script) in (tmp_path / ".bashrc").read_text()


@pytest.mark.slow
def test_usage_says_several_prs_are_taken() -> None:
    for command in ("audit", "graph", "hunks", "plan", "fetch"):
        done = run(command, "--help")
        assert "PR..." in done.stdout.splitlines()[0] + done.stdout.splitlines()[1], done.stdout[:200]


@pytest.mark.slow
def test_piped_output_honours_columns(demo_build: DemoBuild) -> None:
    """Piped, the report is as wide as COLUMNS says, else 80 columns (a CI log): its panels' borders
    span that width, whatever terminal the test runs from."""
    args = ("audit", "40898", "--git", str(demo_build.repo.path), "--site-packages", str(demo_build.site_packages))
    widths = {}
    for columns in ("100", "132", ""):
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | ({"COLUMNS": columns} if columns else {})
        done = subprocess.run([sys.executable, "-m", "prstack", *args], capture_output=True, text=True, env=env)
        assert done.returncode == 1, done.stderr
        widths[columns] = {len(line) for line in done.stdout.splitlines() if line.startswith(("╭", "╰"))}
    assert widths == {"100": {100}, "132": {132}, "": {80}}


def test_the_command_a_run_names_is_built_alone_as_it_is_among_all() -> None:
    """A run builds only the command (or group) its first word names: the same options, help and
    subcommands as in the whole command line; any other first word gets them all."""
    from prstack.cli.app import _command

    whole = _command()
    for name, command in whole.commands.items():
        alone = _command(name)
        assert list(alone.commands) == [name]
        built = alone.commands[name]
        assert [(p.name, p.opts, getattr(p, "help", None)) for p in built.params] == [
            (p.name, p.opts, getattr(p, "help", None)) for p in command.params]
        assert (built.help, built.epilog, sorted(getattr(built, "commands", {}))) == (
            command.help, command.epilog, sorted(getattr(command, "commands", {})))
    for other in ("--help", "--version", "audi", None):
        assert list(_command(other).commands) == list(whole.commands)
