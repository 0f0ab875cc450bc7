"""The stack, pure: the PR graph (`graph`), what is known of each PR and why one builds on another
(`facts`), PRs that copy another's commits (`copies`) and the stack markers of PR bodies and commit
messages (`markers`). Reading a clone for the facts is `prstack.sources.git`'s job."""
