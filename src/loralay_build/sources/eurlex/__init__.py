"""EUR-Lex-Sum through Cellar: discovery and download (`discover`), Cellar content
negotiation and its WAF guard (`cellar`), acts and summaries as text (`text`), and the
summary-to-act links that keep linked acts in one split (`links`)."""

from loralay_build.sources.eurlex.discover import EurlexSource

__all__ = ["EurlexSource"]
