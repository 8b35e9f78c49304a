"""loralay_build: reproducible builders for layout-aware long-document summarization corpora."""

__version__ = "0.1.0"
