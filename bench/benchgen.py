"""Builds the matcher bench's case: a git repo with refs/pull/N/head and an installed tree whose
every hunk carries a mutation with its true status known by construction."""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from prstack.diff.hunks import parse_diff
from prstack.models import FileChange, Hunk, HunkStatus

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent",
}
UNIT = 16
"""Lines per generated class; edits touch units at least two apart so hunks never merge."""
EDITS = ("repl", "repeat", "quote", "call", "add", "del", "multi")
HunkKey = tuple[int, str, int, int]


def key(h: Hunk) -> HunkKey:
    return (h.pr, h.path, h.old_start, h.new_start)


@dataclass(frozen=True)
class Truth:
    status: HunkStatus
    mutation: str


@dataclass
class Case:
    repo: Path
    tree: Path
    numbers: list[int]
    base_sha: str
    starts: dict[int, str]
    """Each PR's own-change start (parent PR head or main)."""
    heads: dict[int, str]
    diffs: dict[int, bytes]
    hunks: list[Hunk]
    truth: dict[HunkKey, Truth]
    lines_total: int
    modules: int
    big_file: str | None = None
    stats: dict[str, int] = field(default_factory=dict)


def git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True,
                          env=env, check=False)
    if done.returncode:
        raise RuntimeError(f"git {args[:2]}: {done.stderr.decode(errors='replace')}")
    return done.stdout


def unit(rng: random.Random, m: int, k: int) -> list[str]:
    return [
        f"class Layer{m}_{k}(nn.Module):",
        f'    """Layer {k} of module {m}."""',
        "",
        "    def __init__(self, layer_id, config):",
        "        super().__init__()",
        "        self.layer_id = layer_id",
        f"        self.hidden = config.hidden_size_{rng.randrange(64)}",
        f"        self.name = 'layer_{m}_{k}'",
        f"        self.scale = {rng.random():.4f}",
        "",
        "    def forward(self, x):",
        "        y = self.proj(x, self.hidden)",
        "        if self.training:",
        f"            y = dropout(y, {rng.random():.2f})",
        "        return y * self.scale",
        "",
    ]


HEADER = 6


def module(rng: random.Random, m: int, units: int, latin1: bool) -> list[str]:
    comment = "# auteur: Ren\udce9 M\udcfcller" if latin1 else f"# module {m}"
    return [f'"""Generated module {m}."""', comment, "import torch.nn as nn", "",
            f"CONST_{m} = {m}", "", *[line for k in range(units) for line in unit(rng, m, k)]]


def edit_unit(rng: random.Random, lines: list[str], at: int, kind: str, tag: str) -> None:
    """Apply edit `kind` to the unit starting at line `at` (in place; line count may change)."""
    u = lines[at : at + UNIT]
    if kind == "repl":
        u[6] = u[6] + f" * {rng.randrange(2, 9)}"
    elif kind == "repeat":
        u[5] = "        self.layer_id = layer_id + 1"
    elif kind == "quote":
        u[7] = u[7].replace("'layer_", f"'block{tag}_")
    elif kind == "call":
        u[11] = f"        y = self.proj(x, self.hidden, bias=self.bias_{tag})"
    elif kind == "add":
        u[9:9] = [
            f"        self.gate_{tag} = Gate(config.gate_dim_{rng.randrange(99)}, layer_id)",
            f"        self.norm_{tag} = RMSNorm(self.hidden, eps={rng.random():.6f})",
            f"        self.register_buffer('mask_{tag}', make_mask({rng.randrange(999)}))",
        ]
    elif kind == "del":
        del u[12:14]
    elif kind == "multi":
        u[6] = u[6] + f" + {rng.randrange(2, 9)}"
        u[8] = f"        self.scale = {rng.random():.4f} * config.scale_{tag}"
    lines[at : at + UNIT] = u


