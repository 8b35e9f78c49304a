#!/usr/bin/env python3
"""Parse PDFs with a sanitizer build of the compiled core (run by scripts/native_sanitize.sh).

The extension file given is loaded in place of the installed one; every PDF of the folders
is parsed `--rounds` times in this process, and its words and boxes go through the core's
kernels of the later build steps (normalised tokens, the seed index and lookups, the leakage
audit, the numbering of characters for edlib, word selection by runs and their copying,
MinHash, box and int arrays, the row's box columns, string packing, and the Thrift reader on
a Parquet footer of its words and on the file's own bytes), and its first pages are rendered
as page images (the gray-plane and PNG-row kernels), so a leak in the core grows with the
rounds.
Decompression bombs (C01, C02) are left out: without the address-space limit of the worker
isolation they only measure PDFium's inflater, and they have no text for the core to read.

    python scripts/native_sanitize.py BUILD/_native.so DIR [DIR ...] [--rounds N]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import sys
from pathlib import Path

BOMBS = ("C01", "C02")


def load(extension: Path) -> None:
    """Register `extension` as loralay_build.native._native before the backend binds it."""
    name = "loralay_build.native._native"
    spec = importlib.util.spec_from_file_location(name, extension)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {extension}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("extension", type=Path)
    parser.add_argument("folders", type=Path, nargs="+")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    load(args.extension)
    import pyarrow as pa
    import pyarrow.parquet as pq

    from loralay_build.columns import Strings
    from loralay_build.config import ImageSettings
    from loralay_build.corpus.thrift import ThriftError, read_struct
    from loralay_build.errors import Reject
    from loralay_build.images import ImagesSkipped, page_images
    from loralay_build.parse import ParseSettings, parse_pdf, pdfium
    from loralay_build.records import box_array, int_array
    from loralay_build.run.process import _box_columns
    from loralay_build.text.leakage import Leakage
    from loralay_build.text.match import _as_bytes
    from loralay_build.text.minhash import signature
    from loralay_build.text.normalize import normalise_words
    from loralay_build.text.seeds import SeedFinder

    if pdfium._NATIVE is None or pdfium._NATIVE.__file__ != str(args.extension):
        raise SystemExit("the sanitizer build is not the one in use")
    files = [p for folder in args.folders for p in sorted(folder.glob("*.pdf"))
             if not p.name.startswith(BOMBS)]
    settings = ParseSettings(max_pages=300)
    images = ImageSettings(enabled=True, pages=2)
    parsed = rejected = 0
    for _ in range(args.rounds):
        for path in files:
            try:
                doc = parse_pdf(path, settings=settings)
                texts = normalise_words(doc.words).texts
                Leakage(texts, 5).share(texts[:300])
                body = " ".join(texts)
                _as_bytes("\u03a9" + body[:400], body[:6000])  # beyond Latin-1: numbered
                SeedFinder(body).first([body[i : i + 12] for i in range(0, len(body) - 11, 97)], 5)
                signature(doc.words)
                box_array(doc.boxes)
                int_array(doc.line_ids)
                doc.select([i for i in range(len(doc.words)) if i % 7])
                _box_columns(doc)
                Strings.pack(doc.words)
                parquet = io.BytesIO()
                pq.write_table(pa.table({"words": [doc.words]}), parquet, write_page_index=True)
                footer = parquet.getvalue()
                read_struct(footer, len(footer) - 8 - int.from_bytes(footer[-8:-4], "little"))
                data = path.read_bytes()[:4096]
                for at in range(0, len(data), 37):
                    with contextlib.suppress(ThriftError):
                        read_struct(data, at)
                page_images(str(path), [page.index for page in doc.pages], {}, images)
                parsed += 1
            except (Reject, ImagesSkipped):
                rejected += 1
    print(f"{len(files)} files x {args.rounds} rounds: {parsed} parsed, {rejected} rejected")


if __name__ == "__main__":
    main()
