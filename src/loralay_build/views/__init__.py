"""The layout of the derived views (what `corpus/` needs to write, verify and describe a view
dataset). The views themselves are built by the sources: PubMed's SumPubMed and citation
views (`sources/pubmed/`), and the views made from published rows, Cohan's and SciTLDR's
(`sources/views/`)."""
