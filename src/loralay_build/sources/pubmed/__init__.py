"""PubMed Central: discovery and download (`discover`), then the SumPubMed and citation
views built from the published articles' full texts (`publish_views`): the JATS body read
by `body`, cut by `sentences`, made into the views' rows by `cleantext` and `citations`,
the cited abstracts found by `resolve`."""

from __future__ import annotations

from loralay_build.sources.base import PublishedDataset
from loralay_build.sources.pubmed import discover
from loralay_build.sources.pubmed.view_schema import VIEWS
from loralay_build.views.schema import ViewLayout


class PubmedSource(discover.PubmedSource):
    """The PubMed source: its views follow each publish of the layout dataset."""

    views: tuple[ViewLayout, ...] = VIEWS

    def after_publish(self, ctx: PublishedDataset) -> None:
        # Imported here: only a PubMed build's parent runs it, after its publish.
        from loralay_build.sources.pubmed.publish_views import publish_views

        publish_views(ctx, self.name)
