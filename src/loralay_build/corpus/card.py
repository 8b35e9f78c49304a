"""The dataset card (README.md): YAML configs so `datasets.load_dataset(folder)` works."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from loralay_build.corpus.columns import catalogue
from loralay_build.corpus.pages import FEATURES as PAGE_FEATURES
from loralay_build.corpus.schema import COLUMNS_KEY, build_schema
from loralay_build.corpus.split import SPLITS
from loralay_build.licences import hub_licences, hub_other, redistributable, restricted_terms
from loralay_build.views.schema import view_layout

CARD_FILE = "README.md"

# Each source's notes for its cards (`Source.card_notes`), set by the source registry.
_SOURCE_NOTES: dict[str, str] = {}


def declare_notes(source: str, notes: str) -> None:
    """Give the cards of `source`'s datasets a "Source notes" section (empty: none)."""
    if notes:
        _SOURCE_NOTES[source] = notes


_SHARD_NUMBER = re.compile(r"-\d{5}-of-\d{5}\.parquet$")


def shard_globs(names: Iterable[str]) -> list[str]:
    """The patterns naming a split's shards: one per generation (`train-<generation>-*`), so
    the card's size does not grow with the corpus, and a shard of another generation (stale,
    or written but not yet switched to) never matches. A publication gives all of a split's
    shards one generation; a name outside the scheme stands for itself."""
    return sorted({_SHARD_NUMBER.sub("-*.parquet", name) for name in names})


def _config(name: str, files: list[dict[str, Any]]) -> list[str]:
    shards = {s: [f["name"] for f in files if f["split"] == s] for s in SPLITS}
    if not any(shards.values()):
        return []
    lines = [f"- config_name: {name}", "  data_files:"]
    for split, names in shards.items():
        if names:
            lines += [f"  - split: {split}", "    path:"] + [
                f"    - {glob}" for glob in shard_globs(names)]
    return lines


DTYPES = {"float": "float32", "double": "float64", "halffloat": "float16"}  # Arrow -> datasets


def _typed(key: str, kind: pa.DataType, indent: int) -> list[str]:
    """`key: <feature of kind>` in the YAML `datasets` reads (its own spelling)."""
    pad = " " * indent
    if pa.types.is_struct(kind):
        return [f"{pad}{key}:", *_features(list(kind), indent)]
    if pa.types.is_list(kind) or pa.types.is_fixed_size_list(kind):
        return [f"{pad}{key}:", *_body(kind, indent + 2)]
    return [f"{pad}{key}: {DTYPES.get(str(kind), str(kind))}"]


def _body(kind: pa.DataType, indent: int) -> list[str]:
    """The keys describing a value of `kind`: `dtype`, `struct` or `list` (and `length`)."""
    if pa.types.is_list(kind) or pa.types.is_fixed_size_list(kind):
        length = [f"{' ' * indent}length: {kind.list_size}"] \
            if pa.types.is_fixed_size_list(kind) else []
        return [*_typed("list", kind.value_type, indent), *length]
    return _typed("struct" if pa.types.is_struct(kind) else "dtype", kind, indent)


def _features(fields: list[pa.Field], indent: int) -> list[str]:
    lines = []
    for field in fields:
        lines += [f"{' ' * indent}- name: {field.name}", *_body(field.type, indent + 2)]
    return lines


def data_files(files: list[dict[str, Any]], pages: dict[str, Any] | None = None,
               schema: pa.Schema | None = None) -> list[str]:
    """YAML `configs` naming the shards of this build by the patterns of their generation
    (`shard_globs`): while a new build is published beside this one, `datasets.load_dataset`
    still reads exactly this set. Empty
    splits are left out, since `datasets` cannot load a split without rows. The features of
    the rows' `schema`, so `datasets` types each column as declared instead of inferring it
    (a card of a build before per-dataset schemas declares none). With page images, a second
    configuration, `pages`, and its features (`image` decodes as an image)."""
    default = _config("default", files)
    if not default:  # no rows: no file listed, so loading fails instead of reading build.json
        return ["configs:", "- config_name: default", "  data_files: []"]
    lines = ["configs:", *default]
    info = []
    if schema is not None:
        info += ["- config_name: default", "  features:", *_features(list(schema), 2)]
    if pages and pages["files"]:
        lines += _config("pages", pages["files"])
        info += ["- config_name: pages", "  features:"]
        for name, dtype in PAGE_FEATURES:
            info += [f"  - name: {name}", f"    dtype: {dtype}"]
        info += ["  - name: masked_boxes", "    sequence:", "      sequence: int32"]
    return [*lines, "dataset_info:", *info] if info else lines


