"""Matching hunks against a target, pure: `changes` judges every hunk of a PR source's changes,
`jobs` runs them per PR and file, `file` judges one file's hunks, `judge` one hunk; the rest are
their parts (text normalisation, line indices, the package index, the stack composed, moves explained)."""
