"""`build-corpus inspect`: draw a document's pages with what the build did to each word."""
