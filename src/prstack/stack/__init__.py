"""The stack, pure: the PR and commit graphs (`graph`) and the stack markers of PR bodies and
commit messages (`markers`). Reading a clone for the facts is `prstack.sources.git`'s job."""
