"""Corpus statistics of a published dataset (the figures of the LoRaLay paper's tables)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from loralay_build.corpus.filters import percentile
from loralay_build.corpus.split import SPLITS
from loralay_build.licences import redistributable


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


def split_values(folder: Path) -> dict[str, dict[str, list[Any]]]:
    """Per split, one value per document: article and summary words, pages, CLD2 confidence,
    year of publication (None when unknown)."""
    out: dict[str, dict[str, list[Any]]] = {}
    for split in SPLITS:
        files = sorted(folder.glob(f"{split}-*-of-*.parquet"))
        if not files:
            continue
        table = pq.ParquetDataset(files, schema=None).read(
            columns=["article_words", "abstract", "lang_confidence", "page_sizes", "published"]
        )
        out[split] = {
            "article_words": pc.list_value_length(table.column("article_words")).to_pylist(),
            "summary_words": [len(t.split()) for t in table.column("abstract").to_pylist()],
            "pages": pc.list_value_length(table.column("page_sizes")).to_pylist(),
            "lang_confidence": table.column("lang_confidence").to_pylist(),
            "year": [_year(p) for p in table.column("published").to_pylist()],
        }
    return out


def corpus_stats(folder: Path,
                 values: dict[str, dict[str, list[Any]]] | None = None) -> dict[str, Any]:
    """Per split: documents, pages, article/summary lengths (whitespace tokens), compression
    ratio (mean article length over mean summary length), mean CLD2 confidence."""
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
        }
    build_file = folder / "build.json"
    if build_file.is_file():
        build = json.loads(build_file.read_text())
        out["leakage"] = build.get("leakage", {})
        out["rejects"] = build.get("counts", {}).get("rejects", {})
        out["licences"] = build.get("licences", {})
    return out


def format_stats(stats: dict[str, Any]) -> str:
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
