"""Builds the matcher bench's boilerplate case: a package whose modules share the same logging,
metrics and bookkeeping blocks, PRs that add such blocks (or one block to several modules), and
an installed tree where hunks are dropped or rewritten while their block exists elsewhere."""

from __future__ import annotations

import random
from pathlib import Path

from benchgen import Case, Truth, encode, git, import_stack, key, m_diverged, m_missing

from prstack.models import Hunk, HunkStatus

BOILER = [
    ["        log.debug('%s: enter', self.name)", "        metrics.incr('calls.' + self.kind)",
     "        self.trail.append((self.name, clock()))"],
    ["        span = tracer.start(self.name)", "        span.tag('module', __name__)",
     "        span.tag('kind', self.kind)"],
    ["        if not self.ready:", "            raise NotReady(self.name)", "        self.count += 1"],
    ["        started = clock()", "        self.stats.setdefault(self.name, []).append(started)",
     "        log.info('run %s', self.name)"],
    ["        guard = self.lock.acquire(timeout=self.timeout)", "        if not guard:",
     "            raise Busy(self.name)"],
]
"""Blocks copied across many modules at the base (boilerplate, as generated code has)."""
KINDS = ("boiler-add", "dup-add", "shared-add", "rewrite-near-copy", "unique-add", "plain")


def shared_block(g: int) -> list[str]:
    """A block new in the stack that several PRs add, each to its own module."""
    return [f"        self.retry_{g} = RetryPolicy(attempts={g % 5 + 2}, backoff={g / 10:.1f})",
            f"        self.retry_{g}.on_error(self.report_{g})",
            f"        self.retry_{g}.limit(self.budget_{g})"]


def handler(rng: random.Random, m: int, k: int, boiler: int | None) -> list[str]:
    return [f"class Handler{m}_{k}(Base):", f'    """Handler {k} of module {m}."""', "",
            "    def run(self, x):", *(BOILER[boiler] if boiler is not None else []),
            f"        result = self.step_{m}_{k}(x)", f"        total = result + {rng.randrange(999)}",
            "        return total", ""]


