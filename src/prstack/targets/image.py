"""A container image as a target: its Python environments found, the project's distribution chosen in one
of them, and only the files the audit asks for read, each from the layer that last wrote it (targets.layers)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

from prstack.errors import InputError, Option
from prstack.models import ImageInfo, TargetInfo, TargetKind
from prstack.placement.choose import Asked, Choice, DistFiles, choose
from prstack.placement.forge import repo_slug
from prstack.placement.paths import BINARY_SUFFIXES
from prstack.targets.confined import METADATA_CAP, READ_CAP, Unreadable
from prstack.targets.evidence import BuildEvidence
from prstack.targets.layers import (
    DIST_INFO_FILES,
    Blobs,
    ImageError,
    ImageManifest,
    LayerStream,
    Merged,
    OverCap,
    find_manifest,
    merge_layers,
    open_layers,
    read_file,
    resolve,
)
from prstack.targets.metadata import header_fields, metadata_of, parse_direct_url, parse_version, top_level_names
from prstack.targets.record import RecordEntry, RecordIntegrity, confined_path, matches, parse_record
from prstack.targets.spec import TargetSpec

_DIST_INFO = re.compile(r"^(.+/(?:site|dist)-packages)/([^/]+\.dist-info)/METADATA$")
_HEADERS_END = re.compile(r"\r?\n\r?\n")


KEEP_CAP = 1 << 20
"""The largest file of the chosen distribution kept whole from a compressed layer in one pass over it
(a larger one is read on its own when asked for)."""


class _Reader:
    """Reads files of the merged image, a stream per layer kept open; several at once in layer order."""

    def __init__(self, blobs: Blobs, merged: Merged) -> None:
        self.blobs, self.merged = blobs, merged
        self._streams = merged.streams  # (a compressed layer's saved inflate states serve the reads)
        self._kept: dict[str, bytes] = {}

    def read(self, path: str, cap: int) -> bytes | None:
        kept = self._kept.get(path)
        if kept is not None and len(kept) <= cap:
            return kept
        return read_file(self.blobs, self.merged, self._streams, path, cap)

    def keep(self, paths: Iterable[str]) -> None:
        """Read now those of these files that compressed layers hold, in the order the layers hold them,
        and keep them for `read`: one pass over the layer, where the judge's own order would send a zstd
        layer back to its first byte for each file behind the last one read."""
        def compressed(path: str) -> bool:
            real = resolve(self.merged, path, self.blobs.shown)
            entry = self.merged.entries.get(real) if real is not None else None
            return entry is not None and entry.layer in self.merged.compressed and entry.size <= KEEP_CAP

        wanted = [path for path in paths if path not in self._kept and compressed(path)]
        self._kept.update({path: data for path, data in self.read_many(wanted, KEEP_CAP).items() if data is not None})

    def read_many(self, paths: Iterable[str], cap: int) -> dict[str, bytes | None]:
        """Each path's bytes (None when missing or over `cap`), read in the order the layers hold them."""
        def place(path: str) -> tuple[int, int]:
            real = resolve(self.merged, path, self.blobs.shown)
            entry = self.merged.entries.get(real) if real is not None else None
            return (entry.layer, entry.offset) if entry is not None else (-1, 0)

        out: dict[str, bytes | None] = {}
        for path in sorted(paths, key=place):
            try:
                out[path] = self.read(path, cap)
            except OverCap:
                out[path] = None
        return out


def environments(merged: Merged) -> tuple[str, ...]:
    """Site directories (site-packages, dist-packages) holding a distribution, as paths in the image."""
    found = {m.group(1) for path in merged.entries if (m := _DIST_INFO.match(path))}
    return tuple(sorted(found))


class _Installed:
    """One distribution of an environment, read from its .dist-info."""

    def __init__(self, env: str, info_dir: str, texts: dict[str, str | None]) -> None:
        self.env, self.info_dir, self.texts = env, info_dir, texts
        self.headers = header_fields(_HEADERS_END.split(texts.get("METADATA") or "", maxsplit=1)[0])
        self.record = {e.path: e for e in parse_record(texts.get("RECORD") or "")
                       if confined_path(e.path) == e.path}
        core = metadata_of(self.headers)
        direct = texts.get("direct_url.json")
        repos = set(core.repos)
        parsed = parse_direct_url(direct)
        if parsed and (slug := repo_slug(parsed.url)):
            repos.add(slug)
        self.core = core
        self.files = DistFiles(name=self.headers.get("Name") or "", version=self.headers.get("Version"),
                               files=frozenset(self.record), direct_url=direct, repos=frozenset(repos))


