"""A one-line change in a method whose class a target lacks, where another class of the same
shape holds the changed line as the hunk leaves it: that is the place of a like change, never
this hunk's (an old release without the class the PR changed)."""

from __future__ import annotations

from helpers.matcher import judge
from prstack.models import HunkStatus

HEADER = "import logging\n\nlogger = logging.getLogger(__name__)\n\n\n"
OLD_CALL = "self.run.log(values, **kwargs)"
NEW_CALL = "self.run.log(values, step=step, **kwargs)"


def tracker(name: str, call: str, decorated: bool = True) -> str:
    """A tracker class whose `log` docstring, call and logger line name its library."""
    lib = name.lower()
    deco = "    @on_main_process\n" if decorated else ""
    return f'''class {name}Tracker(GeneralTracker):
    name = "{lib}"

    def __init__(self, run_name: str, **kwargs):
        super().__init__()
        self.run_name = run_name
        self.run = {lib}.init(project=run_name, **kwargs)

{deco}    def log(self, values: dict, step=None, **kwargs):
        """
        Logs `values` to the current run.

        Args:
            values (`dict`):
                Values to be logged as key-value pairs.
            kwargs:
                Additional key word arguments passed along to the `{lib}.log` method.
        """
        {call}
        logger.debug("Successfully logged to {name}")

{deco}    def finish(self):
        """
        Closes `{lib}` writer
        """
        self.run.finish()


'''


BELOW = HEADER + tracker("WandB", NEW_CALL) + "".join(tracker(n, "self.writer.add(values)") for n in ("Comet", "Aim"))
BASE = BELOW + tracker("Trackio", OLD_CALL)
HEAD = BELOW + tracker("Trackio", NEW_CALL)


def test_the_changed_line_in_another_class_of_the_same_shape_is_not_the_change() -> None:
    """The release has no Trackio class; where its log method would sit, a Neptune class holds
    the new call: the hunk's context around it names another library."""
    release = BELOW + tracker("Neptune", NEW_CALL, decorated=False)
    (result,) = judge(BASE, HEAD, release, with_sides=True)
    assert result.status is HunkStatus.DIVERGED
    assert "the place of a like change" in (result.evidence.note or "")


def test_the_change_in_its_own_class_is_applied_and_its_absence_missing() -> None:
    assert [r.status for r in judge(BASE, HEAD, HEAD, with_sides=True)] == [HunkStatus.APPLIED]
    assert [r.status for r in judge(BASE, HEAD, BASE, with_sides=True)] == [HunkStatus.MISSING]
    moved = HEAD.replace("    name = \"trackio\"\n", "    name = \"trackio\"\n    version = 2\n    retries = 3\n")
    assert [r.status for r in judge(BASE, HEAD, moved, with_sides=True)] == [HunkStatus.APPLIED]
