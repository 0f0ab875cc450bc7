"""Matching hunks against a target: `file` judges one file's hunks (pure), `jobs` runs them per
PR and file; the rest are its parts (text normalisation, line indices, the package index, judging)."""
