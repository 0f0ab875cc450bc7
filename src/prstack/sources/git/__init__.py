"""PRs from a local git clone: the repository (`repo`), git in bulk (`batch`, `bigdiff`), history
and patch ids, stack detection from the clone (`reader`, `detect`), each PR's change (`changes`)
and the merges a plan needs (`plan`)."""
