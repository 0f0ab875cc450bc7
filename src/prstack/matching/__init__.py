"""The matcher's parts: text normalisation, per-file line indices, the package index, hunk judging.

`prstack.matcher` is the public face; these modules are its implementation.
"""
