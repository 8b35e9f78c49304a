"""Source modules, by name."""

from __future__ import annotations

from loralay_build.errors import ConfigError
from loralay_build.sources.arxiv import ArxivSource
from loralay_build.sources.base import Source
from loralay_build.sources.eurlex import EurlexSource
from loralay_build.sources.hal import HalSource
from loralay_build.sources.koreascience import KoreaScienceSource
from loralay_build.sources.local import LocalSource
from loralay_build.sources.openreview import OpenReviewSource
from loralay_build.sources.pubmed import PubmedSource
from loralay_build.sources.scielo import SciELOSource

SOURCES: dict[str, type[Source]] = {"hal": HalSource, "local": LocalSource}
SOURCES["scielo"] = SciELOSource
SOURCES["koreascience"] = KoreaScienceSource
SOURCES["arxiv"] = ArxivSource
SOURCES["pubmed"] = PubmedSource
SOURCES["openreview"] = OpenReviewSource
SOURCES["eurlex"] = EurlexSource


def get_source(name: str) -> Source:
    try:
        return SOURCES[name]()
    except KeyError:
        raise ConfigError(f"unknown source {name!r}; known: {', '.join(sorted(SOURCES))}") from None
