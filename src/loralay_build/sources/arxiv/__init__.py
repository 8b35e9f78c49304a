"""arXiv: discovery and download (`discover`), metadata records from the snapshot, OAI-PMH
or the Atom API (`meta`), and which PDF to
download: the bucket or the export host, and which version (`files`)."""

from loralay_build.sources.arxiv.discover import ArxivSource

__all__ = ["ArxivSource"]
