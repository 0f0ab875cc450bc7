"""Where PRs come from: a local git clone (GitHub and the cache build on it)."""
