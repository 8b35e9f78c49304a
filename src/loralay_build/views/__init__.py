"""The shard layout of the derived views (SumPubMed-style clean text, CiteBench-style
citation records): what `corpus/` needs to write, verify and describe a view dataset. The
views themselves are built by the PubMed source (`sources/pubmed/`)."""
