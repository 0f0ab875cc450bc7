"""The one error root of prstack: every failure a user can cause or fix, with what to do next."""


class PrstackError(Exception):
    """A failure the user can act on; the CLI prints its message as one line and exits 2.

    Messages are complete sentences that name the problem and what to do about it.
    """


class InputError(PrstackError):
    """Bad input: an argument, a path, a PR number or a file that is not what it should be."""


class SourceError(PrstackError):
    """The PR source (a git clone, GitHub, the cache) cannot give what is needed."""


class TargetError(PrstackError):
    """The audit target (site-packages, wheel, tree, interpreter) cannot be read as asked."""
