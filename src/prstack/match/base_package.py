"""The package at a PR's base, read only as far as a question needs: where a block was there."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from prstack.match.package import PackageIndex
from prstack.match.text import blob_id

BaseFile = tuple[str, str, int]
"""(repository path, blob id, size) of a text file of the package at the base."""


class PackageAtBase:
    """Whether a block was in the package at a revision (any file), answered from the target's
    index where it can: a file of the base whose blob id the target's copy has is that copy, so
    the block was in it exactly where the target's index finds it there. Only the other files
    (those the stack or upstream changed since, or the target lacks) are read, once, on the
    first question that needs them, by blob id in one batch, and indexed apart.

    `files` lists the base's text files (called once, when first asked); `read` gives blob id ->
    bytes for many blob ids at once; `installed_of` maps a repository path to the target's
    installed path (None where the target would not hold it)."""

    def __init__(self, files: Callable[[], Sequence[BaseFile]], read: Callable[[Sequence[str]], Mapping[str, bytes]],
                 target: PackageIndex, installed_of: Callable[[str], str | None]) -> None:
        self._files, self._read, self._target, self._installed_of = files, read, target, installed_of
        self._same: dict[str, bool] | None = None
        """Installed path -> whether the target's copy is the base's file (blob ids equal)."""
        self._others: PackageIndex | None = None

    def _sames(self) -> dict[str, bool]:
        if self._same is None:
            same: dict[str, bool] = {}
            others: dict[str, str] = {}
            data = self._target.data
            for path, blob, size in self._files():
                installed = self._installed_of(path)
                held = data.get(installed) if installed is not None else None
                if (installed is not None and held is not None and installed not in same
                        and len(held) == size and blob_id(held, len(blob)) == blob):
                    same[installed] = True
                else:
                    others[path] = blob
            self._same = same
            self._others = PackageIndex(lambda: self._load(others))
        return self._same

    def _load(self, others: Mapping[str, str]) -> dict[str, bytes]:
        texts = self._read(sorted(set(others.values())))
        return {path: texts[blob] for path, blob in others.items() if blob in texts}

    def find_block(self, block: Sequence[str]) -> tuple[str, int] | None:
        """A place of `block` in the package at the base (a file's path and 1-based line), or None."""
        same = self._sames()
        for path, line in self._target.find_all(block):
            if same.get(path):
                return path, line
        assert self._others is not None
        return self._others.find_block(block)

