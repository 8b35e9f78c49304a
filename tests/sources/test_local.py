"""`build-corpus local`: a manifest of your own PDFs."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pyarrow.parquet as pq

from loralay_build.sources.local import LocalSource
from tests.helpers.cli import run_cli_in_process
from tests.helpers.cli_runner import assert_dataset_schema
from tests.helpers.local import make_corpus, write_manifest


def test_local_build_with_rejects_and_preset_split(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 5)
    entries[0]["split"] = "test"
    entries[1].update(licence="CC-BY-4.0", url="https://example.org/doc1")
    (docs / "page.pdf").write_text("<html>not a pdf</html>")
    entries += [
        {"id": "html", "pdf": "page.pdf", "language": "fr", "abstracts": {"fr": "x y z"}},
        {"id": "missing", "pdf": "nowhere.pdf", "language": "fr", "abstracts": {"fr": "x"}},
        {"id": "noabs", "pdf": "doc1.pdf", "language": "fr", "abstracts": {}},
    ]
    manifest = write_manifest(docs / "docs.jsonl", entries)
    out = tmp_path / "data"
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                                "1", "--no-filter")
    assert result.returncode == 0, result.stderr
    rejects = {json.loads(x)["id"]: json.loads(x)["reason"]
               for x in (out / "local" / "rejects.jsonl").read_text().splitlines()}
    assert rejects == {
        "local:html": "not_pdf",
        "local:missing": "unavailable",
        "local:noabs": "abstract_missing_in_metadata",
    }
    test_rows = [r for p in (out / "local").glob("test-*.parquet")
                 for r in pq.read_table(p).to_pylist()]
    assert "local:doc0" in {r["article_id"] for r in test_rows}
    rows = [r for p in (out / "local").glob("*.parquet") for r in pq.read_table(p).to_pylist()]
    assert len(rows) == 5
    for row in rows:
        body = " ".join(row["article_words"])
        assert all(m["found"] for m in row["matches"])
        assert row["abstracts"][0]["text"][:60] not in body
    assert_dataset_schema(out / "local", LocalSource)


def test_invalid_manifest_is_a_usage_error(tmp_path: Path) -> None:
    manifest = tmp_path / "bad.jsonl"
    manifest.write_text('{"id": "a", "pdf": "a.pdf", "published": "21/03/2020"}\n')
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert "line 1" in result.stderr and "published" in result.stderr


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def test_every_published_text_is_nfc(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 3)
    for entry in entries:  # metadata typed on a system that stores letters decomposed
        entry["title"] = unicodedata.normalize("NFD", str(entry["title"]))
        abstracts = entry["abstracts"]
        assert isinstance(abstracts, dict)
        entry["abstracts"] = {k: unicodedata.normalize("NFD", v) for k, v in abstracts.items()}
    assert any(not unicodedata.is_normalized("NFC", str(e["title"])) for e in entries)
    manifest = write_manifest(docs / "docs.jsonl", entries)
    out = tmp_path / "data"
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                                "1", "--no-filter")
    assert result.returncode == 0, result.stderr
    rows = [r for p in (out / "local").glob("*.parquet") for r in pq.read_table(p).to_pylist()]
    assert len(rows) == 3
    for row in rows:
        entry = next(e for e in entries if f"local:{e['id']}" == row["article_id"])
        assert row["title"] == unicodedata.normalize("NFC", str(entry["title"]))
        assert all(m["found"] for m in row["matches"])
        texts = _strings(row)
        assert [t for t in texts if not unicodedata.is_normalized("NFC", t)] == []
        assert any(not t.isascii() for t in row["article_words"])


def test_a_later_copy_of_a_published_pdf_is_the_duplicate(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 5)
    for entry in entries:
        entry["id"] = f"z-{entry['id']}"  # ids after the copy's, which sorts first
    manifest = write_manifest(docs / "docs.jsonl", entries)
    out = tmp_path / "data"
    args = ("local", "--input", str(manifest), "--out", str(out), "--workers", "1",
            "--no-filter")
    assert run_cli_in_process(*args).returncode == 0
    first = {r["article_id"]: p.name.split("-")[0] for p in (out / "local").glob("*.parquet")
             for r in pq.read_table(p, columns=["article_id"]).to_pylist()}
    copied = max(first, key=lambda cid: (first[cid] != "train", cid))
    original = next(e for e in entries if f"local:{e['id']}" == copied)
    write_manifest(manifest, [*entries, {**original, "id": "a-copy"}])  # same PDF, new id
    result = run_cli_in_process(*args)
    assert result.returncode == 0, result.stderr
    second = {r["article_id"]: p.name.split("-")[0] for p in (out / "local").glob("*.parquet")
              for r in pq.read_table(p, columns=["article_id"]).to_pylist()}
    assert second == first  # the published copy stays, in its split
    rejects = {json.loads(x)["id"]: json.loads(x)["detail"]
               for x in (out / "local" / "rejects.jsonl").read_text().splitlines()}
    assert rejects["local:a-copy"] == f"same PDF as {copied}"
