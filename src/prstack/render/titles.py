"""A PR's title as every renderer shows it: GitHub's, or (from a clone, which has none) its first commit's subject."""

from __future__ import annotations

from prstack.models import PullRequest

FALLBACK_NOTE = " (subject of the first commit)"
FALLBACK_MARK = "*"
FALLBACK_FOOTNOTE = "* no title from GitHub: the subject of the PR's first commit."


def title_and_source(pr: PullRequest) -> tuple[str | None, str | None]:
    """(title, where it comes from: "github" or "first-commit", the subject of the PR's first commit)."""
    if pr.title:
        return pr.title, "github"
    first = next((c for c in pr.commits if len(c.parents) < 2), pr.commits[0] if pr.commits else None)
    if first is not None and first.subject:  # (its own first change: a merge of other PRs is no title)
        return first.subject, "first-commit"
    return None, None


def shown_title(pr: PullRequest) -> str:
    """GitHub's title; else the first commit's subject, said so; else the patch file's name; else empty."""
    title, from_commit = table_title(pr)
    return title + FALLBACK_NOTE if from_commit else title


def table_title(pr: PullRequest) -> tuple[str, bool]:
    """The title a table cell shows (GitHub's, the first commit's subject, the patch file's name or
    empty), and whether it is the first commit's subject: a table marks those with FALLBACK_MARK,
    which one footnote (FALLBACK_FOOTNOTE) explains."""
    title, source = title_and_source(pr)
    if title is None:
        return (f"(patch {pr.patch})" if pr.patch else ""), False
    return title, source == "first-commit"
