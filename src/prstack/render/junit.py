"""The audit as JUnit XML for CI test reports: a test suite per target and PR, a test case per hunk.

A shipped hunk that is not present (missing, partial, diverged, conflict, file-missing, or a file
that could not be read) is a failure carrying its evidence; a hunk the target does not ship
(not-shipped, unverifiable by design) is skipped. The shape is the one Jenkins, GitLab and the
GitHub test-report actions read (testsuites > testsuite > testcase > failure | skipped).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from prstack.match.report import AuditReport
from prstack.models import HunkResult, HunkStatus
from prstack.render.panels import status_label, where
from prstack.render.text import clean as _clean
from prstack.render.titles import title_and_source

_NOT_XML = re.compile("[\ufffe\uffff]")
"""Characters XML 1.0 cannot hold that `clean` leaves (it escapes every control)."""


def clean(value: str | None) -> str:
    """Untrusted text made inert (render.text.clean) and fit for XML 1.0."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group(0)):04x}", _clean(value))


def target_label(report: AuditReport) -> str:
    """The target as a suite names it: kind and path, then the distribution and version found."""
    t = report.target
    found = f" ({t.distribution} {t.version or ''}".rstrip() + ")" if t.distribution else ""
    return clean(f"{t.kind} {t.path}{found}")


def _text(value: str) -> str:
    """Untrusted text made inert line by line (controls shown as escapes), line breaks kept."""
    return "\n".join(clean(line) for line in value.splitlines())


def _failure_body(r: HunkResult) -> str:
    ev = r.evidence
    lines = [f"{status_label(r)}: PR #{r.hunk.pr} {r.hunk.path} -> {where(r)}"]
    if r.hunk.commit:
        lines.append(f"commit {r.hunk.commit}")
    if ev.note:
        lines.append(ev.note)
    if ev.missing_lines:
        lines.append("not in the target: " + " | ".join(ev.missing_lines))
    if ev.found_text:
        lines += ["found in the target:", *ev.found_text]
    lines += ["", r.hunk.diff_text()]
    return _text("\n".join(lines))


def _case(parent: ET.Element, classname: str, r: HunkResult) -> tuple[bool, bool]:
    """The hunk's test case; (failed, skipped)."""
    h = r.hunk
    name = f"{h.path} @@ -{h.old_start},{h.old_lines} +{h.new_start},{h.new_lines} @@"
    case = ET.SubElement(parent, "testcase", name=clean(name), classname=classname, time="0")
    if r.status.present:
        return False, False
    if not r.status.shipped and not r.unread:
        why = r.evidence.note or ("compiled into a binary" if r.status is HunkStatus.UNVERIFIABLE
                                  else "the target does not ship this file")
        ET.SubElement(case, "skipped", message=clean(f"{r.status.value}: {why}"))
        return False, True
    failure = ET.SubElement(case, "failure", message=clean(f"{status_label(r)} at {where(r)}"),
                            type=r.status.value)
    failure.text = _failure_body(r)
    return True, False


def audit_junit(reports: Sequence[AuditReport]) -> str:
    """The audits of one or more targets as one JUnit XML document."""
    root = ET.Element("testsuites", name="prstack audit")
    totals = [0, 0, 0]
    for report in reports:
        label = target_label(report)
        for p in report.prs:
            suite = ET.SubElement(root, "testsuite", name=f"{label} :: PR #{p.pr.number}")
            props = ET.SubElement(suite, "properties")
            for key, value in (("target", label), ("pr", str(p.pr.number)), ("head_sha", p.pr.head_sha),
                               ("status", p.status.value), ("title", clean(title_and_source(p.pr)[0] or ""))):
                ET.SubElement(props, "property", name=key, value=value)
            classname = f"prstack.pr{p.pr.number}"
            counts = [0, 0, 0]
            for r in report.results:
                if r.hunk.pr != p.pr.number:
                    continue
                failed, skipped = _case(suite, classname, r)
                counts = [counts[0] + 1, counts[1] + failed, counts[2] + skipped]
            suite.set("tests", str(counts[0]))
            suite.set("failures", str(counts[1]))
            suite.set("errors", "0")
            suite.set("skipped", str(counts[2]))
            suite.set("time", "0")
            totals = [a + b for a, b in zip(totals, counts, strict=True)]
    root.set("tests", str(totals[0]))
    root.set("failures", str(totals[1]))
    root.set("errors", "0")
    root.set("skipped", str(totals[2]))
    root.set("time", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
