"""Rebuild the structure development set: PDFs paired with their gold structure.

The PDFs and metadata are not ours to publish, so the pairs are rebuilt from a realdocs
folder (manifest.jsonl, pdf/, meta/) and a fixtures folder on each run:

- SciELO JATS (`meta/*.xml`): `body//sec/title` with their nesting depth, the back matter's
  printed headings (`ack`, `ref-list`, `app` titles, the labels of the contributions and
  conflicts notes), `fig`/`table-wrap` captions, `fn`
  notes and `ref-list/ref` entries;
- SciELO ISIS full text (`meta/*.id`) and translation pages (`meta/*.htm`): the body's HTML
  paragraphs, a heading being a paragraph printed wholly in bold after the keywords (level 1
  in the larger size or capitals, else 2), captions the paragraphs opening "Tabla/Table/
  Figura N", references the paragraphs after the references heading;
- LaTeX (`\\chapter`, `\\section`, `\\subsection`, `\\caption`, `\\footnote`, `\\bibitem`) and
  Typst (`=`, `==`, `caption:`) sources of the Korean PDFs;
- hand-labelled headings of PDFs without machine-readable gold (`structure_gold.json`
  beside this script: titles as printed and their levels, read off the pages);
- EUR-Lex: the act `CELEX-32017R2403` in four languages from the fixtures' HTML (`ti-art` +
  `sti-art` headings, `note` footnotes), rendered to PDF in the Official Journal's manner
  (no PDF of the act is held), and marked `origin: rendered`.

Writes `<out>/<id>.json` per document (and `<out>/<id>.pdf` for rendered ones):
`{id, pdf, language, layout, origin, provenance, sections: [{title, level}], captions,
footnotes, references}` (texts as printed in the gold source).

    python3 scripts/structure_devset.py /work/shared/realdocs /work/shared/fixtures out/devset
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
HAND = HERE / "structure_gold.json"
# Evaluation documents that must stay out of development (none of them is in realdocs,
# but a realdocs-like folder may hold them).
HELD_OUT = ("0807.3577", "0908.0054", "Wang-paperAVE2008")
_CAPTION = re.compile(r"^(tabla|table|tabela|tableau|figura|figure|fig\.?|quadro|gráfico|"
                      r"grafico|chart)\s*\d", re.IGNORECASE)
_KEYWORDS = re.compile(r"^(descriptores|descritores|keywords|key words|palavras-chave|"
                       r"palabras clave|uniterms|descriptors)", re.IGNORECASE)
_REFS = re.compile(r"^(referencias|referências|references|bibliografía|bibliografia|"
                   r"referencias bibliográficas|referências bibliográficas)\s*$", re.IGNORECASE)


def _text(node: ET.Element | None) -> str:
    return " ".join("".join(node.itertext()).split()) if node is not None else ""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def jats_gold(path: Path) -> dict[str, Any]:
    root = ET.parse(path).getroot()
    sections: list[dict[str, Any]] = []

    def walk(node: ET.Element, depth: int) -> None:
        for child in node:
            tag = _local(child.tag)
            if tag in ("sec", "ack", "ref-list", "app"):
                title = next((c for c in child if _local(c.tag) == "title"), None)
                label = next((c for c in child if _local(c.tag) == "label"), None)
                own = "".join([title.text or "", *(c.tail or "" for c in title)]) if (
                    title is not None) else ""  # without a cross-reference inside it
                text = " ".join(x for x in (_text(label), " ".join(own.split())) if x)
                if text:
                    sections.append({"title": text, "level": depth})
                walk(child, depth + 1 if text else depth)
            elif tag in ("back", "app-group"):
                walk(child, depth)

    article = root if _local(root.tag) == "article" else root.find(".//article") or root
    for part in article:
        if _local(part.tag) in ("body", "back"):
            walk(part, 1)
    for note in root.iter():  # author notes printed under a heading of their own
        if _local(note.tag) == "fn" and note.get("fn-type") in ("con", "conflict",
                                                                 "coi-statement"):
            label = _text(next((c for c in note if _local(c.tag) == "label"), None))
            if label:
                sections.append({"title": label, "level": 1})
    captions = [" ".join(x for x in (_text(el.find("label")), _text(el.find("caption"))) if x)
                for el in root.iter() if _local(el.tag) in ("fig", "table-wrap")]
    notes = [_text(el) for el in root.iter() if _local(el.tag) == "fn"]
    refs = [_text(el) for el in root.iter() if _local(el.tag) == "ref"]
    return {"sections": sections, "captions": [c for c in captions if c],
            "footnotes": [n for n in notes if n], "references": refs}


def _paragraphs(markup: str) -> Iterator[tuple[str, str]]:
    """(raw html, visible text) of each paragraph."""
    for raw in re.findall(r"<p[^>]*>(.*?)</p>", markup, re.S | re.IGNORECASE):
        text = html.unescape(" ".join(re.sub(r"<[^>]+>", " ", raw).split()))
        text = re.sub(r"\s+([,.;:])", r"\1", text)
        yield raw, text


def html_gold(markup: str) -> dict[str, Any]:
    paragraphs = list(_paragraphs(markup))
    start = max((i for i, (_, t) in enumerate(paragraphs) if _KEYWORDS.match(t)), default=-1)
    sections: list[dict[str, Any]] = []
    captions: list[str] = []
    refs: list[str] = []
    in_refs = False
    for raw, text in paragraphs[start + 1:]:
        if not text or text in ("\xa0",) or not re.search(r"\w", text):
            continue
        bold = " ".join(html.unescape(" ".join(re.sub(r"<[^>]+>", " ", b).split()))
                        for b in re.findall(r"<b>(.*?)</b>", raw, re.S | re.IGNORECASE))
        if _CAPTION.match(text) and _CAPTION.match(bold):
            captions.append(text)
            continue
        whole = (bold and " ".join(bold.split()) == text.rstrip(" .:")) or bold == text
        if whole and len(text.split()) <= 16 and "<table" not in raw.lower():
            size = re.search(r'size="(\d)"', raw)
            big = bool(size and int(size.group(1)) >= 3) or text.upper() == text
            sections.append({"title": text, "level": 1 if big else 2})
            in_refs = bool(_REFS.match(text))
            continue
        if in_refs:
            refs.append(text)
    return {"sections": sections, "captions": captions, "footnotes": [], "references": refs}


def isis_gold(path: Path) -> dict[str, Any]:
    data = path.read_bytes().decode("latin-1")
    fields = re.findall(r"^!v704!(.*?)\s*\^cY\s*$", data, re.M)
    return html_gold("\n".join(fields))


_LATEX_LEVEL = {"chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4}


def _braced(source: str, start: int) -> tuple[str, int]:
    """The text inside the braces opening at `start`, and the index after them."""
    depth, i = 0, start
    while i < len(source):
        if source[i] == "{":
            depth += 1
        elif source[i] == "}":
            depth -= 1
            if depth == 0:
                return source[start + 1:i], i + 1
        i += 1
    return source[start + 1:], len(source)


def _detex(text: str) -> str:
    text = re.sub(r"\\[a-zA-Z]+\*?(\[[^\]]*\])?", " ", text)
    return " ".join(text.replace("{", " ").replace("}", " ").replace("~", " ").split())


def latex_gold(path: Path) -> dict[str, Any]:
    source = path.read_text(encoding="utf-8")
    source = source[source.find("\\begin{document}"):]
    source = re.sub(r"(?<!\\)%.*", "", source)
    sections, captions, notes, refs = [], [], [], []
    for found in re.finditer(r"\\(chapter|section|subsection|subsubsection|caption|footnote)"
                             r"\*?(\[[^\]]*\])?(?=\{)", source):
        body, _ = _braced(source, found.end())
        kind = found.group(1)
        if kind in _LATEX_LEVEL:
            sections.append({"title": _detex(body), "level": _LATEX_LEVEL[kind]})
        elif kind == "caption":
            captions.append(_detex(body))
        else:
            notes.append(_detex(body))
    for item in re.findall(r"\\bibitem\{[^}]*\}(.*?)(?=\\bibitem|\\end\{thebibliography\})",
                           source, re.S):
        refs.append(_detex(item))
    if refs:  # thebibliography's heading: \bibname in a class with chapters
        name = "Bibliography" if any(s["level"] == 1 for s in sections) else "References"
        sections.append({"title": name, "level": 1})
    return {"sections": sections, "captions": captions, "footnotes": notes, "references": refs}


def typst_gold(path: Path) -> dict[str, Any]:
    source = path.read_text(encoding="utf-8")
    sections, captions = [], []
    for line in source.splitlines():
        heading = re.match(r"^(=+)\s+(.*?)\s*(<[^>]*>)?\s*$", line)
        if heading:
            sections.append({"title": heading.group(2), "level": len(heading.group(1))})
        caption = re.search(r"caption:\s*\[(.*?)\]", line)
        if caption:
            captions.append(caption.group(1))
        if line.startswith("#bibliography("):
            title = re.search(r'title:\s*"([^"]*)"', line)
            sections.append({"title": title.group(1) if title else "Bibliography", "level": 1})
    return {"sections": sections, "captions": captions, "footnotes": [], "references": []}


def eurlex_blocks(path: Path) -> tuple[str, list[tuple[str, str]]]:
    """The act's title and its blocks in order: (kind, text), kind one of heading-number,
    heading-title, body, note, table."""
    markup = path.read_text(encoding="utf-8")
    body = markup[markup.find('class="doc-ti"'):]
    title = ""
    blocks: list[tuple[str, str]] = []
    for cls, raw in re.findall(r'<p[^>]*class="([a-z-]+)"[^>]*>(.*?)</p>', body, re.S):
        text = html.unescape(" ".join(re.sub(r"<[^>]+>", " ", raw).split()))
        text = re.sub(r"\s+([,.;:)])", r"\1", text)
        if not text:
            continue
        if cls == "doc-ti":
            title = f"{title} {text}".strip()
        elif cls == "ti-art":
            blocks.append(("heading-number", text))
        elif cls == "sti-art":
            blocks.append(("heading-title", text))
        elif cls == "note":
            blocks.append(("note", text))
        elif cls == "tbl-txt":
            blocks.append(("table", text))
        elif cls == "normal":
            blocks.append(("body", text))
    return title, blocks


def render_eurlex(title: str, blocks: list[tuple[str, str]], pdf: Path) -> dict[str, Any]:
    """The act as an Official Journal-like PDF (title, "Article N" in italics, its subject
    in bold, notes in small type at the foot of pages); its gold."""
    from reportlab.lib.enums import TA_CENTER, TA_JUSTIFY
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer

    body = ParagraphStyle("b", fontName="Times-Roman", fontSize=10, leading=12,
                          alignment=TA_JUSTIFY, spaceAfter=4)
    styles = {
        "title": ParagraphStyle("t", parent=body, fontName="Times-Bold", fontSize=12,
                                leading=15, alignment=TA_CENTER, spaceAfter=10),
        "heading-number": ParagraphStyle("n", parent=body, fontName="Times-Italic",
                                         alignment=TA_CENTER, spaceBefore=10, spaceAfter=2),
        "heading-title": ParagraphStyle("s", parent=body, fontName="Times-Bold",
                                        alignment=TA_CENTER, spaceAfter=6),
        "body": body,
        "table": body,
    }
    notes = [text for kind, text in blocks if kind == "note"]
    flow: list[Any] = [Paragraph(html.escape(title), styles["title"])]
    sections: list[dict[str, Any]] = []
    for kind, text in blocks:
        if kind == "note":
            continue
        if kind == "heading-number":
            sections.append({"title": text, "level": 1})
        elif kind == "heading-title" and sections:
            sections[-1]["title"] += " " + text
        flow.append(Paragraph(html.escape(text), styles[kind]))
    per_page = 3
    note_style = ParagraphStyle("f", fontName="Times-Roman", fontSize=7.5, leading=9)

    def foot(canvas: Any, doc: Any) -> None:
        page = canvas.getPageNumber() - 1
        mine = notes[page * per_page:(page + 1) * per_page]
        y = 60.0
        for text in reversed(mine):
            para = Paragraph(html.escape(text), note_style)
            _, height = para.wrap(A4[0] - 144, 200)
            para.drawOn(canvas, 72, y)
            y += height + 2
        if mine:
            canvas.line(72, y + 2, 200, y + 2)

    SimpleDocTemplate(str(pdf), pagesize=A4, leftMargin=72, rightMargin=72, topMargin=72,
                      bottomMargin=72 + 9 * 11).build([*flow, Spacer(1, 1)], onFirstPage=foot,
                                                      onLaterPages=foot)
    return {"sections": sections, "captions": [], "footnotes": notes, "references": []}


def build(realdocs: Path, fixtures: Path, out: Path) -> list[dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    manifest = [json.loads(line) for line in (realdocs / "manifest.jsonl").open()]
    hand = json.loads(HAND.read_text(encoding="utf-8")) if HAND.exists() else {}
    made = []
    for record in manifest:
        if any(name in record["id"] for name in HELD_OUT) or record["doc_kind"] != "article":
            continue
        gold_file = record.get("gold_file") or ""
        path = realdocs / gold_file
        gold: dict[str, Any] | None = None
        origin = ""
        if record["id"] in hand:
            gold = {"captions": [], "footnotes": [], "references": [], **hand[record["id"]]}
            origin = "hand-labelled"
        elif gold_file.endswith(".xml") and "scielo" in gold_file:
            gold, origin = jats_gold(path), "jats"
        elif gold_file.endswith(".id"):
            gold, origin = isis_gold(path), "isis-html"
        elif gold_file.endswith(".htm") and "-en" in record["id"]:
            gold, origin = html_gold(path.read_bytes().decode("latin-1")), "scielo-html"
        elif gold_file.endswith(".tex"):
            gold, origin = latex_gold(path), "latex"
        elif gold_file.endswith(".typ"):
            gold, origin = typst_gold(path), "typst"
        if not gold or not gold["sections"]:
            continue
        entry = {"id": record["id"], "pdf": str((realdocs / record["file"]).resolve()),
                 "language": record["language"], "layout": record["layout"], "origin": origin,
                 "provenance": {"pdf": [record["source_repo"], record["source_path"],
                                        record.get("commit")],
                                "gold": record.get("gold_source")},
                 **gold}
        (out / f"{record['id']}.json").write_text(json.dumps(entry, ensure_ascii=False, indent=1))
        made.append(entry)
    for lang in ("EN", "FR", "PT", "ES"):
        html_path = fixtures / "eurlex" / f"CELEX-32017R2403-{lang}-TXT.html"
        if not html_path.exists():
            continue
        doc_id = f"eurlex-32017R2403-{lang.lower()}"
        pdf = out / f"{doc_id}.pdf"
        title, blocks = eurlex_blocks(html_path)
        gold = render_eurlex(title, blocks, pdf)
        entry = {"id": doc_id, "pdf": str(pdf.resolve()), "language": lang.lower(),
                 "layout": "one-column", "origin": "rendered",
                 "provenance": {"gold": f"fixtures/eurlex/{html_path.name}"}, **gold}
        (out / f"{doc_id}.json").write_text(json.dumps(entry, ensure_ascii=False, indent=1))
        made.append(entry)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("realdocs", type=Path)
    parser.add_argument("fixtures", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    made = build(args.realdocs, args.fixtures, args.out)
    for entry in made:
        print(f"{entry['id']:40} {entry['language']} {entry['layout']:13} {entry['origin']:14}"
              f" sections {len(entry['sections']):3} captions {len(entry['captions']):3}"
              f" notes {len(entry['footnotes']):3} refs {len(entry['references']):3}")
    print(f"{len(made)} documents in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
