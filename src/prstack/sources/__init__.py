"""Where PRs come from: a git clone (`git`), GitHub with its cache (`github`); `open` picks one."""