def _distributions(reader: _Reader, env: str) -> list[_Installed]:
    prefix = env + "/"
    info_dirs = sorted({path[len(prefix):].split("/", 1)[0] for path in reader.merged.entries
                        if path.startswith(prefix) and (m := _DIST_INFO.match(path)) and m.group(1) == env})
    wanted = [f"{env}/{d}/{name}" for d in info_dirs for name in DIST_INFO_FILES]
    _within_metadata_budget(reader, env, wanted)
    texts = reader.read_many(wanted, METADATA_CAP)
    out = []
    for d in info_dirs:
        got = {name: (b.decode("utf-8", "replace") if (b := texts.get(f"{env}/{d}/{name}")) is not None else None)
               for name in DIST_INFO_FILES}
        dist = _Installed(env, d, got)
        if dist.files.name:
            out.append(dist)
    return out


def _within_metadata_budget(reader: _Reader, env: str, paths: Sequence[str]) -> None:
    """Refuse an environment whose .dist-info files, read whole, would hold more than the image's
    metadata budget in memory."""
    budget = reader.blobs.budget.metadata
    total = 0
    for path in paths:
        real = resolve(reader.merged, path, reader.blobs.shown)
        entry = reader.merged.entries.get(real) if real is not None else None
        if entry is not None and entry.kind == "file" and entry.size <= METADATA_CAP:
            total += entry.size
    if total > budget:
        raise ImageError(Option("image"),
                         f" {reader.blobs.shown}: the distributions of /{env} hold {total} bytes of metadata "
                         f"(.dist-info files), over the {budget}-byte budget; refused.")


@dataclass
class StartedImage:
    """An image opened before the PRs' paths are known: its manifest found, its layers opened, and their
    blobs being checked against their digests while the PRs load."""

    path: str
    platform: str | None
    blobs: Blobs
    manifest: ImageManifest
    layers: dict[int, LayerStream]

    def close(self) -> None:
        self.blobs.close()


def start_image(spec: TargetSpec) -> StartedImage | None:
    """The image `spec` names, started (StartedImage); None when it cannot be, open_image then says why."""
    try:
        blobs = Blobs(Path(spec.path or ""))
    except Exception:  # (open_image says why, at its turn)
        return None
    try:
        manifest = find_manifest(blobs, spec.platform)
        return StartedImage(spec.path or "", spec.platform, blobs, manifest, open_layers(blobs, manifest))
    except Exception:
        blobs.close()
        return None
    except BaseException:
        blobs.close()
        raise


def open_image(spec: TargetSpec, repo_paths: Sequence[str], repo_files: Sequence[str],
               started: StartedImage | None = None) -> ImageTarget:
    """The image `spec` names, its project's distribution chosen (by `--python-path` among several);
    from `started` (start_image) when it was started before."""
    shown = spec.path or ""
    if started is not None and (started.path, started.platform) != (shown, spec.platform):
        started.close()
        started = None
    blobs = started.blobs if started is not None else Blobs(Path(shown))
    try:
        manifest = started.manifest if started is not None else find_manifest(blobs, spec.platform)
        merged = merge_layers(blobs, manifest, verified=False,  # (checked by `evidence`, before any report)
                              opened=started.layers if started is not None else None)
        reader = _Reader(blobs, merged)
        envs = environments(merged)
        if not envs:
            raise ImageError(Option("image"),
                             f" {shown}: no Python environment in it (no site-packages or dist-packages "
                             "holding a *.dist-info); give the image that installs the project.")
        looked = envs
        if spec.python_path is not None:
            wanted = spec.python_path.strip("/")
            if wanted not in envs:
                raise InputError(Option("python_path"), f" {spec.python_path}: not an environment of the image; "
                                 f"it has {', '.join('/' + e for e in envs)}.")
            looked = (wanted,)
        holding: list[tuple[str, Choice, list[_Installed]]] = []
        last: InputError | None = None
        for env in looked:
            dists = _distributions(reader, env)
            try:
                choice = choose([d.files for d in dists], repo_paths, repo_files, f"{shown}:/{env}",
                                Asked(spec.dist, spec.repo, spec.names))
            except InputError as exc:
                last = exc
                continue
            holding.append((env, choice, dists))
        if not holding:
            if last is not None and len(looked) == 1:
                raise last
            raise InputError(Option("image"),
                             f" {shown}: none of its environments ({', '.join('/' + e for e in looked)}) "
                             "holds the project; give the image that installs it, or ", Option("dist"), " NAME.")
        if len(holding) > 1:
            named = ", ".join(f"/{env} ({c.dist.name} {c.dist.version or ''})".replace(" )", ")")
                              for env, c, _ in holding)
            raise InputError(Option("image"), f" {shown}: several environments hold the project: {named}; "
                             "pick one with ", Option("python_path"), ".")
        env, choice, dists = holding[0]
        dist = next(d for d in dists if d.files is choice.dist)
        return ImageTarget(shown, reader, manifest, envs, dist, choice)
    except BaseException:
        blobs.close()
        raise


