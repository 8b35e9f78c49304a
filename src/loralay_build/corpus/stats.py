"""Corpus statistics of a published dataset (the figures of the LoRaLay paper's tables)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from loralay_build.corpus.filters import percentile
from loralay_build.corpus.folder import read_build
from loralay_build.corpus.split import SPLITS
from loralay_build.licences import redistributable
from loralay_build.structure.roles import ROLE_NAMES


def _lengths(values: list[int]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "median": 0.0, "p90": 0.0}
    return {
        "mean": statistics.fmean(values),
        "median": float(statistics.median(values)),
        "p90": percentile(values, 90),
    }


def _year(published: str | None) -> int | None:
    head = (published or "")[:4]
    return int(head) if head.isdigit() else None


# The columns statistics read. `word_pages` stands for `article_words`: it has one entry per
# word (an invariant `verify` checks) and is far smaller to read than the words themselves.
STATS_COLUMNS = ["word_pages", "abstract", "lang_confidence", "page_sizes", "published"]


def _origin_pages(shard: pq.ParquetFile, group: int,
                  rows: int) -> tuple[list[int], list[int]]:
    """Pages read by OCR, and pages left without text, in each row of a row group (0 for
    shards older than the column)."""
    if "page_text_origin" not in shard.schema_arrow.names:
        return [0] * rows, [0] * rows
    column = shard.read_row_group(group, columns=["page_text_origin"]).column(0).combine_chunks()
    flat = pc.list_flatten(column)
    owners = pc.list_parent_indices(column).to_numpy()
    counts: list[list[int]] = [
        np.bincount(owners[pc.equal(flat, origin).to_numpy(zero_copy_only=False)],
                    minlength=rows).tolist()
        for origin in ("ocr", "none")]
    return counts[0], counts[1]


def _list_lengths(column: pa.ChunkedArray) -> list[int]:
    lengths: list[int] = pc.fill_null(pc.list_value_length(column), 0).to_pylist()
    return lengths


def _structure(shard: pq.ParquetFile, group: int, rows: int) -> tuple[list[int], list[list[int]]]:
    """Per row of a row group: its titled sections (headings), and its words per role code
    (none for shards older than the columns)."""
    names = shard.schema_arrow.names
    if "sections" not in names or "word_roles" not in names:
        return [0] * rows, [[0] * len(ROLE_NAMES) for _ in range(rows)]
    table = shard.read_row_group(group, columns=["sections", "word_roles"])
    sections = table.column("sections").combine_chunks()
    titled = pc.is_valid(pc.struct_field(pc.list_flatten(sections), "title")).to_numpy(
        zero_copy_only=False)
    owners = pc.list_parent_indices(sections).to_numpy()
    headings: list[int] = np.bincount(owners[titled], minlength=rows).tolist()
    roles = table.column("word_roles").combine_chunks()
    codes = pc.list_flatten(roles).to_numpy(zero_copy_only=False).astype(np.int64)
    cells = pc.list_parent_indices(roles).to_numpy() * len(ROLE_NAMES) + codes
    counts = np.bincount(cells, minlength=rows * len(ROLE_NAMES)).reshape(rows, -1)
    return headings, counts.tolist()


def role_shares(role_words: list[list[int]]) -> dict[str, float]:
    """Share of the words of every document in each role (`structure.roles`), by name."""
    totals = np.sum(np.asarray(role_words, dtype=np.int64).reshape(-1, len(ROLE_NAMES)), axis=0)
    words = int(totals.sum())
    return {name: float(totals[code]) / words if words else 0.0
            for code, name in ROLE_NAMES.items()}


def split_values(folder: Path) -> dict[str, dict[str, list[Any]]]:
    """Per split, one value per document: article and summary words, pages, CLD2 confidence,
    year of publication (None when unknown), titled sections, words per role.

    Read one row group at a time and only the small columns, so memory follows the number of
    documents (a few numbers each), not the size of the shards.
    """
    out: dict[str, dict[str, list[Any]]] = {}
    for split in SPLITS:
        files = sorted(folder.glob(f"{split}-*-of-*.parquet"))
        if not files:
            continue
        values: dict[str, list[Any]] = {key: [] for key in (
            "article_words", "summary_words", "pages", "lang_confidence", "year", "ocr_pages",
            "textless_pages", "sections", "role_words")}
        for path in files:
            with pq.ParquetFile(path) as shard:
                for group in range(shard.num_row_groups):
                    table = shard.read_row_group(group, columns=STATS_COLUMNS)
                    values["article_words"] += _list_lengths(table.column("word_pages"))
                    values["summary_words"] += [len((t or "").split())
                                                for t in table.column("abstract").to_pylist()]
                    values["pages"] += _list_lengths(table.column("page_sizes"))
                    values["lang_confidence"] += table.column("lang_confidence").to_pylist()
                    values["year"] += [_year(p) for p in table.column("published").to_pylist()]
                    ocr, textless = _origin_pages(shard, group, table.num_rows)
                    values["ocr_pages"] += ocr
                    values["textless_pages"] += textless
                    sections, role_words = _structure(shard, group, table.num_rows)
                    values["sections"] += sections
                    values["role_words"] += role_words
        out[split] = values
    return out


def view_stats(folder: Path, build: dict[str, Any]) -> dict[str, Any]:
    """What applies to a derived view (PubMed `sumpubmed`, `citations`): its rows per split
    and its own counts; it has no layout, pages or article words."""
    counts = dict(build.get("counts", {}))
    rows = counts.pop("splits", {})
    return {"dataset": folder.name, "view": str(build["view"]),
            "layout_dataset": build.get("layout_dataset"),
            "splits": {s: {"rows": rows[s]} for s in SPLITS if rows.get(s)},
            "counts": counts}


def corpus_stats(folder: Path,
                 values: dict[str, dict[str, list[Any]]] | None = None) -> dict[str, Any]:
    """Per split: documents, pages, article/summary lengths (whitespace tokens), compression
    ratio (mean article length over mean summary length), mean CLD2 confidence."""
    build = read_build(folder)
    if build.get("view"):
        return view_stats(folder, build)
    out: dict[str, Any] = {"dataset": folder.name, "splits": {}}
    for split, columns in (split_values(folder) if values is None else values).items():
        article, summary = _lengths(columns["article_words"]), _lengths(columns["summary_words"])
        confidence = columns["lang_confidence"]
        out["splits"][split] = {
            "documents": len(columns["article_words"]),
            "pages": _lengths(columns["pages"]),
            "article_words": article,
            "summary_words": summary,
            "compression": article["mean"] / summary["mean"] if summary["mean"] else 0.0,
            "lang_confidence_mean": statistics.fmean(confidence) if confidence else 0.0,
            "ocr": {"documents": sum(1 for n in columns["ocr_pages"] if n),
                    "pages": sum(columns["ocr_pages"])},
            "without_text": {"documents": sum(1 for n in columns["textless_pages"] if n),
                             "pages": sum(columns["textless_pages"])},
            "sections": _lengths(columns["sections"]),
            "role_share": role_shares(columns["role_words"]),
        }
    if build:
        out["leakage"] = build.get("leakage", {})
        out["rejects"] = build.get("counts", {}).get("rejects", {})
        out["licences"] = build.get("licences", {})
    return out


def format_stats(stats: dict[str, Any]) -> str:
    if "view" in stats:
        return _format_view(stats)
    lines = [f"dataset {stats['dataset']}", "",
             f"{'split':<11}{'docs':>7}  {'article words mean/median/p90':>30}"
             f"  {'summary words mean/median/p90':>30}  {'pages':>6}  {'compr.':>6}"
             f"  {'langid conf':>11}"]
    for split, info in stats["splits"].items():
        art, summ = info["article_words"], info["summary_words"]
        lines.append(
            f"{split:<11}{info['documents']:>7}  "
            f"{art['mean']:>10.0f}{art['median']:>10.0f}{art['p90']:>10.0f}  "
            f"{summ['mean']:>10.0f}{summ['median']:>10.0f}{summ['p90']:>10.0f}  "
            f"{info['pages']['mean']:>6.1f}  {info['compression']:>6.1f}  "
            f"{info['lang_confidence_mean']:>11.3f}"
        )
    read = {split: info["ocr"] for split, info in stats["splits"].items()
            if info.get("ocr", {}).get("documents")}
    if read:
        lines += ["", "pages read by OCR (scans, broken fonts):"]
        lines += [f"  {split}: {n['pages']} pages in {n['documents']} documents"
                  for split, n in read.items()]
    textless = {split: info["without_text"] for split, info in stats["splits"].items()
                if info.get("without_text", {}).get("documents")}
    if textless:
        lines += ["", "pages without text (left for --ocr: covers, plates, scanned pages):"]
        lines += [f"  {split}: {n['pages']} pages in {n['documents']} documents"
                  for split, n in textless.items()]
    lines += ["", "structure: titled sections per document (mean/median/p90); share of "
              "words per role"]
    for split, info in stats["splits"].items():
        shares = ", ".join(f"{name} {share:.1%}" for name, share in info["role_share"].items()
                           if share)
        sections = info["sections"]
        lines.append(f"  {split}: {sections['mean']:.1f} / {sections['median']:.0f} / "
                     f"{sections['p90']:.0f} sections; {shares or 'no word roles'}")
    if stats.get("leakage"):
        lines += ["", "residual abstract leakage (share of abstract 5-grams left in the body):"]
        lines += [f"  {k}: {v:.4g}" for k, v in stats["leakage"].items()]
    if stats.get("rejects"):
        lines += ["", "rejects:"] + [f"  {k}: {v}" for k, v in stats["rejects"].items()]
    if stats.get("licences"):
        lines += ["", "licences (documents per split; * = redistributable):"]
        lines += [f"  {k}{'*' if redistributable(k) else ''}: "
                  + ", ".join(f"{s} {n}" for s, n in per.items())
                  for k, per in stats["licences"].items()]
    return "\n".join(lines)


def _format_view(stats: dict[str, Any]) -> str:
    lines = [f"dataset {stats['dataset']}: the {stats['view']} view of "
             f"{stats['layout_dataset']} (text only: words, pages, lengths in words and "
             "language confidence do not apply)", "", f"{'split':<11}{'rows':>8}"]
    lines += [f"{split:<11}{info['rows']:>8}" for split, info in stats["splits"].items()]
    if stats["counts"]:
        lines += ["", "counts:"] + [f"  {k}: {v}" for k, v in stats["counts"].items()]
    return "\n".join(lines)
