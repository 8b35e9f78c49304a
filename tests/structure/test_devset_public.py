"""`scripts/structure_devset_public.py` rebuilds pairs from copies: the JATS gold of the main
article and of a translation, printed reference-list headings, the abstracts for the benchmark,
and pairs left out with their reason (checksum, held-out folder)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "structure_devset_public.py"
COMMIT = "0" * 40
JATS = """<?xml version="1.0" encoding="utf-8"?>
<article xmlns:xlink="http://www.w3.org/1999/xlink" xml:lang="en">
 <front><article-meta>
  <title-group><article-title>Fluoride in toothpaste</article-title></title-group>
  <abstract><title>Abstract</title><p>OBJECTIVE: To measure fluoride.</p></abstract>
  <trans-abstract xml:lang="pt"><title>Resumo</title><p>OBJETIVO: Medir o flúor.</p>
  </trans-abstract>
 </article-meta></front>
 <body>
  <sec><title>INTRODUCTION</title><p>Text.</p></sec>
  <sec><title>METHODS</title><sec><title>Sampling</title><p>Text.</p></sec></sec>
 </body>
 <back><ref-list><title/><ref id="B1"><mixed-citation>Cury JA. Fluoride. 2019.</mixed-citation>
 </ref></ref-list></back>
 <sub-article article-type="translation" xml:lang="pt">
  <front-stub><abstract><title>Resumo</title><p>OBJETIVO: Medir o flúor.</p></abstract>
  </front-stub>
  <body>
   <sec><title>INTRODUÇÃO</title><p>Texto.</p></sec>
   <sec><title>MÉTODOS</title><sec><title>Amostragem</title><p>Texto.</p></sec></sec>
  </body>
  <back><ack><title>Agradecimentos</title><p>Obrigado.</p></ack></back>
 </sub-article>
