"""The one error root of prstack: every failure a user can cause or fix, with what to do next.

A message names the inputs it is about as `Option` parts, never as a command line's flags: the
command line words each as its flag (`--wheel`), `str()` as the library's name for it (`wheel`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Option:
    """An input of prstack named in a message, by the name the library gives it (`site_packages`)."""

    name: str


Part = str | Option
"""A piece of a message: text, or an input named."""


def in_python(option: Option) -> str:
    """How a message names an input for a Python caller: `site_packages`."""
    return f"`{option.name}`"


class PrstackError(Exception):
    """A failure the user can act on; the CLI prints its message as one line and exits 2.

    Messages are complete sentences that name the problem and what to do about it."""

    def __init__(self, *parts: Part) -> None:
        super().__init__(*parts)
        self.parts: tuple[Part, ...] = parts

    def worded(self, name_of: Callable[[Option], str] = in_python) -> str:
        """The message with each input named by `name_of`."""
        return "".join(p if isinstance(p, str) else name_of(p) for p in self.parts)

    def __str__(self) -> str:
        return self.worded()


class InputError(PrstackError):
    """Bad input: an argument, a path, a PR number or a file that is not what it should be."""


class SourceError(PrstackError):
    """The PR source (a git clone, GitHub, the cache) cannot give what is needed."""


class TargetError(PrstackError):
    """The audit target (site-packages, wheel, tree, interpreter) cannot be read as asked."""