class ImageTarget:
    """The chosen distribution's files in the image, keyed by their path in its site directory."""

    def __init__(self, shown: str, reader: _Reader, manifest: ImageManifest, envs: tuple[str, ...], dist: _Installed,
                 choice: Choice) -> None:
        self._shown, self._reader, self._manifest, self._envs = shown, reader, manifest, envs
        self._dist, self._choice = dist, choice
        self._written: dict[str, str] = {}
        self._edited: set[str] = set()
        self._checked: set[str] = set()
        self._pass_done = False  # (the distribution's files in compressed layers read in one pass, at the first read)
        version = dist.files.version
        direct = parse_direct_url(dist.files.direct_url)
        self._base = TargetInfo(kind=TargetKind.IMAGE, path=shown, distribution=dist.files.name, version=version,
                                vcs_commit=(direct.commit_id if direct else None)
                                or (parse_version(version).commit if version else None))

    @property
    def info(self) -> TargetInfo:
        m = self._manifest
        image = ImageInfo(m.digest, m.digest_kind, m.platform, m.platforms, "/" + self._dist.env,
                          tuple("/" + e for e in self._envs), tuple(layer.digest for layer in m.layers),
                          tuple(sorted(self._written.items())))
        return TargetInfo(self._base.kind, self._base.path, self._base.distribution, self._base.version,
                          self._base.vcs_commit, image)

    @property
    def bytes_read(self) -> int:
        """Bytes read from the image file or layout so far (headers and the files asked for)."""
        return self._reader.blobs.bytes_read[0]

    def files(self) -> frozenset[str]:
        return self._dist.files.files

    def _where(self, path: str) -> str:
        return f"{self._dist.env}/{path}"

    def read(self, path: str, cap: int = READ_CAP) -> bytes | None:
        if path not in self._dist.files.files:
            return None
        full = self._where(path)
        if not self._pass_done:
            self._pass_done = True
            self._reader.keep(self._where(p) for p in sorted(self._dist.files.files)
                              if PurePosixPath(p).suffix not in BINARY_SUFFIXES)
        try:
            data = self._reader.read(full, cap)
        except OverCap as exc:
            raise Unreadable(f"{self._shown}:/{full}", f"{exc.size} bytes, over the {cap}-byte read limit") from None
        if data is None:
            return None
        real = resolve(self._reader.merged, full, self._shown)
        entry = self._reader.merged.entries.get(real or "")
        if entry is not None:
            self._written[path] = self._manifest.layers[entry.layer].digest
        record = self._dist.record.get(path)
        if record is not None and (verdict := matches(record, data)) is not None:
            self._checked.add(path)
            if not verdict:
                self._edited.add(path)
        return data

    def size(self, path: str) -> int | None:
        if path not in self._dist.files.files:
            return None
        real = resolve(self._reader.merged, self._where(path), self._shown)
        entry = self._reader.merged.entries.get(real or "")
        return entry.size if entry is not None and entry.kind == "file" else None

    def _record(self) -> RecordIntegrity | None:
        if not self._dist.record:
            return None
        absent = tuple(sorted(p for p, e in self._dist.record.items()
                              if e.digest and self.size(p) is None and not _is_dir(self, p)))
        return RecordIntegrity(len(self._checked), tuple(sorted(self._edited)), (), absent)

    @cached_property
    def evidence(self) -> BuildEvidence:
        """The distribution's metadata, and its RECORD's hashes checked for the files the audit read; once
        every layer of the image is found to match its digest (else ImageError: nothing is reported)."""
        self._reader.blobs.verify()
        d = self._dist
        files = d.files.files
        version = d.files.version
        return BuildEvidence(
            distribution=d.files.name,
            version=parse_version(version) if version else None,
            direct_url=parse_direct_url(d.files.direct_url),
            installer=(d.texts.get("INSTALLER") or "").strip() or None,
            top_level=top_level_names(d.texts.get("top_level.txt"), files),
            project_urls=d.core.project_urls,
            record=self._record(),
            binaries=tuple(sorted(f for f in files if PurePosixPath(f).suffix in BINARY_SUFFIXES)),
            candidates=self._choice.candidates,
            chosen_by=self._choice.reason,
        )


def _is_dir(target: ImageTarget, path: str) -> bool:
    entry = target._reader.merged.entries.get(target._where(path))
    return entry is not None and entry.kind == "dir"


__all__ = ["ImageTarget", "RecordEntry", "StartedImage", "environments", "open_image", "start_image"]
