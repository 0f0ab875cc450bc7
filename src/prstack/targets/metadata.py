"""Pure reading of build metadata: the version's local part, PEP 610 direct_url.json, Project-URLs."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import urlsplit

from prstack.placement.forge import repo_slug

_LOCAL_COMMIT = re.compile(r"^(?:g|git)?([0-9a-f]{7,40})$")
_LOCAL_DATE = re.compile(r"^d(\d{8})(\d{6})?$")
_DISTANCE = re.compile(r"\.(dev|post)(\d+)(?:\+|$)")
JSON_DEPTH = 64
"""The deepest nesting of arrays and objects read in metadata or image JSON (real files need a handful)."""


class JsonTooDeep(ValueError):
    """JSON nested past JSON_DEPTH (its message says so)."""


def bounded_json(data: str | bytes) -> Any:
    """JSON parsed, refused (JsonTooDeep) when nested past JSON_DEPTH; ValueError when it is no JSON."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise JsonTooDeep(f"nests its JSON past {JSON_DEPTH} levels") from None
    level = [(value, 1)]
    while level:
        node, depth = level.pop()
        if isinstance(node, dict | list):
            if depth > JSON_DEPTH:
                raise JsonTooDeep(f"nests its JSON past {JSON_DEPTH} levels")
            level.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return value


@dataclass(frozen=True)
class VersionInfo:
    """What a version string says about the build (setuptools-scm, versioningit and +<sha> forms).

    `0.20.2.dev123+g3cfc8f8b7.d20260514.cu129` -> commit '3cfc8f8b7', distance 123,
    dirty_date '2026-05-14', extra ('cu129',).
    """

    version: str
    commit: str | None = None
    """Abbreviated commit of the local part (g<sha>, git<sha> or a bare hex <sha>)."""
    distance: int | None = None
    """Commits since the last tag (the .devN / .postN that comes with a local commit)."""
    dirty_date: str | None = None
    """YYYY-MM-DD of a d<date> local segment: built from a tree with uncommitted changes."""
    extra: tuple[str, ...] = ()
    """Other local segments (cu129, cpu, precompiled...)."""

    @property
    def dirty(self) -> bool:
        return self.dirty_date is not None


def parse_version(version: str) -> VersionInfo:
    """Split a version's local part into commit, distance, dirty date and the rest."""
    public, plus, local = version.partition("+")
    if not plus:
        return VersionInfo(version)
    commit = dirty = None
    extra = []
    for segment in re.split(r"[._-]", local.lower()):
        if not segment:
            continue
        if dirty is None and (d := _LOCAL_DATE.match(segment)):  # before commits: 'd20260514' is hex too
            day = d.group(1)
            dirty = f"{day[:4]}-{day[4:6]}-{day[6:]}"
        elif commit is None and (m := _LOCAL_COMMIT.match(segment)) and not segment.isdigit():
            commit = m.group(1)
        else:
            extra.append(segment)
    distance = None
    if commit is not None and (m := _DISTANCE.search(public + "+")):
        distance = int(m.group(2))
    return VersionInfo(version, commit, distance, dirty, tuple(extra))

def commit_from_version(version: str | None) -> str | None:
    """The commit a version's local part names: 0.20.2.dev3+g3cfc8f8b7 -> '3cfc8f8b7'."""
    return parse_version(version).commit if version else None


@dataclass(frozen=True)
class DirectUrl:
    """A PEP 610 direct_url.json: how pip was told to get the distribution."""

    kind: str
    """'vcs' (vcs_info), 'archive' (archive_info), 'dir' (dir_info) or 'unknown'."""
    url: str
    """The URL with any user:password removed."""
    vcs: str | None = None
    commit_id: str | None = None
    """vcs_info.commit_id: the exact commit that was built."""
    requested_revision: str | None = None
    """vcs_info.requested_revision: what the user asked for (a branch, a tag, refs/pull/N/head)."""
    editable: bool = False
    """dir_info.editable: installed in development mode."""
    archive_hash: str | None = None

    @property
    def shown(self) -> str:
        """host/path@commit, as the report's header shows it."""
        parts = urlsplit(self.url.removeprefix(f"{self.vcs}+") if self.vcs else self.url)
        where = (parts.hostname or "") + parts.path.removesuffix(".git") if parts.hostname else parts.path
        rev = self.commit_id[:9] if self.commit_id else self.requested_revision
        return f"{where}@{rev}" if rev else where

    @property
    def repo(self) -> str | None:
        """OWNER/NAME when the URL is a repository on a forge, lower-cased."""
        return repo_slug(self.url)


def _strip_credentials(url: str) -> str:
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return parts._replace(netloc=netloc).geturl()


def parse_direct_url(text: str | None) -> DirectUrl | None:
    """The direct_url.json's content, or None when absent or not valid PEP 610 JSON."""
    if not text:
        return None
    try:
        data = bounded_json(text)
    except ValueError:  # (JsonTooDeep too: a hostile file says nothing)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return None
    url = _strip_credentials(data["url"])
    vcs, archive, folder = (data.get(k) for k in ("vcs_info", "archive_info", "dir_info"))
    if isinstance(vcs, dict):
        return DirectUrl(
            "vcs", url, _str(vcs.get("vcs")), _str(vcs.get("commit_id")), _str(vcs.get("requested_revision"))
        )
    if isinstance(archive, dict):
        hashes = archive.get("hashes")
        first = next(iter(sorted(hashes.items())), None) if isinstance(hashes, dict) else None
        digest = f"{first[0]}={first[1]}" if first else _str(archive.get("hash"))
        return DirectUrl("archive", url, archive_hash=digest)
    if isinstance(folder, dict):
        return DirectUrl("dir", url, editable=folder.get("editable") is True)
    return DirectUrl("unknown", url)


