"""Pure reading of build metadata: the version's local part and PEP 610 direct_url.json."""

from __future__ import annotations

import json
import re


def commit_from_version(version: str | None) -> str | None:
    """The commit a version's local part names: 0.20.2.dev3+g3cfc8f8b7 -> '3cfc8f8b7'."""
    if not version:
        return None
    m = re.search(r"\+(?:[^+]*?\.)?g([0-9a-f]{7,40})(?:\.|$)", version)
    return m.group(1) if m else None


def commit_from_direct_url(text: str | None) -> str | None:
    """vcs_info.commit_id of a PEP 610 direct_url.json, when it has one."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    vcs = data.get("vcs_info") if isinstance(data, dict) else None
    commit = vcs.get("commit_id") if isinstance(vcs, dict) else None
    return commit if isinstance(commit, str) else None
