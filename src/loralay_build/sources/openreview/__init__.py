"""OpenReview: discovery by venue and the slow PDF queue (`discover`), and its notes
(API v1 and v2) read as candidates (`notes`)."""

from loralay_build.sources.openreview.discover import OpenReviewSource

__all__ = ["OpenReviewSource"]
