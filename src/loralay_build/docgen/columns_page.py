"""The column tables of the output format: the core every layout dataset has, the columns
each source adds, the `pages` configuration and each view, from their declarations."""

from __future__ import annotations

import pyarrow as pa

from loralay_build.corpus.columns import SHARED, catalogue
from loralay_build.corpus.pages import PAGES_DOCS, PAGES_SCHEMA
from loralay_build.corpus.schema import source_columns
from loralay_build.docgen.fielddocs import field_docs
from loralay_build.errors import Reason
from loralay_build.sources import SOURCES


def arrow_type(kind: pa.DataType) -> str:
    """An Arrow type as pyarrow prints it, without the `item: ` of list children."""
    return str(kind).replace("item: ", "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(rows: list[tuple[str, str, str]]) -> list[str]:
    lines = ["| column | Arrow type | content |", "|---|---|---|"]
    lines += [f"| `{name}` | `{_cell(kind)}` | {_cell(doc)} |" for name, kind, doc in rows]
    return lines


def render() -> str:
    """The tables as Markdown."""
    optional = source_columns()
    by_name = {column.name: column for column in catalogue()}
    out = ["### Core columns", "",
           "Every layout dataset has these, in this order.", ""]
    out += _table([(c.name, arrow_type(c.type), c.doc) for c in SHARED
                   if c.name not in optional])
    out += ["", "### Columns of each source", "",
            "A source's datasets add the columns it fills after the core ones, so no "
            "dataset carries a column that is always null.", ""]
    for name, source in SOURCES.items():
        out += [f"#### `{name}`", ""]
        own = [by_name[column] for column in source.columns]
        out += _table([(c.name, arrow_type(c.type), c.doc) for c in own]) if own else [
            "No column beyond the core ones."]
        out.append("")
    out += ["### The `pages` configuration", "",
            "Written with `--page-images`; one row per rendered page.", ""]
    out += _table([(f.name, arrow_type(f.type), PAGES_DOCS[f.name]) for f in PAGES_SCHEMA])
    for name, source in SOURCES.items():
        for view in source.views:
            out += ["", f"### The `{view.name}` view of `{name}`", "",
                    f"Unique column: `{view.id_column}`.", ""]
            out += _table([(column, arrow_type(kind), doc)
                           for column, kind, doc in view.columns])
    docs = field_docs(Reason)
    out += ["", "### Reject reasons", "",
            "Every document a build drops is counted under one of these, in `rejects.jsonl` "
            "(with a detail), `build.json`, `status` and the card.", "",
            "| reason | why |", "|---|---|"]
    out += [f"| `{reason.value}` | {_cell(docs.get(reason.name, ''))} |" for reason in Reason]
    return "\n".join(out).rstrip() + "\n"
