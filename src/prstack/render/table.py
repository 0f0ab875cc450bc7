"""The audit as rich renderables: a PR a row (or two) in stack order, the hunks to look at, the next steps."""

from __future__ import annotations

from collections.abc import Mapping

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from prstack.match.report import AuditReport
from prstack.models import HunkStatus, Landed, PRReport, PRState, PRStatus, PullRequest, TargetInfo
from prstack.render.fit import Unwrapped, wrapped
from prstack.render.panels import HunkPanel, hunk_lines
from prstack.render.summary import Summary
from prstack.render.text import clean, safe
from prstack.render.titles import FALLBACK_FOOTNOTE, FALLBACK_MARK, table_title
from prstack.targets.built_from import BuildReport

PANEL_LINES = 60
"""Diff lines shown in a panel (a whole-file rewrite is thousands); --verbose shows all."""
PANELS_UP_TO = 30
"""Past this many hunks to show, a line per hunk instead of a panel each (--verbose keeps the panels)."""
OTHER_STATUSES = (HunkStatus.PARTIAL, HunkStatus.DIVERGED, HunkStatus.CONFLICT, HunkStatus.FILE_MISSING)
PR_STYLE = {PRStatus.APPLIED: "green", PRStatus.MISSING: "bold red",
            PRStatus.PARTIAL: "yellow", PRStatus.NOT_SHIPPED: "dim"}
WIDE = 100
"""From this width on, the table has a column for each PR's head commit."""
TITLE_LINES = 2
GAP = 2
"""Cells between two columns."""


def pr_state_note(pr: PullRequest) -> str:
    """' (merged)' or ' (stale parent)' after a PR's status, where the graph says so."""
    held = f", held as an older copy: its head is {pr.pr_head[:10]}" if pr.pr_head else ""
    if pr.merged:
        return f" (merged{held})"
    if pr.state is PRState.STALE:
        return f" (built on a stale parent{held})"
    return f" ({held[2:]})" if held else ""


def target_line(report: AuditReport) -> RenderableType:
    """"Target: kind path" whole (a path is not broken), then the build's header and notes, wrapped."""
    t = report.target
    line = Text("Target: ", style="bold")
    line.append_text(safe(f"{t.kind} {t.path}"))
    image = image_note(t)
    build = report.build
    if build is None:
        if t.distribution:
            line.append(" — ")
            line.append_text(safe(f"{t.distribution} {t.version or ''}".strip(), "bold"))
        if t.vcs_commit:
            line.append_text(safe(f", built from {t.vcs_commit[:12]}"))
        return Group(Unwrapped(line), safe(image)) if image else Unwrapped(line)
    notes = Text("Build: ", style="bold")
    notes.append_text(safe(build.header))
    for text, style in build_notes(build):
        notes.append("\n")
        notes.append_text(safe(text, style))
    return Group(Unwrapped(line), *([safe(image)] if image else []), notes)


def image_note(t: TargetInfo) -> str | None:
    """For an image: its digest, the platform and environment read, and how many layers the files came from."""
    im = t.image
    if im is None:
        return None
    what = "image ID" if im.digest_kind == "config" else "manifest"
    platform = f", platform {im.platform}" if im.platform else ""
    others = len(im.environments) - 1
    also = f" (of {len(im.environments)} found)" if others > 0 else ""
    layers = len({d for _, d in im.files})
    return (f"Image: {what} {im.digest}{platform}; environment {im.environment}{also}; {len(im.files)} file(s) "
            f"read, from {layers} of its {len(im.layers)} layer(s)")


def build_notes(build: BuildReport) -> list[tuple[str, str]]:
    """Lines under the header: red flags first, then RECORD findings and how the dist was chosen."""
    ev = build.evidence
    notes = [(f"⚠ {d.sentence()}", "bold red") for d in build.disagreements]
    record = ev.record
    if record is not None:
        for label, paths in (("edited after install (RECORD hash differs)", record.edited),
                             ("added after install (not in RECORD)", record.unrecorded),
                             ("deleted after install (in RECORD, gone)", record.absent)):
            if paths:
                shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
                notes.append((f"{len(paths)} file(s) {label}: {shown}", "yellow"))
    if ev.candidates:
        why = f" (chosen: {ev.chosen_by})" if ev.chosen_by else ""
        notes.append((f"also shipping these files: {', '.join(ev.candidates)}{why}; --dist picks another", "dim"))
    return notes




def state_words(pr: PullRequest, landed: Landed | None = None) -> list[str]:
    """What the graph says of a PR, in a word or two each: merged (in its first release, or its
    landing commit, where known), stale parent, older copy."""
    merged = "merged" if landed is None else f"merged in {landed.first_release or landed.commit[:10]}"
    words = [merged] if pr.merged else ["stale parent"] if pr.state is PRState.STALE else []
    return [*words, "older copy"] if pr.pr_head else words


def footnotes(report: AuditReport) -> list[str]:
    """What the table's marks and words stand for: first commits' subjects, older copies' heads."""
    notes = [FALLBACK_FOOTNOTE] if any(table_title(p.pr)[1] for p in report.prs) else []
    notes += [f"#{p.pr.number} is held as an older copy: its head is {p.pr.pr_head[:10]}, this stack's copy "
              f"ends at {p.pr.head_sha[:10]}." for p in report.prs if p.pr.pr_head]
    notes += lacking_blobs(report)
    with_hunks = {r.hunk.pr for r in report.results}
    sharing = {p.pr.head_sha: p.pr.number for p in report.prs  # (a PR's own head, not where its copy ends)
               if p.pr.number in with_hunks and p.pr.head_sha and not p.pr.pr_head}
    for p in report.prs:
        if p.pr.number in with_hunks:
            continue
        if sharing.get(p.pr.head_sha, p.pr.number) != p.pr.number:
            notes.append(f"#{p.pr.number} has the head of #{sharing[p.pr.head_sha]}; its change is counted there.")
        elif p.pr.depends_on:
            notes.append(f"#{p.pr.number} carries {', '.join(f'#{n}' for n in p.pr.depends_on)}; no change of its own.")
    notes += [f"#{p.pr.number} was built on a stale copy of the PR below it (`prstack graph` says which commits "
              "it lacks)." for p in report.prs if p.pr.state is PRState.STALE and not p.pr.merged]
    return notes


