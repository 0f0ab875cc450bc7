"""PRs from a local git clone: the clone (`repo`, its PR refs `prrefs`, git run once by `runner`),
git in bulk (`blobs`, `diffs`, `bigdiff`, `patchids`), history (`history`), stack detection from
the clone (`pr_facts`, `detect`), each PR's change (`changes`, where a branch merged the default
branch: `resolved_merge`), blobs the clone lacks (`missing`), the clone's PRs as a PR source
(`prs`) and the merges a plan needs (`merges`)."""
