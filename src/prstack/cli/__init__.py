"""The prstack command line: parse, build the parts, run, render, exit. The only place that prints."""

from prstack.cli.app import main, run

__all__ = ["main", "run"]
