"""The output formats of each command and the JSON schema ids: what `--format` and `--schema` offer."""

from __future__ import annotations

from enum import StrEnum


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    MARKDOWN = "markdown"


class AuditFormat(StrEnum):
    """`audit --format`: the output formats, and JUnit XML for CI test reports."""

    TABLE = "table"
    JSON = "json"
    MARKDOWN = "markdown"
    JUNIT = "junit"


class AuditSchema(StrEnum):
    """`audit --schema`: the JSON schema id an audit is written in. prstack.audit/2 rolls a PR up
    as `missing` when none of its shipped change is present; prstack.audit/1 (kept for one release)
    called that `partial` unless every shipped hunk was missing."""

    V2 = "prstack.audit/2"
    V1 = "prstack.audit/1"


class GraphFormat(StrEnum):
    """`graph --format` (here, not in render.graph, so the CLI's help needs no graph library)."""

    TABLE = "table"
    JSON = "json"
    DOT = "dot"
    MERMAID = "mermaid"


class HunksFormat(StrEnum):
    """`hunks --format`."""

    TABLE = "table"
    JSON = "json"


def choices(formats: type[StrEnum]) -> str:
    """The formats as a command's help shows them: table|json|markdown."""
    return "|".join(f.value for f in formats)
