"""Entry point for `python -m prstack`."""

from prstack.cli import main

raise SystemExit(main())
