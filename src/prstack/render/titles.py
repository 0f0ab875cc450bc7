"""A PR's title as every renderer shows it: GitHub's, or (from a clone, which has none) its first commit's subject."""

from __future__ import annotations

from prstack.models import PullRequest

FALLBACK_NOTE = " (subject of the first commit)"


def shown_title(pr: PullRequest) -> str:
    """GitHub's title; else the first commit's subject, said so; else empty."""
    if pr.title:
        return pr.title
    if pr.commits and pr.commits[0].subject:
        return pr.commits[0].subject + FALLBACK_NOTE
    return ""
