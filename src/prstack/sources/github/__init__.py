"""PRs from GitHub: the REST API (`api`, over `http` with a `deadline`, answers checked by `payload`),
its errors, the managed cache repository fed PR heads (`fetch`, cold in few requests: `coldfetch`),
the on-disk cache, URLs from outside (`urls`) and which repository is meant (`repo_id`)."""
