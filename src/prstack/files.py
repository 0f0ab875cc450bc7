"""Files and folders written as pip writes them: a temporary beside the destination, fsync, then one
rename. A reader (or a SIGKILL) sees the old content or the complete new one; a symbolic link at the
destination is replaced as a link, never written through; a destination that is an input of the same
run is refused (InputError), and so is a folder swap that would drop files that are no patch series."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from prstack.errors import InputError

SERIES = "series"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _same_file(dest: Path, inputs: Iterable[Path]) -> Path | None:
    """The input that `dest` itself is (a link at `dest` is its own file: replacing it spares its target)."""
    try:
        here = os.lstat(dest)
    except OSError:
        return None
    for given in inputs:
        try:
            there = os.stat(given)
        except OSError:
            continue
        if (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino):
            return given
    return None


def input_files(given: Iterable[str | Path]) -> tuple[Path, ...]:
    """The files named ('-' for stdin aside; a folder: the files in it, as a folder of patches is read)."""
    out: list[Path] = []
    for arg in given:
        path = Path(arg)
        if str(arg) == "-":
            continue
        out += [p for p in path.iterdir() if p.is_file()] if path.is_dir() else [path]
    return tuple(out)


def holding(folder: Path, inputs: Iterable[Path]) -> Path | None:
    """The first of `inputs` that is a file in `folder` or below (a link at `folder` holds nothing: it is
    replaced as a link)."""
    if folder.is_symlink() or not folder.is_dir():
        return None
    real = folder.resolve()
    for given in inputs:
        parent = Path(os.path.abspath(given)).parent.resolve()
        if parent == real or real in parent.parents:
            return given
    return None


def read_if_file(name: str) -> bytes | None:
    """A file's bytes, or None (stdin's '-', or a file gone)."""
    try:
        return Path(name).read_bytes() if name != "-" else None
    except OSError:
        return None


def write_file(dest: Path, data: bytes, *, inputs: Iterable[Path] = (), private: bool = False) -> None:
    """`data` at `dest`, atomically: a temporary file in its folder, fsync, os.replace. `inputs` are the
    files the run reads (`dest` must be none of them); `private` files are 0600, others follow the umask."""
    shown = str(dest)
    if (given := _same_file(dest, inputs)) is not None:
        raise InputError(f"{shown} is {given}, an input of this run; write the output to another file.")
    if dest.is_dir() and not dest.is_symlink():
        raise InputError(f"cannot write {shown}: it is a folder; give a file name.")
    try:
        _replace_with(dest, data, 0o600 if private else 0o666 & ~_umask())
    except OSError as exc:
        raise InputError(f"cannot write {shown}: {exc.strerror or exc}; give a writable path.") from None


def _replace_with(dest: Path, data: bytes, mode: int) -> None:
    folder = dest.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name[:100]}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(folder)


def _sync_folder(folder: Path) -> None:
    """The folder's entries on disk (the rename survives a power cut); best effort where not allowed."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def replace_series_folder(dest: Path, files: Mapping[str, bytes]) -> None:
    """A patch series folder `dest` holding exactly `files` (name -> bytes, `series` among them), swapped
    in whole: written to a temporary folder beside it, then exchanged with the old one in one rename
    (Linux renameat2), so a reader sees the old series or the new one. An existing `dest` must hold a
    series and nothing else (its `series`, the files it lists, *.patch and *.diff): other files would be
    lost, and are refused. A link at `dest` is replaced as a link."""
    shown = str(dest)
    there = dest.is_symlink() or dest.exists()
    if there and not dest.is_symlink():
        if not dest.is_dir():
            raise InputError(f"cannot write the series into {shown}: it is a file; give a folder.")
        strangers = _not_a_series(dest)
        if strangers:
            raise InputError(f"cannot replace {shown}: it holds {', '.join(strangers[:3])}"
                             f"{' …' if len(strangers) > 3 else ''}, which no series lists; give an empty or new "
                             "folder.")
    for name in files:
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"not a file name: {name!r}")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        staged = Path(tempfile.mkdtemp(prefix=f".{dest.name[:100]}.", suffix=".tmp", dir=dest.parent))
    except OSError as exc:
        raise InputError(f"cannot write {shown}: {exc.strerror or exc}; give a writable folder.") from None
    try:
        mode = 0o666 & ~_umask()
        for name, data in files.items():
            _replace_with(staged / name, data, mode)
        os.chmod(staged, 0o777 & ~_umask())
        _swap_in(staged, dest, there)
    except OSError as exc:
        raise InputError(f"cannot write {shown}: {exc.strerror or exc}; give a writable folder.") from None
    finally:
        _remove(staged)


def _not_a_series(folder: Path) -> list[str]:
    listed = set()
    if (folder / SERIES).is_file():
        text = (folder / SERIES).read_text("utf-8", "surrogateescape")
        listed = {words[0] for line in text.splitlines() if (words := line.split("#", 1)[0].split())}
    out = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        kind = os.lstat(entry.path).st_mode
        ours = entry.name == SERIES or entry.name in listed or entry.name.endswith((".patch", ".diff"))
        if not (stat.S_ISREG(kind) or stat.S_ISLNK(kind)) or not ours:
            out.append(entry.name)
    return out


def _swap_in(staged: Path, dest: Path, there: bool) -> None:
    """`staged` renamed to `dest`; what stood at `dest` (a folder, or a link) is left at `staged`."""
    if there and not _exchange(staged, dest):
        old = staged.with_name(staged.name + ".old")  # (no atomic exchange here: the old series waits aside)
        os.rename(dest, old)
        os.rename(staged, dest)
        os.rename(old, staged)
    elif not there:
        os.rename(staged, dest)
    _sync_folder(dest.parent)


def _exchange(a: Path, b: Path) -> bool:
    """Exchange two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where it is not offered."""
    import ctypes  # (only a folder swap calls into libc)

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if done == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # (EINVAL, ENOSYS, EOPNOTSUPP: the file system or kernel cannot)
        return False
    raise OSError(err, os.strerror(err))


def _remove(path: Path) -> None:
    """A folder this module made (never followed through a link), or a link."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
