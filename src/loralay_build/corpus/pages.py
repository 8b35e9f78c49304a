"""The `pages` configuration of a dataset folder: one row per rendered page.

Why beside the text rows and not inside them: page images are megabytes per document, and a
user of the words alone should not download them. The shards live in `pages/` with the same
generation as the text shards and are switched with them by the same card and build.json.
Rows join the text dataset on (`article_id`, `page`), `page` being the index `word_pages`
holds; the images themselves are the PNG/WebP/JPEG bytes the worker encoded, read from the
blob store one shard at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from loralay_build.blobs import BlobStore
from loralay_build.config import ImageSettings, OutputSettings
from loralay_build.corpus.writer import ShardFile, _write_shards, _write_table

PAGES_DIR = "pages"
PAGES_SCHEMA = pa.schema([
    pa.field("article_id", pa.string(), nullable=False),
    pa.field("page", pa.int32()),
    pa.field("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
    pa.field("width_px", pa.int32()),
    pa.field("height_px", pa.int32()),
    pa.field("dpi", pa.int32()),
    pa.field("masked_boxes", pa.list_(pa.list_(pa.int32(), 4))),
])
# The card's `dataset_info` for the pages configuration: `image` decodes as a PIL image.
FEATURES = [("article_id", "string"), ("page", "int32"), ("image", "image"),
            ("width_px", "int32"), ("height_px", "int32"), ("dpi", "int32")]
PAGES_PER_SHARD = 500


def page_rows(docs: Sequence[tuple[str, list[dict[str, Any]]]], blobs: BlobStore,
              dpi: int) -> list[dict[str, Any]]:
    """Rows of the given documents' pages, images read from the blob store."""
    return [
        {"article_id": article_id, "page": page["page"],
         "image": {"bytes": blobs.path(page["sha256"]).read_bytes(), "path": None},
         "width_px": page["width_px"], "height_px": page["height_px"], "dpi": dpi,
         "masked_boxes": page["masked_boxes"]}
        for article_id, pages in docs for page in pages
    ]


def write_pages(out_dir: Path, generation: str, by_split: dict[str, list[tuple[str, Any]]],
                blobs: BlobStore, images: ImageSettings,
                output: OutputSettings) -> list[ShardFile]:
    """Pages shards per split (`pages/<split>-<generation>-…`); one shard in memory at once."""
    folder = out_dir / PAGES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    sizing = replace(output, shard_rows=PAGES_PER_SHARD)
    for split, docs in by_split.items():
        pages = [(article_id, page) for article_id, doc_pages in docs for page in doc_pages]
        if not pages:
            continue

        def write(start: int, stop: int, path: Path, pages: list[Any] = pages) -> None:
            rows = page_rows([(a, [p]) for a, p in pages[start:stop]], blobs, images.dpi)
            _write_table(pa.Table.from_pylist(rows, schema=PAGES_SCHEMA), path, sizing)

        for shard in _write_shards(folder, split, generation, len(pages), sizing, write):
            files.append(ShardFile(f"{PAGES_DIR}/{shard.name}", shard.split, shard.rows,
                                   shard.bytes, shard.sha256))
    return files