def fast_import(repo: Path, commits: list[tuple[str, str | None, dict[str, bytes | None]]]) -> None:
    """Write commits (ref, parent ref or None, {path: bytes or None=delete}) via git fast-import."""
    out: list[bytes] = []
    for mark, (ref, parent, files) in enumerate(commits, start=1):
        out.append(f"commit {ref}\nmark :{mark}\n".encode())
        out.append(b"committer bench <bench@example.invalid> 1767225600 +0000\n")
        msg = f"{ref}\n".encode()
        out.append(b"data %d\n%s" % (len(msg), msg))
        if parent is not None:
            out.append(f"from {parent}\n".encode())
        for path, data in sorted(files.items()):
            if data is None:
                out.append(f"D {path}\n".encode())
            else:
                out.append(f"M 100644 inline {path}\n".encode())
                out.append(b"data %d\n%s\n" % (len(data), data))
    git(repo, "fast-import", "--quiet", data=b"".join(out))


def encode(lines: list[str], crlf: bool = False) -> bytes:
    eol = "\r\n" if crlf else "\n"
    return "".join(line + eol for line in lines).encode("utf-8", "surrogateescape")


def build(root: Path, *, modules: int, units: int, prs: int, files_per_pr: int,
          edits_per_file: int, big_mb: int, seed: int = 7) -> Case:
    rng = random.Random(seed)
    repo, tree = root / "repo", root / "tree"
    repo.mkdir(parents=True)
    git(repo, "init", "--quiet", "--initial-branch=main")
    base: dict[str, list[str]] = {}
    for m in range(modules):
        base[f"pkg/mod_{m:04d}.py"] = module(rng, m, units, latin1=(m % 97 == 5))
    base["pkg/__init__.py"] = ['"""Bench package."""']
    big = None
    if big_mb:
        big = "pkg/_tables.py"
        rows = big_mb * 1_000_000 // 40
        base[big] = ["TABLE = {"] + [f"    {i}: ('{i:x}', {i * 7 % 1000}),  # r" for i in range(rows)] \
            + ["}"]
    commits: list[tuple[str, str | None, dict[str, bytes | None]]] = [
        ("refs/heads/main", None, {p: encode(v) for p, v in base.items()})]
    # PR heads: files disjoint across PRs; every fifth PR stacks on the one before it.
    pool = [p for p in sorted(base) if p.startswith("pkg/mod_")]
    rng.shuffle(pool)
    donors = pool[: max(20, modules // 20)]
    pool = pool[len(donors):]
    numbers = [1000 + i for i in range(prs)]
    parent_of: dict[int, int | None] = {}
    heads_text: dict[str, list[str]] = {}
    edits_of: dict[str, list[str]] = {}
    added_files: dict[str, list[str]] = {}
    deleted_files: set[str] = set()
    for i, n in enumerate(numbers):
        parent_of[n] = numbers[i - 1] if i % 5 == 4 else None
        files: dict[str, bytes | None] = {}
        for _ in range(files_per_pr):
            path = pool.pop()
            lines = list(base[path])
            slots = list(range(0, units, 2))
            rng.shuffle(slots)
            chosen = sorted(slots[:edits_per_file], reverse=True)
            kinds = []
            for s in chosen:
                kind = rng.choice(EDITS)
                kinds.append(kind)
                edit_unit(rng, lines, HEADER + s * UNIT, kind, f"{n}_{s}")
            heads_text[path] = lines
            edits_of[path] = kinds
            files[path] = encode(lines)
        if i % 7 == 3:
            path = f"pkg/new_{n}.py"
            added_files[path] = module(rng, 90000 + n, 2, latin1=False)
            files[path] = encode(added_files[path])
        if i % 11 == 6:
            path = pool.pop()
            deleted_files.add(path)
            files[path] = None
        if i == 0 and big is not None:
            lines = list(base[big])
            for at in (len(lines) // 3, 2 * len(lines) // 3):
                lines[at] = lines[at].replace("# r", "# revised")
            heads_text[big] = lines
            files[big] = encode(lines)
        parent = parent_of[n]
        commits.append((f"refs/pull/{n}/head",
                        "refs/heads/main" if parent is None else f"refs/pull/{parent}/head", files))
    base_sha, starts, heads, diffs, hunks = import_stack(repo, commits, numbers, parent_of)
    case = Case(repo, tree, numbers, base_sha, starts, heads, diffs, hunks, {},
                sum(len(v) for v in base.values()), modules, big)
    target = {p: list(v) for p, v in base.items()}
    crlf: set[str] = set()
    _mutate(rng, case, base, heads_text, added_files, deleted_files, donors, target, crlf)
    tree.mkdir(parents=True)
    for path, lines in target.items():
        dest = tree / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(encode(lines, crlf=path in crlf))
    return case


def _mutate(rng: random.Random, case: Case, base: dict[str, list[str]],
            heads_text: dict[str, list[str]], added: dict[str, list[str]], deleted: set[str],
            donors: list[str], target: dict[str, list[str]], crlf: set[str]) -> None:
    truth = case.truth
    by_file: dict[str, list[Hunk]] = {}
    for h in case.hunks:
        by_file.setdefault(h.path, []).append(h)
    donor_i = 0
    for path, hs in by_file.items():
        if path in deleted:
            for h in hs:
                if rng.random() < 0.5:
                    truth[key(h)] = Truth(HunkStatus.APPLIED, "deleted-file-gone")
                    target.pop(path, None)
                else:
                    truth[key(h)] = Truth(HunkStatus.MISSING, "deleted-file-kept")
            continue
        if path in added:
            if rng.random() < 0.5:
                target[path] = list(added[path])
                for h in hs:
                    truth[key(h)] = Truth(HunkStatus.APPLIED, "new-file")
            else:
                for h in hs:
                    truth[key(h)] = Truth(HunkStatus.FILE_MISSING, "new-file-absent")
            continue
        lines = list(heads_text[path])
        roll = rng.random()
        if path != case.big_file and roll < 0.04:
            target.pop(path, None)
            for h in hs:
                truth[key(h)] = Truth(HunkStatus.FILE_MISSING, "file-missing")
            continue
        if path != case.big_file and roll > 0.97:
            # the module moved (renamed) in the target: hunks that add lines are found there;
            # a pure deletion leaves no block to find anywhere, so its file is simply missing
            target.pop(path, None)
            target[path.replace("/mod_", "/moved_")] = list(heads_text[path])
            for h in hs:
                moved = h.added and h.change is FileChange.MODIFIED
                truth[key(h)] = Truth(HunkStatus.RELOCATED if moved else HunkStatus.FILE_MISSING,
                                      "moved-file" if moved else "moved-file-deletion")
            continue
        file_crlf = path != case.big_file and roll < 0.10
        if file_crlf:
            crlf.add(path)
        regions = [(h.new_start - 1, h.new_start - 1 + h.new_lines) for h in hs]
        for h in sorted(hs, key=lambda h: -h.new_start):
            options = _options(h, file_crlf or path == case.big_file)
            name = rng.choices([o[0] for o in options], [o[1] for o in options])[0]
            status, fn = MUTATIONS[name]
            extra = fn(rng, lines, h, regions)
            if name == "relocated":
                donor = donors[donor_i % len(donors)]
                donor_i += 1
                target[donor] = [*target[donor], "", *h.added]
            if extra is False:  # not applicable after all: leave applied
                name, status = "applied", HunkStatus.APPLIED
            truth[key(h)] = Truth(status, name + ("+crlf" if file_crlf else ""))
        target[path] = lines


Mutator = Callable[[random.Random, list[str], Hunk, list[tuple[int, int]]], bool | None]


def _options(h: Hunk, simple: bool) -> list[tuple[str, float]]:
    if h.change is not FileChange.MODIFIED:
        return [("applied", 1)]
    if simple:
        return [("applied", 1), ("missing", 1)]
    added = h.added
    opts = [("applied", 3.0), ("missing", 2.0), ("offset", 1.2), ("whitespace", 1.0),
            ("diverged", 1.6), ("conflict", 1.4), ("fuzz", 0.8), ("offset+whitespace", 0.6),
            ("missing+offset", 0.6)]
    if any("'" in t for t in h.new_image):
        opts.append(("quotes", 1.0))
    if any("bias=" in t for t in added):
        opts.append(("rewrapped", 2.0))
    if len(added) >= 3 and "gate" in added[0]:
        opts += [("relocated", 4.0), ("partial", 2.0)]
    if sum(1 for x in h.lines if x.kind == "+") == 2 and "config.scale_" in "".join(added):
        opts.append(("partial", 4.0))
    if any("layer_id + 1" in t for t in added):
        opts.append(("repeat-decoy", 3.0))
    return opts


def _span(h: Hunk) -> tuple[int, int]:
    return h.new_start - 1, h.new_start - 1 + h.new_lines


def m_applied(rng: random.Random, lines: list[str], h: Hunk, regions: list[tuple[int, int]]) -> None:
    return None


def m_missing(rng: random.Random, lines: list[str], h: Hunk, regions: list[tuple[int, int]]) -> None:
    s, e = _span(h)
    lines[s:e] = list(h.old_image)


def m_offset(rng: random.Random, lines: list[str], h: Hunk, regions: list[tuple[int, int]]) -> None:
    s, _ = _span(h)
    k = rng.randrange(1, 40)
    lines[s:s] = [f"UNRELATED_{h.pr}_{s}_{i} = {i}" for i in range(k)]


def m_whitespace(rng: random.Random, lines: list[str], h: Hunk,
                 regions: list[tuple[int, int]]) -> None:
    s, e = _span(h)
    for i in range(s, e):
        if rng.random() < 0.5:
            lines[i] = lines[i] + "  "
        else:
            lines[i] = lines[i].replace("        ", "\t\t", 1)


def m_quotes(rng: random.Random, lines: list[str], h: Hunk, regions: list[tuple[int, int]]) -> None:
    s, e = _span(h)
    for i in range(s, e):
        lines[i] = lines[i].replace("'", '"')


def m_rewrapped(rng: random.Random, lines: list[str], h: Hunk,
                regions: list[tuple[int, int]]) -> None:
    s, e = _span(h)
    for i in range(s, e):
        if "bias=" in lines[i]:
            lines[i : i + 1] = ["        y = self.proj(", "            x,", "            self.hidden,",
                                "            bias=" + lines[i].split("bias=")[1][:-1] + ",",
                                "        )"]
            return


def m_fuzz(rng: random.Random, lines: list[str], h: Hunk, regions: list[tuple[int, int]]) -> None:
    """An unrelated edit to the hunk's first context line (patch needs fuzz 1)."""
    s, _ = _span(h)
    lines[s] = lines[s] + "  # touched later" if lines[s].strip() else "# touched later"


def m_offset_ws(rng: random.Random, lines: list[str], h: Hunk,
                regions: list[tuple[int, int]]) -> None:
    m_whitespace(rng, lines, h, regions)
    m_offset(rng, lines, h, regions)


def m_missing_offset(rng: random.Random, lines: list[str], h: Hunk,
                     regions: list[tuple[int, int]]) -> None:
    m_missing(rng, lines, h, regions)
    m_offset(rng, lines, h, regions)


def _changed_segment(h: Hunk) -> tuple[int, int]:
    """[first, last+1) of the changed lines, in new-image coordinates relative to the hunk."""
    pos, first, last = 0, None, 0
    for line in h.lines:
        if line.kind == "-":
            first = pos if first is None else first
            last = max(last, pos)
            continue
        if line.kind == "+":
            first = pos if first is None else first
            last = pos + 1
        pos += 1
    return (first or 0), max(last, first or 0)


def m_diverged(rng: random.Random, lines: list[str], h: Hunk,
               regions: list[tuple[int, int]]) -> None:
    s, _ = _span(h)
    a, b = _changed_segment(h)
    lines[s + a : s + b] = [f"        self.rewritten_{h.pr}_{s} = legacy_{rng.randrange(10**6)}()"]


def m_conflict(rng: random.Random, lines: list[str], h: Hunk,
               regions: list[tuple[int, int]]) -> None:
    s, _ = _span(h)
    a, b = _changed_segment(h)
    ours = [x.text for x in h.lines if x.kind == "-"]
    theirs = lines[s + a : s + b]
    lines[s + a : s + b] = ["<<<<<<< HEAD", *ours, "=======", *theirs, f">>>>>>> pr-{h.pr}"]


def m_relocated(rng: random.Random, lines: list[str], h: Hunk,
                regions: list[tuple[int, int]]) -> None:
    m_missing(rng, lines, h, regions)


def m_partial(rng: random.Random, lines: list[str], h: Hunk,
              regions: list[tuple[int, int]]) -> None:
    """Revert the last changed line group's additions (and restore its removed lines)."""
    s, e = _span(h)
    out: list[str] = []
    groups: list[int] = []
    prev = " "
    for line in h.lines:
        if line.kind != " " and prev == " ":
            groups.append(len(groups))
        prev = line.kind
    keep_group = 0 if len(groups) > 1 else None
    g, prev, added_seen = -1, " ", 0
    for line in h.lines:
        if line.kind != " " and prev == " ":
            g += 1
        prev = line.kind
        if line.kind == " ":
            out.append(line.text)
        elif keep_group is not None:
            if (line.kind == "+") == (g == keep_group):
                out.append(line.text)
        elif line.kind == "+":
            added_seen += 1
            if added_seen == 1:
                out.append(line.text)
        else:
            out.append(line.text)
    lines[s:e] = out


def m_decoy(rng: random.Random, lines: list[str], h: Hunk,
            regions: list[tuple[int, int]]) -> bool | None:
    """Missing, while another copy of the changed line elsewhere in the file holds the change."""
    old = next(x.text for x in h.lines if x.kind == "-")
    new = next(x.text for x in h.lines if x.kind == "+")
    s, e = _span(h)
    spots = [i for i, t in enumerate(lines[: max(0, s - 8)]) if t == old
             and not any(a - 8 <= i < b + 8 for a, b in regions) and s - i < 200]
    if not spots:
        return False
    spot = min(spots, key=lambda i: abs(i - s))
    lines[spot] = new
    lines[s:e] = list(h.old_image)
    return None


MUTATIONS: dict[str, tuple[HunkStatus, Mutator]] = {
    "applied": (HunkStatus.APPLIED, m_applied),
    "missing": (HunkStatus.MISSING, m_missing),
    "offset": (HunkStatus.APPLIED, m_offset),
    "whitespace": (HunkStatus.APPLIED, m_whitespace),
    "quotes": (HunkStatus.APPLIED, m_quotes),
    "rewrapped": (HunkStatus.APPLIED, m_rewrapped),
    "diverged": (HunkStatus.DIVERGED, m_diverged),
    "conflict": (HunkStatus.CONFLICT, m_conflict),
    "relocated": (HunkStatus.RELOCATED, m_relocated),
    "partial": (HunkStatus.PARTIAL, m_partial),
    "repeat-decoy": (HunkStatus.MISSING, m_decoy),
    "fuzz": (HunkStatus.APPLIED, m_fuzz),
    "offset+whitespace": (HunkStatus.APPLIED, m_offset_ws),
    "missing+offset": (HunkStatus.MISSING, m_missing_offset),
}


def import_stack(repo: Path, commits: list[tuple[str, str, dict[str, bytes]]], numbers: list[int],
                 parent_of: dict[int, int | None]
                 ) -> tuple[str, dict[int, str], dict[int, str], dict[int, bytes], list[Hunk]]:
    """The PR commits written into `repo` (one fast-import), then each PR's base, head, diff
    (as git shows it from its parent's head, or main) and hunks: (main, starts, heads, diffs, hunks)."""
    fast_import(repo, commits)
    base_sha = git(repo, "rev-parse", "refs/heads/main").decode().strip()
    heads = {n: git(repo, "rev-parse", f"refs/pull/{n}/head").decode().strip() for n in numbers}
    starts = {n: base_sha if (parent := parent_of[n]) is None else heads[parent] for n in numbers}
    diffs: dict[int, bytes] = {}
    hunks: list[Hunk] = []
    for n in numbers:
        diffs[n] = git(repo, "-c", "core.quotepath=off", "diff", "--no-color", "--no-ext-diff",
                       "-M", "--full-index", "--src-prefix=a/", "--dst-prefix=b/",
                       starts[n], heads[n], "--")
        hunks += parse_diff(diffs[n], n)
    return base_sha, starts, heads, diffs, hunks