def card_schema(build: dict[str, Any]) -> pa.Schema | None:
    """The schema whose features the card of `build` declares, a layout dataset's or a
    derived view's: none for a build whose record names no columns (made before cards
    declared features)."""
    if COLUMNS_KEY not in build:
        return None
    if not build.get("view"):
        return build_schema(build)
    layout = view_layout(str(build["view"]))
    return None if layout is None else layout[0]


def _pages_section(pages: dict[str, Any] | None) -> list[str]:
    if not pages:
        return []
    lines = ["", "## Page images", "",
             f"`load_dataset(folder, \"pages\")`: one row per page (`article_id`, `page`, "
             f"`image`, `width_px`, `height_px`, `dpi`, `masked_boxes`), rendered by PDFium at "
             f"{pages['dpi']} dpi as {pages['format']}. Join with the text rows on "
             "(`article_id`, `page`), `page` being the index `word_pages` holds. A box of "
             "`article_bboxes` (points, top-left origin, page rotation applied) is at "
             f"`box * {pages['dpi']} / 72` in the image's pixels.", "", _colour_note(pages),
             ""]
    if pages["masked"]:
        lines.append("Every word removed from the text (the abstracts, and running headers, "
                     "cover pages and stamps the cleaners dropped) is painted over with the "
                     "page's background; `masked_boxes` lists the painted pixel boxes.")
    else:
        lines.append("**Warning:** built with `--no-mask`: the removed abstracts are still "
                     "printed on the pages, so an image model can read the summary.")
    skipped = pages.get("documents_without_images", [])
    if skipped:
        lines += ["", f"{len(skipped)} document(s) have no images (a page over the pixel or "
                  "time budget); their text rows are published."]
    return lines


def _colour_note(pages: dict[str, Any]) -> str:
    """How colour and gray pages are stored (older build records name neither)."""
    color, levels = pages.get("color", "rgb"), pages.get("gray_levels")
    stored = (f"reduced to {levels} gray levels and stored losslessly" if levels
              else "encoded like colour pages")
    if color == "gray":
        return f"Every page is rendered in gray (equal channels), {stored}."
    if color == "auto":
        return (f"Pages without any colour are stored in gray (equal channels), {stored}; "
                "the others in RGB.")
    return "Every page is stored in RGB."


def _licence_yaml(build: dict[str, Any]) -> list[str]:
    """The YAML `license` list: the Hub's ids of the licences present (`unknown` for a build
    without any), and for those outside the Hub's list `other` with the `license_name` and
    `license_link` the Hub's card spec asks for."""
    present = build.get("licences", {})
    lines = ["license:"] + [f"- {hub}" for hub in hub_licences(present) or ["unknown"]]
    other = hub_other(present)
    if other:
        lines += [f"license_name: {other[0]}", f"license_link: {other[1]}"]
    return lines


