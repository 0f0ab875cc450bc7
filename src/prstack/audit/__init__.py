"""The audit: a PR source's stack judged against a target (`audit`), several targets at once
(`audit_targets`), the stack of a clone (`audit_stack`)."""

from prstack.audit.judging import audit, audit_opened, audit_stack, audit_targets

__all__ = ["audit", "audit_opened", "audit_stack", "audit_targets"]
