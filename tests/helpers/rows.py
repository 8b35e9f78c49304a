"""Layout rows, plain (lists of Python values) and compact (packed arrays)."""

from __future__ import annotations

import numpy as np

from loralay_build.columns import Strings
from loralay_build.corpus.schema import FULL_SCHEMA


def plain_row(i: int) -> dict[str, object]:
    row: dict[str, object] = {field.name: None for field in FULL_SCHEMA}
    row.update(
        article_id=f"local:{i}", article_words=[f"w{i}", "été", "x"] * (i + 1),
        article_bboxes=[[i, 2, 3, 4]] * 3 * (i + 1),
        article_norm_bboxes=[[1, i, 3, 4]] * 3 * (i + 1),
        word_pages=[0, 1, 1] * (i + 1), page_sizes=[{"width": 612.0, "height": 792.0}] * 2,
        abstracts=[{"lang": "fr", "text": f"résumé {i}"}], matches=[], lang_confidence=0.5,
        abstract=f"résumé {i}", language="fr",
    )
    return row


def compact_row(i: int) -> dict[str, object]:
    row = plain_row(i)
    row["article_words"] = Strings.pack(row["article_words"])  # type: ignore[arg-type]
    for key, dtype in (("article_bboxes", np.int32), ("article_norm_bboxes", np.int16),
                       ("word_pages", np.int16)):
        row[key] = np.asarray(row[key], dtype=dtype)
    return row
