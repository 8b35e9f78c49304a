"""The documentation pages that are written from the code: the column tables of the output
format and the reference of every configuration key.

Why: prose that restates a declaration drifts from it; these pages are made from the
declarations themselves (`corpus.columns`, the sources' `declares` and views, the settings
dataclasses and `configs/*.toml`), and CI fails when a committed page differs from what
`python3 -m loralay_build.docgen` writes.
"""
