"""The audit: a PR source's stack judged against a target (`run_audit` of an `AuditRequest`; `audit`
for one target, `audit_targets` for several, `audit_stack` for the stack of a clone)."""

from prstack.audit.judging import AuditRequest, audit, audit_opened, audit_stack, audit_targets, run_audit

__all__ = ["AuditRequest", "audit", "audit_opened", "audit_stack", "audit_targets", "run_audit"]