def _licence_section(build: dict[str, Any], unit: str) -> list[str]:
    """Documents per licence and split, and a warning when some may not be redistributed."""
    licences: dict[str, dict[str, int]] = build.get("licences", {})
    lines = ["", "## Licence", "",
             "`licence` holds each row's SPDX id (`LicenseRef-…` where SPDX has none, "
             "`NOASSERTION` where the source states nothing); `licence_source` keeps the "
             "source's own spelling.", "",
             f"| licence | {' | '.join(SPLITS)} | redistributable |", "|---|---|---|---|---|"]
    for spdx, per_split in sorted(licences.items()):
        counts = " | ".join(str(per_split.get(s, 0)) for s in SPLITS)
        lines.append(f"| `{spdx}` | {counts} | {'yes' if redistributable(spdx) else 'no'} |")
    restricted = sum(n for spdx, per in licences.items() if not redistributable(spdx)
                     for n in per.values())
    if restricted:
        kinds = ", ".join(["non-commercial", "no-derivatives", *restricted_terms()])
        lines += ["", f"**Warning:** {restricted} {unit} carry a licence that does not let a "
                  f"third party redistribute the text freely ({kinds}, or unknown). Check each "
                  "row's `licence` before publishing this dataset; `--licences "
                  "redistributable` builds one without them."]
    removed = build.get("counts", {}).get("removed", 0)
    if removed:
        lines += ["", f"{removed} document(s) were taken down (`build-corpus remove`) and are "
                  "not published."]
    return [*lines, ""]


MAX_SHARED_LISTED = 50


def _shared_works(dedup: dict[str, Any] | None) -> list[str]:
    """Works this dataset shares with others of its folder (corpus.contamination)."""
    if not dedup:
        return []
    shared = dedup["shared_works"]
    policy = {"report": "listed only", "guard": "train copies of works in another "
              "dataset's validation or test are dropped", "drop": "one copy per work is kept"}
    lines = ["", "## Shared works", "",
             f"Documents that are one work with a document of another dataset (or another id of "
             f"this one): estimated Jaccard of the bodies' word {dedup['minhash']['shingle_words']}"
             f"-grams at least {dedup['threshold']}, or equal titles with similar abstracts. "
             f"Policy `{dedup['across']}`: {policy[dedup['across']]}. "
             f"{len(shared)} shared work(s); `build-corpus audit` lists them for the folder.", ""]
    lines += [f"- {', '.join(w['members'])} ({w['similarity']})"
              for w in shared[:MAX_SHARED_LISTED]]
    if len(shared) > MAX_SHARED_LISTED:
        lines.append(f"- … {len(shared) - MAX_SHARED_LISTED} more in build.json")
    if dedup.get("exclude"):
        lines += ["", f"{dedup['exclude']} id(s) of published test sets are kept out "
                  "(`excluded` in `rejects.jsonl`)."]
    return lines


def with_data_files(card: str, files: list[dict[str, Any]], build: dict[str, Any]) -> str:
    """`card` with its YAML configs naming `files` (and the pages of `build`) instead; the
    rest of the text is kept."""
    lines = card.split("\n")
    end = 1
    yaml_keys = ("configs:", "dataset_info:", "- config_name", "  ")
    while end < len(lines) and lines[end].startswith(yaml_keys):
        end += 1
    return "\n".join([lines[0], *data_files(files, build.get("pages"), card_schema(build)),
                      *lines[end:]])


