"""Derived views of the PubMed crawl, built from each article's full JATS: clean text by
section (SumPubMed-style) and citation records (CiteBench-style)."""
