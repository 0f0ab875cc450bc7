"""Pure: where a repository file lands in a distribution (`paths`) and which distribution the PRs'
files are in (`choose`)."""
