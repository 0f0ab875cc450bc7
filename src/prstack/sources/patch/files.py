"""Patch files as a PR source: read files, folders, quilt series and stdin; split mails; check the diff text."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from prstack.diff.plain import body_end, plain_files
from prstack.errors import InputError, Option

__all__ = ["Mail", "Patch", "PatchFile", "read_patch_files", "split_patch"]

PATCH_MAX_BYTES = 50 << 20
"""A patch file larger than this is refused (no diff a person keeps beside a Dockerfile is)."""


@dataclass(frozen=True)
class PatchFile:
    """One patch file as given: its name (as the user wrote it, or '-') and its bytes."""

    name: str
    data: bytes


@dataclass(frozen=True)
class Mail:
    """One commit of a patch: a git format-patch mail, or the whole file when it is a bare diff."""

    sha: str | None
    """The commit of the mail's `From <sha>` line, when it has one."""
    subject: str | None
    """The mail's subject without its `[PATCH n/m]` tag."""
    author: str
    message: str
    """The commit message (subject and body), as far as the mail holds it."""
    diff: str
    """The diff text of the mail (headers, stat and signature left out)."""


@dataclass(frozen=True)
class Patch:
    """A patch file split into its mails, with the PR number it names (if any)."""

    name: str
    mails: tuple[Mail, ...]
    number: int | None
    """The PR number the patch names: file `N.diff`/`N.patch`, "(#N)" ending a subject, a PR URL."""


def read_patch_files(args: Sequence[str], stdin: BinaryIO) -> list[PatchFile]:
    """The patch files `args` name, in order: a file, a folder (its quilt `series` if it has one,
    else its *.patch and *.diff files, or all its files, in name order), a quilt `series` file,
    or '-' for `stdin`."""
    out: list[PatchFile] = []
    for arg in args:
        if arg == "-":
            out.append(PatchFile("-", _limited(stdin.read(PATCH_MAX_BYTES + 1), "-")))
            continue
        path = Path(arg)
        if path.is_dir():
            series = path / "series"
            if series.is_file():
                out += [_read(p, str(p)) for p in _series(series)]
                continue
            files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
            named = [p for p in files if p.suffix in (".patch", ".diff")]
            files = named or files  # (a README beside the patches is no patch)
            if not files:
                raise InputError(Option("patch"), f" {arg}: the folder holds no patch files; give a folder of patches.")
            out += [_read(p, str(p)) for p in files]
        elif path.name == "series" and path.is_file():
            out += [_read(p, str(p)) for p in _series(path)]
        else:
            out.append(_read(path, arg))
    return out


def _read(path: Path, name: str) -> PatchFile:
    try:
        with path.open("rb") as f:
            data = f.read(PATCH_MAX_BYTES + 1)
    except FileNotFoundError:
        raise InputError(Option("patch"),
                         f" {name}: no such file; give a patch file, a folder of patches or '-'.") from None
    except OSError as exc:
        raise InputError(Option("patch"), f" {name}: cannot read it ({exc.strerror}).") from None
    return PatchFile(name, _limited(data, name))


def _limited(data: bytes, name: str) -> bytes:
    if len(data) > PATCH_MAX_BYTES:
        raise InputError(Option("patch"),
                         f" {name}: larger than {PATCH_MAX_BYTES >> 20} MB; split it or give its files.")
    return data


def _series(series: Path) -> list[Path]:
    """The patches a quilt `series` file lists (one a line, options and comments after the name)."""
    try:
        text = series.read_text("utf-8", "surrogateescape")
    except OSError as exc:
        raise InputError(Option("patch"), f" {series}: cannot read it ({exc.strerror}).") from None
    names = [line.split("#", 1)[0].split() for line in text.splitlines()]
    paths = [series.parent / words[0] for words in names if words]
    if not paths:
        raise InputError(Option("patch"), f" {series}: the series lists no patch; add the patches' names, one a line.")
    return paths


_MAIL_START = re.compile(r"^From (\S+) (?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ", re.MULTILINE)
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_TAG = re.compile(r"^\s*\[[^\]]*\]\s*")
_SUBJECT_NUMBER = re.compile(r"\(#(\d+)\)\s*$")
_PR_URL = re.compile(r"https?://[^/\s]+/[^/\s]+/[^/\s]+/pull/(\d+)")
_FILE_NUMBER = re.compile(r"#?(\d+)\.(?:diff|patch)")
_DIFF_START = re.compile(r"^(?:diff |--- \S|Index: )", re.MULTILINE)
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def split_patch(file: PatchFile) -> Patch:
    """`file` split into mails and checked: one line (InputError) for an empty file, a file with
    no diff, a truncated hunk or one whose line counts do not match its lines."""
    if not file.data.strip():
        raise InputError(Option("patch"),
                         f" {file.name}: the file is empty; give a unified diff or a git format-patch file.")
    text = _lf(file.data.decode("utf-8", "surrogateescape"))
    # (the search only where a line starts with "From ": a bare diff has none, and is long)
    starts = [m.start() for m in _MAIL_START.finditer(text)] if text.startswith("From ") or "\nFrom " in text else []
    chunks = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)] if starts else [text]
    preamble = text[: starts[0]] if starts else ""
    mails = tuple(_mail(chunk, bool(starts)) for chunk in chunks)
    if not any(_DIFF_START.search(m.diff) for m in mails):
        raise InputError(Option("patch"), f" {file.name}: no diff in it; give a unified diff (diff -u, git diff), "
                         "a git format-patch file or GitHub's PR .diff/.patch.")
    for m in mails:
        _check_counts(m.diff, file.name)
    return Patch(file.name, mails, _number(file.name, mails, preamble))


