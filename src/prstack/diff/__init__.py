"""Diff text: unified diffs parsed into hunks (`hunks`), and which commit last wrote each line (`lineage`)."""
