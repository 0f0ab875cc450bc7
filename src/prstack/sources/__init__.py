"""Where PRs come from, each behind the PR-source interface (`base`): a git clone (`git`), GitHub
with its cache feeding a clone (`github`), patch files (`patch`); `open` opens the clone an audit reads."""
