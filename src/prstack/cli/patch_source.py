"""`audit --patch`: the options a patch audit takes checked, the patch files read and audited."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from prstack.cli.support import SourceOptions
from prstack.errors import InputError
from prstack.match.report import AuditReport
from prstack.targets.base import TargetSpec


def audit_patch_files(files: Sequence[str], spec: TargetSpec, prs: Sequence[str], given: SourceOptions) -> AuditReport:
    """The audit of the patch files `files` ('-': standard input) against `spec`; PR numbers and
    the options that name a PR source (--git, --repo, --base, --api-url) do not go with them."""
    from prstack.audit import audit
    from prstack.sources.patch.files import read_patch_files, split_patch
    from prstack.sources.patch.source import PatchPRs

    others = [name for name, named in (("PR numbers", bool(prs)), ("--git", given.git is not None),
                                       ("--repo", given.repo is not None), ("--base", given.base is not None),
                                       ("--api-url", given.api_url is not None)) if named]
    if others:
        raise InputError(f"--patch and {' and '.join(others)} both name the PRs; give the patches alone "
                         "(a patch is its own PR source) or drop --patch.")
    if list(files).count("-") > 1:
        raise InputError("--patch - is given twice; standard input can be read once.")
    patches = [split_patch(f) for f in read_patch_files(files, sys.stdin.buffer)]
    return audit(PatchPRs(patches), spec)
