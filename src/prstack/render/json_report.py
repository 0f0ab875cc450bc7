"""The audit as JSON, schema prstack.audit/2 or /1 (src/prstack/schemas/prstack.audit-N.json; fields in
docs/reports.md)."""

from __future__ import annotations

from typing import Any

from prstack.match.report import AuditReport, pr_status_v1
from prstack.models import FileChange, HunkResult, HunkStatus, ImageInfo, Landed, Placed, PRReport, PRStatus
from prstack.render.formats import AuditSchema
from prstack.render.json_rows import dumps_rows_last
from prstack.render.titles import title_and_source
from prstack.targets.built_from import BuildReport

SCHEMA = AuditSchema.V2.value


def audit_dict(report: AuditReport, schema: AuditSchema = AuditSchema.V2) -> dict[str, Any]:
    """The audit as the JSON document of `schema` (the two differ only in `prs[].status`)."""
    data = _audit_dict(report, schema)
    if (build := report.build) is not None:
        data["target"]["build"] = build_dict(build)  # added field (docs/build-metadata.md)
        if report.lineage is not None:
            data["target"]["build"]["placed"] = placed_dict(report.lineage.placed)
    if (image := report.target.image) is not None:  # added field (docs/targets.md)
        data["target"]["image"] = image_dict(image)
    return data


def image_dict(image: ImageInfo) -> dict[str, Any]:
    """Which image, platform and environment an image audit read, and the layer behind each file read."""
    return {
        "digest": image.digest,
        "digest_kind": image.digest_kind,
        "platform": image.platform,
        "platforms": list(image.platforms),
        "environment": image.environment,
        "environments": list(image.environments),
        "layers": list(image.layers),
        "files": dict(image.files),
    }


def _audit_dict(report: AuditReport, schema: AuditSchema) -> dict[str, Any]:
    t = report.target
    return {
        "schema": schema.value,
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
                **dict(zip(("title", "title_source"), title_and_source(p.pr), strict=True)),
                "head_sha": p.pr.head_sha,
                "base_sha": p.pr.base_sha,
                "depends_on": list(p.pr.depends_on),
                "status": _status(report, p, schema).value,
                "counts": dict(p.counts),
                "merged": p.pr.merged,
                "pr_head": p.pr.pr_head or p.pr.head_sha,
                **({"patch": p.pr.patch} if p.pr.patch is not None else {}),
                **({"landed": landed_dict(landed)} if (landed := _landed(report, p.pr.number)) is not None else {}),
            }
            for p in report.prs
        ],
        "hunks": [_hunk(r) for r in report.results],
    }


def _landed(report: AuditReport, number: int) -> Landed | None:
    return report.lineage.landed.get(number) if report.lineage is not None else None


def landed_dict(landed: Landed) -> dict[str, Any]:
    """Where a merged PR landed: the commit, how (merge, squash, rebase, cherry-pick, content), the first release."""
    return {"commit": landed.commit, "how": landed.how, "first_release": landed.first_release}


def placed_dict(placed: Placed) -> dict[str, Any] | None:
    """How the target was tied to history; with `reason` alone when it could not be."""
    if placed.ref is None:
        return {"ref": None, "reason": placed.reason}
    return {"ref": placed.ref, "name": placed.name, "how": placed.how, "files_matched": placed.files_matched,
            "files_compared": placed.files_compared}


def _status(report: AuditReport, p: PRReport, schema: AuditSchema) -> PRStatus:
    if schema is AuditSchema.V1:
        return pr_status_v1(r for r in report.results if r.hunk.pr == p.pr.number)
    return p.status


def build_dict(build: BuildReport) -> dict[str, Any]:
    """The target's build metadata beside the hunk evidence (docs/build-metadata.md)."""
    ev = build.evidence
    v, d, e, rec = ev.version, ev.direct_url, ev.editable, ev.record
    return {
        "header": build.header,
        "commit": ev.build_commit,
        "version_local": None if v is None or "+" not in v.version else {
            "commit": v.commit, "distance": v.distance, "dirty_date": v.dirty_date, "extra": list(v.extra)},
        "direct_url": None if d is None else {
            "kind": d.kind, "url": d.url, "vcs": d.vcs, "commit_id": d.commit_id,
            "requested_revision": d.requested_revision, "editable": d.editable, "archive_hash": d.archive_hash},
        "installer": ev.installer,
        "top_level": list(ev.top_level),
        "project_urls": [{"label": label, "url": url} for label, url in ev.project_urls],
        "editable": None if e is None else {
            "mechanism": e.mechanism, "via": e.via, "source_dirs": list(e.source_dirs)},
        "record": None if rec is None else {
            "checked": rec.checked, "edited": list(rec.edited), "unrecorded": list(rec.unrecorded),
            "absent": list(rec.absent)},
        "binaries": list(ev.binaries),
        "chosen_by": ev.chosen_by,
        "candidates": list(ev.candidates),
        "contains": {str(n): c.value for n, c in build.contains.items()},
        "disagreements": [
            {"pr": g.pr, "containment": g.containment.value, "status": g.status.value, "cause": g.cause,
             "files": list(g.files)}
            for g in build.disagreements
        ],
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
        "status": _STATUS[r.status],
        "found_path": r.found_path,
        "found_line": r.found_line,
        "fuzz": r.fuzz,
        # added fields (documented in docs/reports.md)
        "commits": list(h.commits),
        "old_path": h.old_path,
        "change": _CHANGE[h.change],
        "offset": r.offset,
        "normalisation": r.evidence.normalisation,
        "note": r.evidence.note,
        "superseded_by": None if (w := r.superseded_by) is None else {"pr": w.pr, "commit": w.commit,
                                                                      **({"upstream": True} if w.upstream else {})},
        "unverifiable": None if r.status is not HunkStatus.UNVERIFIABLE else "not-read" if r.unread else "by-design",
    }


_STATUS = {status: status.value for status in HunkStatus}
_CHANGE = {change: change.value for change in FileChange}
"""The enums' JSON strings, looked up (an enum member's `value` is a Python-level property)."""


def audit_json(report: AuditReport, schema: AuditSchema = AuditSchema.V2) -> str:
    return dumps_rows_last(audit_dict(report, schema))