def _lf(text: str) -> str:
    """CRLF read as LF where the file was saved with CRLF line ends (every line ends so, as
    GNU patch does), else on the diff's header lines only (a CR there is not part of a name)."""
    if "\r" not in text:
        return text
    lines = text.split("\n")
    if all(line.endswith("\r") for line in lines[:-1]) and len(lines) > 1:
        return text.replace("\r\n", "\n")
    headers = ("diff ", "--- ", "+++ ", "@@ ", "index ", "From ", "Subject:", "rename ", "similarity ",
               "new file", "deleted file", "old mode", "new mode", "Binary files", "GIT binary")
    return "\n".join(line[:-1] if line.endswith("\r") and line.startswith(headers) else line for line in lines)


def _mail(chunk: str, is_mail: bool) -> Mail:
    if not is_mail:
        return Mail(None, None, "", "", chunk)
    first, _, rest = chunk.partition("\n")
    m = _MAIL_START.match(first)
    sha = m.group(1) if m and _SHA.fullmatch(m.group(1)) else None
    head, _, body = rest.partition("\n\n")
    fields: dict[str, str] = {}
    last = ""
    for line in head.split("\n"):
        if line[:1] in (" ", "\t") and last:
            fields[last] += " " + line.strip()
        elif ":" in line:
            last, _, value = line.partition(":")
            last = last.strip().lower()
            fields[last] = value.strip()
    subject = _TAG.sub("", _header(fields.get("subject", ""))).strip() or None
    at = _DIFF_START.search(body)
    message = body[: at.start()] if at else body
    diff = body[at.start():] if at else ""
    sig = _SIGNATURE.search(diff)
    if sig is not None:
        diff = diff[: sig.start() + 1]
    message = _text(message.split("\n---\n", 1)[0].strip())  # (the diffstat follows the '---' line)
    return Mail(sha, subject, _header(fields.get("from", "")), "\n\n".join(filter(None, [subject, message])), diff)


_SIGNATURE = re.compile(r"\n--[ ]?\n[^ +\-@\\\n][^\n]*\n*\Z")
"""The signature git format-patch ("-- ", then its version) or GitHub ("--") ends a mail with."""


def _text(value: str) -> str:
    """Mail text with bytes that are not UTF-8 shown as U+FFFD (titles are rendered and serialised)."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _header(value: str) -> str:
    """A mail header's text, RFC 2047 encoded words decoded (garbled ones kept as they are)."""
    value = _text(value)
    if "=?" not in value:  # (no encoded word: the text as it is, without importing the mail package)
        return value
    from email.header import decode_header, make_header

    try:
        return str(make_header(decode_header(value)))
    except (UnicodeError, LookupError, ValueError):
        return value


def _number(name: str, mails: Iterable[Mail], preamble: str) -> int | None:
    """The PR number a patch names, if any: its file name `N.diff`/`N.patch`, else "(#N)" ending
    a mail's subject, else a GitHub pull request URL in a message or before the first mail."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    if (m := _FILE_NUMBER.fullmatch(base)) is not None:
        return int(m.group(1))
    mails = list(mails)
    for mail in mails:
        if mail.subject and (m := _SUBJECT_NUMBER.search(mail.subject)) is not None:
            return int(m.group(1))
    for text in [preamble, *(mail.message for mail in mails)]:
        if (m := _PR_URL.search(text)) is not None:
            return int(m.group(1))
    return None


def _check_counts(diff: str, name: str) -> None:
    """Every hunk of `diff` holds as many lines as its header counts, and no body line follows
    a hunk whose counts are used up (patch would stop there and drop the rest)."""
    if plain_files(diff) is not None:
        return  # (the plain-diff reader reads only such diffs, and keeps what it read for the parse)
    lines = diff.split("\n")
    i = 0
    while i < len(lines):
        m = _HUNK.match(lines[i])
        if m is None:
            i += 1
            continue
        header_at = i + 1
        old = int(m.group(1)) if m.group(1) is not None else 1
        new = int(m.group(2)) if m.group(2) is not None else 1
        i += 1
        end = body_end(lines, i, old, new, blank_context=True)
        i = end[0] if end is not None else _walked_body(lines, i, (old, new), name, header_at)
        while i < len(lines) and lines[i].startswith("\\"):
            i += 1
        if i < len(lines) and lines[i][:1] in (" ", "+", "-") and not lines[i].startswith(("--- ", "+++ ")):
            raise InputError(Option("patch"), f" {name}: the hunk at line {header_at} of its diff holds more lines "
                             "than its header counts; fix the counts or regenerate the patch.")


def _walked_body(lines: list[str], i: int, counts: tuple[int, int], name: str, header_at: int) -> int:
    """`body_end`, line by line, raising InputError where the body is not sound."""
    old, new = counts
    while old > 0 or new > 0:
        line = lines[i] if i < len(lines) else None
        if line is None or (i == len(lines) - 1 and line == ""):
            raise InputError(Option("patch"), f" {name}: the hunk at line {header_at} of its diff is truncated "
                             f"({old} old and {new} new lines short); give the whole patch.")
        kind = line[:1]
        if kind == " " or line == "":
            old, new = old - 1, new - 1
        elif kind == "-":
            old -= 1
        elif kind == "+":
            new -= 1
        elif kind != "\\":
            raise InputError(Option("patch"), f" {name}: the hunk at line {header_at} of its diff ends before its "
                             f"counts say ({old} old and {new} new lines short); the patch is truncated "
                             "or was edited by hand.")
        if old < 0 or new < 0:
            raise InputError(Option("patch"), f" {name}: the hunk at line {header_at} of its diff holds more lines "
                             "than its header counts; fix the counts or regenerate the patch.")
        i += 1
    return i
