"""A `local` build publishes `sections` and `word_roles` in every row: the dataset loads
with `datasets`, its card states the role codes, and the columns hold what was printed."""

from __future__ import annotations

import json
from pathlib import Path

import datasets

from loralay_build.structure import ROLE_NAMES, Role
from tests.helpers.cli import run_cli_in_process
from tests.helpers.pdfgen import words
from tests.helpers.structure_pdf import numbered_article

ABSTRACT = " ".join(words(60, 99))


def test_a_local_build_has_the_structure_columns(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    expected = numbered_article(docs / "a.pdf", ABSTRACT)
    manifest = docs / "m.jsonl"
    manifest.write_text(json.dumps({
        "id": "a", "pdf": "a.pdf", "language": "en", "abstracts": {"en": ABSTRACT},
        "published": "2020", "title": "Layout Structure in Practice"}) + "\n")
    out = tmp_path / "out"
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out),
                                "--workers", "1",
                                "--no-filter")
    assert result.returncode == 0, result.stderr
    loaded = datasets.load_dataset(str(out / "local"), download_mode="force_redownload")
    rows = [row for split in loaded.values() for row in split]
    assert len(rows) == 1
    row = rows[0]
    article = row["article_words"]
    assert ABSTRACT.split()[5] not in article  # the abstract was removed before
    assert [(s["title"], s["level"]) for s in row["sections"]] == [
        (None, 1), ("1 Introduction", 1), ("1.1 Data Sources", 2), ("2 Pipeline Design", 1),
        ("References", 1)]
    ends = [s["word_end"] for s in row["sections"]]
    assert [s["word_start"] for s in row["sections"]] == [0, *ends[:-1]]
    assert ends[-1] == len(article) == len(row["word_roles"])
    for section in row["sections"][1:]:
        assert " ".join(article[section["word_start"]:section["word_end"]]).startswith(
            section["title"])

    def printed(role: Role) -> list[str]:
        return [w for w, r in zip(expected.words, expected.roles, strict=True) if r == role]

    def published(role: Role) -> list[str]:
        return [w for w, r in zip(article, row["word_roles"], strict=True) if r == role]

    for role in (Role.CAPTION, Role.FOOTNOTE, Role.REFERENCE, Role.HEADING):
        assert published(role) == printed(role)
    card = (out / "local" / "README.md").read_text()
    assert all(f"{code} {name}" in card for code, name in ROLE_NAMES.items())
