"""PubMed Central: discovery and download (`discover`), then the SumPubMed and citation
views built from the published articles' full texts (`publish_views`): the JATS body read
by `body`, cut by `sentences`, made into the views' rows by `cleantext` and `citations`,
the cited abstracts found by `resolve`."""

from __future__ import annotations

from loralay_build.sources.base import PublishedDataset
from loralay_build.sources.pubmed import discover
from loralay_build.sources.pubmed.publish_views import publish_views


class PubmedSource(discover.PubmedSource):
    """The PubMed source: its views follow each publish of the layout dataset."""

    def after_publish(self, ctx: PublishedDataset) -> None:
        publish_views(ctx, self.name)