def commit_from_direct_url(text: str | None) -> str | None:
    """vcs_info.commit_id of a PEP 610 direct_url.json, when it has one."""
    parsed = parse_direct_url(text)
    return parsed.commit_id if parsed else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class CoreMetadata:
    """The METADATA fields prstack uses."""

    name: str | None
    version: str | None
    project_urls: tuple[tuple[str, str], ...] = ()
    """(label, url) of each Project-URL, and Home-page as ('Homepage', url)."""
    download_url: str | None = None

    @property
    def repos(self) -> frozenset[str]:
        """OWNER/NAME of every URL that points into a repository on a forge."""
        return frozenset(s for _, url in self.project_urls if (s := repo_slug(url)))


def core_metadata(
    name: str | None, version: str | None, project_urls: Iterable[str], home_page: str | None = None
) -> CoreMetadata:
    """From METADATA's Name, Version, Project-URL ('Label, url') and Home-page fields."""
    urls: list[tuple[str, str]] = []
    for value in project_urls:
        label, _, url = str(value).partition(",")
        if url.strip():
            urls.append((label.strip(), url.strip()))
    if home_page and home_page.strip() not in ("", "UNKNOWN"):
        urls.append(("Homepage", home_page.strip()))
    return CoreMetadata(name, version, tuple(urls))


class Headers(Protocol):
    """METADATA's fields as a parser gives them (`header_fields`, or importlib.metadata's)."""

    def get_all(self, name: str, failobj: None = None) -> list[Any] | None: ...


class HeaderFields:
    """The header fields of a METADATA (or PKG-INFO), in order, looked up by name in any case."""

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self._fields = fields

    def get_all(self, name: str, failobj: None = None) -> list[str] | None:
        """Every value of the field `name`, or None when it has none."""
        name = name.lower()
        return [value for key, value in self._fields if key.lower() == name] or failobj

    def get(self, name: str, failobj: None = None) -> str | None:
        """The field's first value, or None."""
        name = name.lower()
        return next((value for key, value in self._fields if key.lower() == name), failobj)

    def __getitem__(self, name: str) -> str | None:
        return self.get(name)


_FIELD_LINE = re.compile(r"From |[\041-\071\073-\176]*:|[\t ]")
"""A line of the header block: a field (its name printable ASCII but ':'), a folded line, or a mbox
"From " line; any other line (a blank one among them) ends the block."""


def header_fields(text: str) -> HeaderFields:
    """The header fields of METADATA's `text` as email's HeaderParser reads them (its default
    policy): lines end at CR, LF or CRLF; a folded line joins its field's value as it is; a value
    loses the spaces and tabs that lead it and the line ends that close it; a mbox "From " line
    is skipped, and so are a line that starts with ':' and the lines folded under either (or
    under none). Text with lone surrogates is left to email's parser."""
    if not text.isascii() and not _encodable(text):
        from email.parser import HeaderParser  # (values with surrogates are its Header objects)

        return HeaderParser().parsestr(text)  # type: ignore[return-value]
    block = []
    for line in io.StringIO(text, newline="").readlines():
        if not _FIELD_LINE.match(line):
            break
        block.append(line)
    fields: list[tuple[str, str]] = []
    field: list[str] = []
    for line in block:
        if line[0] in " \t":
            if field:
                field.append(line)
            continue
        if field:
            fields.append(_field(field))
            field = []
        if not line.startswith(("From ", ":")):
            field = [line]
    if field:
        fields.append(_field(field))
    return HeaderFields(fields)


def _field(lines: list[str]) -> tuple[str, str]:
    name, value = lines[0].split(":", 1)
    return name, (value.lstrip(" \t") + "".join(lines[1:])).rstrip("\r\n")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def metadata_of(headers: Headers, version: str | None = None) -> CoreMetadata:
    """The fields prstack uses of a METADATA (the one place they are read), `version` when the
    caller knows it better (importlib's normalised one)."""

    def first(name: str) -> str | None:
        values = headers.get_all(name) or []
        return str(values[0]) if values else None

    core = core_metadata(first("Name"), version or first("Version"), headers.get_all("Project-URL") or [],
                         first("Home-page"))
    download = first("Download-URL")
    return replace(core, download_url=download.strip() if download and download.strip() != "UNKNOWN" else None)


def top_level_names(text: str | None, files: Iterable[str]) -> tuple[str, ...]:
    """Top-level import names: top_level.txt where present, else the first parts of the file list."""
    if text:
        names = [line.strip() for line in text.splitlines() if line.strip()]
        if names:
            return tuple(sorted(set(names)))
    found = set()
    for path in files:
        head, _, rest = path.partition("/")
        if head.endswith((".dist-info", ".egg-info", ".data")) or head in ("..", "") or head.startswith("__editable__"):
            continue
        if rest:
            found.add(head)
        elif head.endswith((".py", ".so", ".pyd")):
            found.add(head.split(".", 1)[0])
    return tuple(sorted(found))
