"""What a target's metadata says about its build: one frozen value, read once, shown beside the hunks."""

from __future__ import annotations

from dataclasses import dataclass

from prstack.models import EditableSource
from prstack.targets.metadata import DirectUrl, VersionInfo
from prstack.targets.record import RecordIntegrity


@dataclass(frozen=True)
class BuildEvidence:
    """The build metadata of the audited distribution (or wheel, or tree)."""

    distribution: str | None = None
    version: VersionInfo | None = None
    """The version and what its local part says (commit, distance, dirty date)."""
    direct_url: DirectUrl | None = None
    """PEP 610 direct_url.json: vcs commit and requested revision, archive, or local dir."""
    installer: str | None = None
    """INSTALLER's content (pip, uv, conda...)."""
    top_level: tuple[str, ...] = ()
    """Top-level import names (top_level.txt, else from the file list)."""
    project_urls: tuple[tuple[str, str], ...] = ()
    """(label, url) of the Project-URLs (and Home-page)."""
    record: RecordIntegrity | None = None
    """RECORD integrity; None when the target has no RECORD (a tree)."""
    editable: EditableSource | None = None
    """Set when the distribution is an editable install: the audit read its source directory."""
    binaries: tuple[str, ...] = ()
    """Compiled extension modules the distribution ships (.so, .pyd)."""
    candidates: tuple[str, ...] = ()
    """Other distributions in the target that also ship files the PRs change."""
    chosen_by: str | None = None
    """Why this distribution was audited (--dist, the only one shipping the files, ...)."""
    checkout_commit: str | None = None
    """For a tree, or an editable install's source, inside a git checkout: its .git/HEAD commit."""

    @property
    def version_commit(self) -> str | None:
        return self.version.commit if self.version else None

    @property
    def build_commit(self) -> str | None:
        """The commit the build says it came from: direct_url's vcs commit, else the version's."""
        if self.direct_url and self.direct_url.commit_id:
            return self.direct_url.commit_id
        if self.editable is not None and self.checkout_commit:
            return self.checkout_commit  # the code that runs is the checkout's, whatever the version says
        return self.version_commit or self.checkout_commit

    @property
    def commits_disagree(self) -> bool:
        """True when direct_url.json and the version's local part name different commits."""
        a = self.direct_url.commit_id if self.direct_url else None
        b = self.version_commit
        return bool(a and b and not a.startswith(b) and not b.startswith(a))

    def file_issues(self) -> dict[str, str]:
        """installed path -> what RECORD says is wrong with it (edited, unrecorded, gone)."""
        return self.record.issues() if self.record else {}