def render_card(dataset: str, build: dict[str, Any]) -> str:
    """Card text generated from the schema and the build record."""
    splits = build["counts"]["splits"]
    languages = sorted(build.get("languages", [])) or ["multilingual"]
    lines = ["---", *data_files(build["files"], build.get("pages"), card_schema(build))]
    lines += ["language:"] + [f"- {lang}" for lang in languages]
    lines += [
        "task_categories:", "- summarization", *_licence_yaml(build),
        "pretty_name: " + dataset, "---", "", f"# {dataset}", "",
        "Long-document summarization corpus with the layout of every word, built by "
        "`loralay-build`. Each row is one document: its body words with boxes and page "
        "indices, the abstract as the summary, and every abstract of the record removed "
        "from the body.", "",
        "## Splits", "", "| split | documents |", "|---|---|",
    ]
    lines += [f"| {s} | {splits.get(s, 0)} |" for s in SPLITS]
    empty = [s for s in SPLITS if not splits.get(s, 0)]
    if len(empty) == len(SPLITS):
        lines += ["", "No document is published (see the dropped documents below): the card "
                  "lists no data file, so `datasets.load_dataset` refuses this folder."]
    elif empty:
        lines += ["", f"Empty, so not published: {', '.join(empty)} (too few documents)."]
    ratios = build["split_ratios"]
    lines += [
        "",
        "Chronological by `published`: the first build sends the newest documents to test, "
        "the next newest to validation and the rest to train "
        f"({ratios['train']:.0%} / {ratios['validation']:.0%} / {ratios['test']:.0%}). "
        "Assignments are stored and never change; later builds top validation and test up "
        "to their share with the newest new documents, so no document ever moves from "
        "validation or test into train. Documents without a date count as oldest. "
        "Documents still waiting for a download hold their place by date, so a partial "
        "build gives validation and test only to documents a complete build would.",
        "", "## Filters", "",
    ]
    if build.get("source") in _SOURCE_NOTES:
        lines[-3:-3] = ["", "## Source notes", "", _SOURCE_NOTES[build["source"]]]
    thresholds = build["thresholds"]
    if thresholds.get("filters_enabled") and thresholds.get("percentiles_applied") is False:
        lines += [f"The percentile filters were not applied: the corpus holds fewer than "
                  f"{thresholds.get('min_documents')} documents, too few for percentiles to "
                  "mean anything, so only the absolute limits (such as the parser's page "
                  "limit) apply.", ""]
    lines += [f"- `{k}`: {v}" for k, v in sorted(thresholds.items())]
    lines += ["", "Dropped documents, by reason (see `rejects.jsonl`):", ""]
    rejects = build["counts"]["rejects"]
    lines += [f"- `{k}`: {v}" for k, v in sorted(rejects.items())] or ["- none"]
    clusters = build.get("duplicate_clusters")
    lines += [] if clusters is None else [
        "", "## Duplicates", "",
        f"{len(clusters)} cluster(s) of near-duplicate documents (identical PDF, or equal "
        "normalised title with similar abstract; see `duplicate_clusters` in build.json). "
        "Each cluster is one work: only its representative, the earliest member (by venue "
        "year when known, date, then id), is published; the others are dropped as `duplicate`. "
        "A member published by an earlier build stays the representative, in its split: a "
        "copy found later is the duplicate.",
    ]
    lines += _shared_works(build.get("dedup"))
    lines += _pages_section(build.get("pages"))
    lines += ["", "## Columns", "", "| column | type | content |", "|---|---|---|"]
    docs = {column.name: column.doc for column in catalogue()}
    for field in build_schema(build):
        lines.append(f"| `{field.name}` | `{field.type}` | {docs[field.name]} |")
    lines += _licence_section(build, "documents")
    return "\n".join(lines)


def render_view_card(dataset: str, summary: str, columns: list[tuple[str, str, str]],
                     build: dict[str, Any]) -> str:
    """Card of a derived view: the same YAML configs, the view's own columns and counts."""
    splits = build["counts"]["splits"]
    lines = ["---", *data_files(build["files"], None, card_schema(build))]
    languages = sorted(build.get("languages", [])) or ["en"]  # PubMed's views: English
    lines += ["language:", *(f"- {lang}" for lang in languages), "task_categories:",
              "- summarization",
              *_licence_yaml(build), "pretty_name: " + dataset, "---", "", f"# {dataset}", "",
              summary, "",
              "## Splits", "", "| split | rows |", "|---|---|"]
    lines += [f"| {s} | {splits.get(s, 0)} |" for s in SPLITS]
    lines += ["", "Each article keeps the split it has in the layout dataset "
              f"`{build['layout_dataset']}`, so all views of one article share a split.", "",
              "## Counts", ""]
    lines += [f"- `{k}`: {v}" for k, v in sorted(build["counts"].items()) if k != "splits"]
    lines += ["", "## Options", ""]
    lines += [f"- `{k}`: {v}" for k, v in sorted(build["options"].items())]
    lines += ["", "## Columns", "", "| column | type | content |", "|---|---|---|"]
    lines += [f"| `{name}` | `{kind}` | {doc} |" for name, kind, doc in columns]
    lines += _licence_section(build, "rows")
    return "\n".join(lines)
