"""The commands of the local cache: fetch (fill it for --offline), cache info, cache clear."""

from __future__ import annotations

import sys

import typer

from prstack.cli.support import (
    console,
    parse_prs,
    progress_shown,
)
from prstack.cli.surface import NO_FINDING_EXIT, ApiUrlOpt, PrsArg, RepoOpt, app, examples


@app.command(epilog=examples("prstack fetch 40898 --repo vllm-project/vllm",
                              "prstack fetch https://github.com/vllm-project/vllm/pull/40898")
             + "\n\n" + NO_FINDING_EXIT.format(ok="cached"))
def fetch(prs: PrsArg, repo: RepoOpt = None, api_url: ApiUrlOpt = None) -> None:
    """Fill the local cache for a stack so later runs work with --offline."""
    from prstack.render.text import clean
    from prstack.sources.git.prs import ClonePRs
    from prstack.sources.github.access import Access
    from prstack.sources.github.cache import Cache
    from prstack.sources.open import open_clone

    numbers, repo = parse_prs(prs, repo)
    out = console()
    with progress_shown():
        source = open_clone(numbers, repo=repo, access=Access(api_url))
        # reads every blob an audit needs, fetching it once (the stack as the clone alone tells it)
        changes = ClonePRs(source.git, numbers).load().finish()
    for pr in changes.prs:
        meta = source.meta.get(pr.number)
        title = clean(meta.title) if meta else ""
        line = f"#{pr.number}  {pr.head_sha[:12]}  {len(pr.commits)} commits  {title}"
        out.print(line.rstrip(), markup=False, highlight=False, soft_wrap=True, emoji=False)
    out.print(f"cached under {Cache().root}", markup=False, highlight=False, soft_wrap=True)


cache_app = typer.Typer(help="What the local cache holds (info); emptying it (clear).",
                        epilog=examples("prstack cache info", "prstack cache clear"),
                        context_settings={"help_option_names": ["-h", "--help"]})


app.add_typer(cache_app, name="cache")


@cache_app.command("info", epilog=examples("prstack cache info"))
def cache_info() -> None:
    """Where the cache is and what it holds."""
    from prstack.sources.github.cache import Cache

    info = Cache().info()
    lines = [f"cache: {info.root}", f"metadata entries: {info.entries}",
             f"git repositories: {len(info.repos)}", *(f"  {name}" for name in info.repos),
             f"size: {info.size / 1e6:.1f} MB"]
    sys.stdout.write("\n".join(lines) + "\n")


@cache_app.command("clear", epilog=examples("prstack cache clear"))
def cache_clear() -> None:
    """Remove everything prstack cached (metadata and git repositories)."""
    from prstack.sources.github.cache import Cache

    info = Cache().clear()
    sys.stdout.write(f"removed {info.entries} metadata entries and {len(info.repos)} git repositories "
                     f"from {info.root}\n")
