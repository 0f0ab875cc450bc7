"""The audit as JSON, schema prstack.audit/1 (shared/INTERFACE.md); added fields documented in README."""

from __future__ import annotations

import json
from typing import Any

from prstack.models import AuditReport, HunkResult

SCHEMA = "prstack.audit/1"


def audit_dict(report: AuditReport) -> dict[str, Any]:
    t = report.target
    return {
        "schema": SCHEMA,
        "target": {
            "kind": t.kind,
            "path": t.path,
            "distribution": t.distribution,
            "version": t.version,
            "vcs_commit": t.vcs_commit,
        },
        "prs": [
            {
                "number": p.pr.number,
                "title": p.pr.title,
                "head_sha": p.pr.head_sha,
                "base_sha": p.pr.base_sha,
                "depends_on": list(p.pr.depends_on),
                "status": p.status.value,
                "counts": dict(p.counts),
                "merged": p.pr.merged,
            }
            for p in report.prs
        ],
        "hunks": [_hunk(r) for r in report.results],
    }


def _hunk(r: HunkResult) -> dict[str, Any]:
    h = r.hunk
    return {
        "pr": h.pr,
        "commit": h.commit,
        "path": h.path,
        "installed_path": r.installed_path,
        "old_start": h.old_start,
        "old_lines": h.old_lines,
        "new_start": h.new_start,
        "new_lines": h.new_lines,
        "status": r.status.value,
        "found_path": r.found_path,
        "found_line": r.found_line,
        "fuzz": r.fuzz,
        # added fields (documented in README.md, "JSON output")
        "commits": list(h.commits),
        "old_path": h.old_path,
        "change": h.change.value,
        "offset": r.offset,
        "normalisation": r.evidence.normalisation,
        "note": r.evidence.note,
    }


def audit_json(report: AuditReport) -> str:
    return json.dumps(audit_dict(report), indent=2) + "\n"
