"""SciELO: discovery through ArticleMeta and download (`discover`), discovery through the
collection websites (`site`), and the ids, dates and abstracts both read alike (`text`)."""

from loralay_build.sources.scielo.discover import SciELOSource

__all__ = ["SciELOSource"]