def build_boilerplate(root: Path, *, modules: int, units: int, prs: int, files_per_pr: int,
                      edits_per_file: int, seed: int = 11) -> Case:
    rng = random.Random(seed)
    repo, tree = root / "repo", root / "tree"
    repo.mkdir(parents=True)
    git(repo, "init", "--quiet", "--initial-branch=main")
    boiler_of: dict[str, list[int | None]] = {}
    base: dict[str, list[str]] = {"pkg/__init__.py": ['"""Boilerplate bench package."""']}
    for m in range(modules):
        path = f"pkg/svc_{m:04d}.py"
        picks = [rng.randrange(len(BOILER)) if rng.random() < 0.6 else None for _ in range(units)]
        boiler_of[path] = picks
        base[path] = [f'"""Service module {m}."""', "import logging", "",
                      *[line for k, b in enumerate(picks) for line in handler(rng, m, k, b)]]
    pool = [p for p in sorted(base) if p.startswith("pkg/svc_")]
    rng.shuffle(pool)
    donors = pool[: max(4, modules // 20)]
    pool = pool[len(donors):]
    numbers = [2000 + i for i in range(prs)]
    parent_of: dict[int, int | None] = {}
    heads_text: dict[str, list[str]] = {}
    kind_at: dict[str, dict[int, str]] = {}
    """Per file: the head line where each edited unit starts -> the edit's kind."""
    commits: list[tuple[str, str | None, dict[str, bytes | None]]] = [
        ("refs/heads/main", None, {p: encode(v) for p, v in base.items()})]
    group = 0
    for i, n in enumerate(numbers):
        parent_of[n] = numbers[i - 1] if i % 3 == 2 else None
        if i % 3 == 0:
            group += 1  # the PRs of a stack (and the one after) add the same new block
        files: dict[str, bytes | None] = {}
        for _ in range(files_per_pr):
            path = pool.pop()
            lines = list(base[path])
            slots = list(range(0, units, 2))
            rng.shuffle(slots)
            edits = sorted(slots[:edits_per_file], reverse=True)
            starts = _unit_starts(base[path])
            marks: dict[int, str] = {}
            for k in edits:
                kind = rng.choice([x for x in KINDS if x != "dup-add" or boiler_of[path][k] is not None])
                at = starts[k]
                body = lines.index(f"        result = self.step_{path_m(path)}_{k}(x)", at)
                has = boiler_of[path][k]
                if kind == "boiler-add":
                    j = rng.choice([b for b in range(len(BOILER)) if b != has])
                    lines[body:body] = BOILER[j]
                elif kind == "dup-add":
                    assert has is not None
                    lines[body:body] = BOILER[has]
                elif kind == "shared-add":
                    lines[body:body] = shared_block(group)
                elif kind == "rewrite-near-copy":
                    block = shared_block(group) if rng.random() < 0.5 else BOILER[rng.randrange(len(BOILER))]
                    lines[body + 1 : body + 2] = block
                elif kind == "unique-add":
                    lines[body:body] = [f"        self.hook_{n}_{k} = Hook('{path_m(path)}_{k}', {rng.random():.5f})",
                                        f"        self.hook_{n}_{k}.bind(self.step_{path_m(path)}_{k})",
                                        f"        registry.add(self.hook_{n}_{k}, priority={rng.randrange(99)})"]
                else:
                    lines[body + 1] += " + 1"
                marks[k] = kind
            heads_text[path] = lines
            new_starts = _unit_starts(lines)
            kind_at[path] = {new_starts[k]: kind for k, kind in marks.items()}
            files[path] = encode(lines)
        parent = parent_of[n]
        commits.append((f"refs/pull/{n}/head",
                        "refs/heads/main" if parent is None else f"refs/pull/{parent}/head", files))
    base_sha, starts_of, heads, diffs, hunks = import_stack(repo, commits, numbers, parent_of)
    case = Case(repo, tree, numbers, base_sha, starts_of, heads, diffs, hunks, {},
                sum(len(v) for v in base.values()), modules)
    target = {p: list(v) for p, v in base.items()}
    _mutate(rng, case, heads_text, kind_at, donors, target)
    tree.mkdir(parents=True)
    for path, lines in target.items():
        dest = tree / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(encode(lines))
    return case


def path_m(path: str) -> int:
    return int(path.rsplit("_", 1)[1].split(".")[0])


def _unit_starts(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.startswith("class Handler")]


def _mutate(rng: random.Random, case: Case, heads_text: dict[str, list[str]],
            kind_at: dict[str, dict[int, str]], donors: list[str], target: dict[str, list[str]]) -> None:
    """Per hunk (by the kind of its edit): applied, dropped, rewritten or moved, with its truth.
    The first hunk that adds each shared block is applied, so the later ones' drops always
    leave a copy elsewhere (put there by another PR of the stack)."""
    by_file: dict[str, list[Hunk]] = {}
    for h in case.hunks:
        by_file.setdefault(h.path, []).append(h)
    shared_seen: set[str] = set()
    donor_i = 0
    for path, hs in by_file.items():
        lines = list(heads_text[path])
        marks = sorted(kind_at[path].items())
        for h in sorted(hs, key=lambda h: -h.new_start):
            kind = next(k for at, k in reversed(marks) if at <= h.new_start)
            roll = rng.random()
            if kind == "shared-add" and h.added[0] not in shared_seen:
                shared_seen.add(h.added[0])
                name, status = "shared-first-applied", HunkStatus.APPLIED
            elif kind == "rewrite-near-copy":
                m_diverged(rng, lines, h, [])
                name, status = "rewritten-near-copy", HunkStatus.DIVERGED
            elif kind == "unique-add" and roll < 0.5:
                m_missing(rng, lines, h, [])
                donor = donors[donor_i % len(donors)]
                donor_i += 1
                target[donor] = [*target[donor], "", "class Moved:", "    def run(self, x):", *h.added]
                name, status = "unique-moved", HunkStatus.RELOCATED
            elif roll < 0.6:
                m_missing(rng, lines, h, [])
                name, status = f"{kind}-dropped", HunkStatus.MISSING
            else:
                name, status = f"{kind}-applied", HunkStatus.APPLIED
            case.truth[key(h)] = Truth(status, name)
        target[path] = lines
