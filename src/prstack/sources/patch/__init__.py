"""PRs from patch files, no clone: reading diffs, mboxes, folders and quilt series (`files`),
the net hunks of a patch's mails (`compose`), the patches as a stack (`source`)."""
