"""The discovery stage: the source's candidates stored in the state, new and changed ones
counted, and (for a source listing its whole input) the ones no longer listed marked gone."""

from __future__ import annotations

from loralay_build.identity import identity_of
from loralay_build.progress import batch_progress
from loralay_build.run.context import BuildContext, log
from loralay_build.sources.base import DiscoveryContext, limited


def discover(ctx: BuildContext) -> None:
    req, stats = ctx.request, ctx.stats.discover
    dctx = DiscoveryContext(
        client=ctx.client,
        config=ctx.settings.source,
        state=ctx.state,
        dataset=ctx.dataset,
        since=req.since,
        failures=stats.failures,
        listed=req.listed,
    )
    batches = limited(ctx.source.discover(dctx), req.limit)
    listed: set[str] = set()
    identity = identity_of(ctx.source)
    with dctx.isolated(req.source):
        for batch in batch_progress(batches, "discover"):
            # A crawl feeding several datasets (SciELO) yields the others' candidates too:
            # they are stored for those datasets' builds, and counted apart.
            own = [c for c in batch if c.dataset == ctx.dataset]
            listed.update(c.id for c in own)
            others = [c for c in batch if c.dataset != ctx.dataset]
            for other in {c.dataset for c in others}:
                ctx.state.claim(other, req.source)
            found = ctx.state.upsert(own, identity)
            stats.batches += 1
            stats.discovered += len(own)
            stats.new += found.new
            stats.changed += found.changed
            stats.moved += found.moved
            if others:
                ctx.state.upsert(others, identity)
                stats.other_datasets += len(others)
    # A source that lists its whole input every run (a `local` manifest): what it no
    # longer lists leaves the dataset at this publish, and comes back if listed again.
    whole = getattr(ctx.source, "lists_whole_input", False)
    if whole and req.limit is None and not stats.failures:
        stats.gone = ctx.state.mark_gone(ctx.dataset, listed)
    log.info("discovery: %(discovered)d seen, %(new)d new, %(changed)d changed, %(moved)d "
             "moved (%(discovered_other_datasets)d more for other datasets)",
             {"discovered": stats.discovered, "new": stats.new, "changed": stats.changed,
              "moved": stats.moved, "discovered_other_datasets": stats.other_datasets})
