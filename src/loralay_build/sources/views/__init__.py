"""Views made from a layout dataset's published rows, for any source: Cohan et al.'s records
(`cohan`) and SciTLDR's (`scitldr`, `scitldr-full`, OpenReview), built by `publish` after each
publish; and the writer every view shares (`write`, PubMed's too)."""