</article>
"""


def _file(root: Path, repo: str, path: str, data: bytes) -> dict[str, str]:
    target = root / repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return {"repo": repo, "path": path, "commit": COMMIT,
            "sha256": hashlib.sha256(data).hexdigest()}


def _run(tmp_path: Path, pairs: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    listing = tmp_path / "pairs.json"
    listing.write_text(json.dumps(pairs), encoding="utf-8")
    return subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "out"), "--from",
                           str(tmp_path / "copies"), "--pairs", str(listing)],
                          capture_output=True, text=True)


def test_jats_pairs_become_devset_entries_and_abstracts(tmp_path: Path) -> None:
    copies = tmp_path / "copies"
    xml = _file(copies, "org/repo", "xml/a.xml", JATS.encode())
    pdf_en = _file(copies, "org/repo", "pdf/a.pdf", b"%PDF-1.4 en")
    pdf_pt = _file(copies, "org/repo", "pdf/a-pt.pdf", b"%PDF-1.4 pt")
    pairs = [
        {"id": "a", "language": "en", "layout": "one-column", "gold_kind": "jats",
         "ref_list_title": "REFERENCES", "pdf": pdf_en, "gold": xml},
        {"id": "a-pt", "language": "pt", "layout": "one-column", "gold_kind": "jats",
         "sub_article": "pt", "ref_list_title": "REFERÊNCIAS", "pdf": pdf_pt, "gold": xml},
    ]
    done = _run(tmp_path, pairs)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    main = json.loads((out / "a.json").read_text(encoding="utf-8"))
    assert [(s["title"], s["level"]) for s in main["sections"]] == [
        ("INTRODUCTION", 1), ("METHODS", 1), ("Sampling", 2), ("REFERENCES", 1)]
    assert main["references"] == ["Cury JA. Fluoride. 2019."]
    assert main["provenance"]["gold"] == ["org/repo", "xml/a.xml", COMMIT]
    assert Path(main["pdf"]).read_bytes() == b"%PDF-1.4 en"
    translation = json.loads((out / "a-pt.json").read_text(encoding="utf-8"))
    assert [s["title"] for s in translation["sections"]] == [
        "INTRODUÇÃO", "MÉTODOS", "Amostragem", "REFERÊNCIAS", "Agradecimentos"]
    assert translation["references"] == ["Cury JA. Fluoride. 2019."]
    records = {r["id"]: r for r in map(json.loads, (out / "manifest.jsonl").open())}
    assert records["a"]["abstracts"] == {"en": "OBJECTIVE: To measure fluoride.",
                                         "pt": "OBJETIVO: Medir o flúor."}
    assert records["a"]["title"] == "Fluoride in toothpaste"
    assert records["a-pt"]["abstracts"] == {"pt": "OBJETIVO: Medir o flúor."}


def test_bad_checksum_and_held_out_pairs_are_left_out_with_their_reason(tmp_path: Path
                                                                         ) -> None:
    copies = tmp_path / "copies"
    xml = _file(copies, "org/repo", "xml/a.xml", JATS.encode())
    pdf = _file(copies, "org/repo", "pdf/a.pdf", b"%PDF-1.4 en")
    held = _file(copies, "scieloorg/packtools", "tests/fixtures/pdf/a1.pdf", b"%PDF-1.4 held")
    pairs = [
        {"id": "bad", "language": "en", "layout": "one-column", "gold_kind": "jats",
         "pdf": {**pdf, "sha256": "f" * 64}, "gold": xml},
        {"id": "held", "language": "en", "layout": "one-column", "gold_kind": "jats",
         "pdf": held, "gold": xml},
    ]
    done = _run(tmp_path, pairs)
    assert done.returncode == 1
    assert "pdf/a.pdf: SHA-256" in done.stderr and "is not the listed" in done.stderr
    assert "held: held out for evaluation" in done.stderr
    assert not list((tmp_path / "out").glob("*.json"))
    assert not (tmp_path / "out" / "files" / "org/repo" / "pdf" / "a.pdf").exists()


ERUDIT = """<?xml version="1.0" encoding="utf-8"?>
<article xmlns="http://www.erudit.org/xsd/article" lang="fr">
 <liminaire><grtitre><titre>Discours épilinguistiques</titre></grtitre>
  <resume lang="fr"><alinea>Cet article décrit des discours.</alinea></resume></liminaire>
 <corps>
  <section1><no>1</no><epigraphe><alinea>Citation.</alinea></epigraphe></section1>
  <section1><titre>1. Introduction</titre><para><alinea>Texte.</alinea></para>
   <section2><titre>1.1 Corpus</titre><para><alinea>Texte.</alinea></para></section2>
  </section1>
 </corps>
 <partiesann>
  <grbiblio><biblio><divbiblio><titre>H3 avec balise</titre>
   <refbiblio>Bochmann, Klaus. 2001. Notre langue.</refbiblio></divbiblio></biblio></grbiblio>
  <grnote><note id="no1"><no>1</no><alinea>Les représentants actifs.</alinea></note></grnote>
 </partiesann>
</article>
"""


def test_erudit_articles_give_sections_notes_references_and_abstracts(tmp_path: Path) -> None:
    copies = tmp_path / "copies"
    pairs = [{"id": "e", "language": "fr", "layout": "one-column", "gold_kind": "erudit",
              "ref_list_title": "Références bibliographiques",
              "pdf": _file(copies, "org/repo", "a.pdf", b"%PDF-1.4 fr"),
              "gold": _file(copies, "org/repo", "a.xml", ERUDIT.encode())}]
    done = _run(tmp_path, pairs)
    assert done.returncode == 0, done.stderr
    entry = json.loads((tmp_path / "out" / "e.json").read_text(encoding="utf-8"))
    assert [(s["title"], s["level"]) for s in entry["sections"]] == [
        ("1. Introduction", 1), ("1.1 Corpus", 2), ("Références bibliographiques", 1)]
    assert entry["footnotes"] == ["Les représentants actifs."]
    assert entry["references"] == ["Bochmann, Klaus. 2001. Notre langue."]
    assert entry["origin"] == "erudit"
    record = json.loads((tmp_path / "out" / "manifest.jsonl").read_text(encoding="utf-8"))
    assert record["abstracts"] == {"fr": "Cet article décrit des discours."}
    assert record["title"] == "Discours épilinguistiques"
