"""Audit targets: installed distributions, wheels, source trees and images; the only filesystem readers."""

from prstack.targets.base import Target, TargetSpec, open_target

__all__ = ["Target", "TargetSpec", "open_target"]
