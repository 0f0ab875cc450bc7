"""Entry point for `python -m prstack`."""

from prstack.cli import run

raise SystemExit(run())
