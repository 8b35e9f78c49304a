"""The `pages` configuration of a dataset folder: one row per rendered page.

Why beside the text rows and not inside them: page images are megabytes per document, and a
user of the words alone should not download them. The shards live in `pages/`, are planned
like the text shards (corpus.publish: a shard whose pages are unchanged is kept byte for
byte, under the new generation's name) and are written before the switch, so the card and
build.json that name the new text shards name the new page shards too. Rows join the text
dataset on (`article_id`, `page`), `page` being the index `word_pages` holds; the images are
the bytes the worker encoded, read from the blob store one shard at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from loralay_build.blobs import BlobStore
from loralay_build.config import ImageSettings, OutputSettings
from loralay_build.corpus.arrays import buffer_array, to_arrow
from loralay_build.corpus.publish import Item, format_key, plan, write_new
from loralay_build.corpus.writer import digest
from loralay_build.nfc import nfc

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
# What each column holds (the documentation's table of the pages configuration).
PAGES_DOCS = {
    "article_id": "the document's id, as in the text rows",
    "page": "the page's index, as `word_pages` holds it: join on (`article_id`, `page`)",
    "image": "the encoded page (the `datasets` Image feature)",
    "width_px": "width of the image in pixels",
    "height_px": "height of the image in pixels",
    "dpi": "resolution the page was rendered at: a box in points is at `box * dpi / 72` pixels",
    "masked_boxes": "pixel boxes painted with the page's background (removed words)",
}
# The card's `dataset_info` for the pages configuration: `image` decodes as a PIL image.
FEATURES = [("article_id", "string"), ("page", "int32"), ("image", "image"),
            ("width_px", "int32"), ("height_px", "int32"), ("dpi", "int32")]
PAGES_PER_SHARD = 500
ROWS_PER_GROUP = 50


def write_pages(out_dir: Path, fingerprint: str,
                by_split: dict[str, list[tuple[str, list[dict[str, Any]]]]],
                previous: list[dict[str, Any]], blobs: BlobStore, images: ImageSettings,
                output: OutputSettings) -> list[dict[str, Any]]:
    """The pages shards of a publication (entries named `pages/…`, of one generation),
    keeping those of `previous` whose pages did not change (linked under their new names) and
    writing the others."""
    folder = out_dir / PAGES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    settings = replace(output, shard_rows=PAGES_PER_SHARD, row_group_rows=ROWS_PER_GROUP)
    fmt = format_key(PAGES_SCHEMA, settings) + f"|{images.dpi}"
    pages: dict[str, dict[str, Any]] = {}
    items: dict[str, list[Item]] = {}
    for split, docs in by_split.items():
        items[split] = []
        for article_id, doc_pages in docs:
            for page in doc_pages:
                item = Item(f"{article_id}#{page['page']}", page["sha256"])
                pages[item.id] = {**page, "article_id": article_id}
                items[split].append(item)
    local = [{**f, "name": f["name"].removeprefix(f"{PAGES_DIR}/")} for f in previous]
    layout = plan(folder, local, items, fmt, PAGES_PER_SHARD)
    in_use = {f["name"] for f in local}
    generation = digest([fingerprint, sorted(in_use)])[:8]
    new = write_new(folder, layout, generation, in_use, _PageRows(pages, blobs, images.dpi),
                    PAGES_SCHEMA, settings, fmt, [])
    return [{**f, "name": f"{PAGES_DIR}/{f['name']}"} for f in new]


@dataclass(frozen=True)
class _PageRows:
    """Page rows by item id, their images read from the blob store as they are written."""

    pages: dict[str, dict[str, Any]]
    blobs: BlobStore
    dpi: int

    def tables(self, items: Sequence[Item]) -> Iterator[pa.Table]:
        """One table per row group of pages."""
        for start in range(0, len(items), ROWS_PER_GROUP):
            yield pages_table([self.pages[item.id]
                               for item in items[start:start + ROWS_PER_GROUP]],
                              self.blobs, self.dpi)


def pages_table(rows: Sequence[dict[str, Any]], blobs: BlobStore, dpi: int) -> pa.Table:
    """Page rows as a table, built column by column: the masked boxes (every removed word's,
    about 30 a page on the realdocs) go to Arrow as one numpy array: 0.08 ms a page, where
    converting every value on its own took 0.22 to 0.27."""
    count = len(rows)
    boxes = [box for page in rows for box in page["masked_boxes"]]
    flat = np.array(boxes, np.int32).reshape(-1) if boxes else np.zeros(0, np.int32)
    if len(flat) != 4 * len(boxes):
        raise ValueError("a masked box without its 4 pixel coordinates")
    offsets = np.zeros(count + 1, np.int32)
    np.cumsum([len(page["masked_boxes"]) for page in rows], out=offsets[1:])
    image = pa.StructArray.from_arrays(
        [to_arrow([blobs.path(page["sha256"]).read_bytes() for page in rows], pa.binary()),
         pa.nulls(count, pa.string())], fields=list(PAGES_SCHEMA.field("image").type))

    def int32(values: Sequence[int] | np.ndarray) -> pa.Array:
        return buffer_array(np.asarray(values, np.int32), pa.int32())

    masked = pa.ListArray.from_arrays(
        int32(offsets), pa.FixedSizeListArray.from_arrays(int32(flat), 4))
    return pa.Table.from_arrays(
        [to_arrow([nfc(page["article_id"]) for page in rows], pa.string()),
         int32([page["page"] for page in rows]), image,
         int32([page["width_px"] for page in rows]), int32([page["height_px"] for page in rows]),
         int32(np.full(count, dpi)),
         masked], schema=PAGES_SCHEMA)