def lacking_blobs(report: AuditReport) -> list[str]:
    """One line per clone lacking blobs of audited files: which files, and the command that
    fetches the blobs."""
    lines = []
    for command in dict.fromkeys(r.hunk.unread for r in report.results if r.hunk.unread):
        paths = list(dict.fromkeys(r.hunk.path for r in report.results if r.hunk.unread == command))
        shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        lines.append(f"The clone lacks the blobs of {len(paths)} file(s) ({shown}): not read, so not present. "
                     f"Fetch them: {command}")
    return lines


class PRTable:
    """One row per PR, sized to the terminal: the PR, status and count columns whole, a head
    column from WIDE cells on, and the title in what is left, on at most two lines."""

    COUNTS = ("applied", "missing", "other", "not shipped")

    def __init__(self, prs: tuple[PRReport, ...], unread: dict[int, int] | None = None,
                 landed: Mapping[int, Landed] | None = None) -> None:
        self.prs = prs
        self.unread = unread or {}
        """PR -> its unverifiable hunks whose files were not read (counted as other: not present)."""
        self.landed = landed or {}
        """PR -> where a merged PR landed upstream (its first release)."""

    def _cells(self, p: PRReport) -> dict[str, Text]:
        c = p.counts
        unread = self.unread.get(p.pr.number, 0)
        on = ", ".join(f"#{n}" for n in p.pr.depends_on)
        state = Text(p.status.value, style=PR_STYLE[p.status])
        if words := state_words(p.pr, self.landed.get(p.pr.number)):
            state.append("\n" + ", ".join(words), style="dim")
        return {
            "PR": Text(f"#{p.pr.number}") + (Text(f"\non {on}", style="dim") if on else Text()),
            "head": Text(p.pr.head_sha[:10]),
            "status": state,
            "applied": Text(str(c["applied"] + c["relocated"])),
            "missing": Text(str(c["missing"])),
            "other": Text(str(sum(c[s.value] for s in OTHER_STATUSES) + unread)),
            "not shipped": Text(str(c["not-shipped"] + c["unverifiable"] - unread)),
        }

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        fixed = ["PR", *(["head"] if width >= WIDE else []), "status", *self.COUNTS]
        rows = [self._cells(p) for p in self.prs]
        sizes = {col: max([max(cell_len(w) for w in col.split()),
                           *(max(cell_len(line) for line in row[col].plain.split("\n")) for row in rows)])
                 for col in fixed}
        titles = [table_title(p.pr) for p in self.prs]
        titled = any(title for title, _ in titles)
        room = width - sum(sizes.values()) - GAP * len(fixed)
        table = Table(title="PRs in stack order (bottom first)", title_justify="left", box=box.SIMPLE_HEAD,
                      show_edge=False, pad_edge=False, padding=(0, GAP - 1, 0, 0), collapse_padding=True)
        for col in fixed[:1]:
            table.add_column(col, no_wrap=True, width=sizes[col])
        if titled:
            table.add_column("title", width=max(room, 10), no_wrap=True)
        for col in fixed[1:]:
            numeric = col in self.COUNTS
            table.add_column("\n".join(col.split()), no_wrap=True, width=sizes[col],
                             justify="right" if numeric else "left")
        for row, (title, from_commit) in zip(rows, titles, strict=True):
            cells: list[RenderableType] = [row["PR"]]
            if titled:
                mark = FALLBACK_MARK if from_commit else ""
                lines = wrapped(clean(title), max(room, 10) - len(mark), TITLE_LINES)
                cells.append(Text("\n".join(lines)) + Text(mark, style="dim"))
            cells += [row[col] for col in fixed[1:]]
            table.add_row(*cells)
        yield table


def summary_lines(summary: Summary) -> RenderableType:
    """The closing summary: which PRs are not fully in the target, then each next step as a command
    line to copy (never wrapped), what it does after a `#`."""
    sentence = Text(summary.sentence(), style="bold red" if summary.lacking else "bold green")
    if not summary.steps:
        return sentence
    steps = [Text("  ") + safe(step.command) + Text(f"  # {step.why}", style="dim") for step in summary.steps]
    return Group(sentence, Unwrapped(*steps))


def audit_table(report: AuditReport, *, verbose: bool = False, summary: Summary | None = None) -> RenderableType:
    shown = [r for r in report.results
             if verbose or r.unread or (r.status.shipped and r.status is not HunkStatus.APPLIED)]
    unread: dict[int, int] = {}
    for r in report.results:
        if r.unread:
            unread[r.hunk.pr] = unread.get(r.hunk.pr, 0) + 1
    parts: list[RenderableType] = [target_line(report),
                                   PRTable(report.prs, unread, report.lineage.landed if report.lineage else None)]
    if notes := footnotes(report):
        parts.append(Text("\n".join(notes), style="dim"))
    if verbose or len(shown) <= PANELS_UP_TO:
        parts += [HunkPanel(r, None if verbose else PANEL_LINES) for r in shown]
    elif shown:
        parts.append(hunk_lines(shown))
    if summary is not None:
        parts.append(summary_lines(summary))
    return Group(*parts)
