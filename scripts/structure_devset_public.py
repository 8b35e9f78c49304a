"""Rebuild the public part of the structure development set: PDFs from public repositories
paired with their publisher's gold structure, none of them from the realdocs folder.

The pairs are listed in `structure_devset_public.json` beside this script: an id, the
language and layout of the PDF, the gold's kind, and for the PDF and its gold the
repository, path, commit and SHA-256 of the file. The files are not ours to publish, so each
run fetches them from GitHub's raw URLs at the listed commit, or copies them from a folder of
copies already fetched (`--from DIR`, laid out as `DIR/<owner>/<repo>/<path>`), checks their
SHA-256, keeps them under `<out>/files/`, and converts each gold (the JATS, ISIS and HTML
readers are `structure_devset.py`'s):

- `jats`: SciELO JATS (`sec/title`, `fig`, `table-wrap`, `fn`, `ref-list`); with
  `sub_article`, the translation of that language printed as its own PDF, else the main
  article without its translations (a translation without references of its own prints
  the article's); `ref_list_title` names the reference list's printed heading where the
  XML leaves it untitled or its title empty (or where a translation borrows it);
- `isis`: a SciELO ISIS full-text record (the body's HTML, bold paragraphs as headings);
- `scielo-html`: a SciELO translation page (the same HTML reading);
- `erudit`: Érudit's article XML (`corps//sectionN/titre` at level N, `grnote/note`,
  `grbiblio//refbiblio`, `figure`/`tableau` captions, `resume`); `ref_list_title` names the
  bibliography's printed heading (the XML has none; its bibliography's divisions are not
  read, as a test fixture may retitle them).

`more_abstracts` lists further files (translation pages) whose abstracts the PDF also prints.

Writes `<out>/<id>.json` per document in `structure_devset.py`'s format, so
`bench_structure.py` scores them unchanged; its provenance names the repository, path and
commit of both files. Also writes `<out>/manifest.jsonl` with each document's title and
abstracts as the gold gives them (JATS `abstract`/`trans-abstract`, the HTML paragraphs under
"Abstract/Resumo/Resumen"), so that the benchmark removes the abstracts before the detector
runs, as a build does.

    python3 scripts/structure_devset_public.py /tmp/devset-public
    python3 scripts/structure_devset_public.py /tmp/devset-public --from /data/copies
    python3 scripts/bench_structure.py /tmp/devset-public --realdocs /tmp/devset-public
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from structure_devset import HELD_OUT, _paragraphs, html_gold, isis_gold, jats_gold

HERE = Path(__file__).resolve().parent
PAIRS = HERE / "structure_devset_public.json"
RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"
# Folders held out for evaluation (repository, path prefix): never part of the set.
HELD_OUT_FOLDERS = (
    ("scieloorg/packtools", "tests/fixtures/pdf/"),
    ("scieloorg/packtools", "tests/sps/fixtures/"),
    ("scieloorg/scms-upload", "migration/fixtures/classic_website/bases/xml/"),
    ("scieloorg/document-store-migracao", "tests/samples/"),
)
ORIGIN = {"jats": "jats", "isis": "isis-html", "scielo-html": "scielo-html",
          "erudit": "erudit"}
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_ABSTRACT_HEADS = {"abstract": "en", "summary": "en", "resumo": "pt", "resumen": "es",
                   "résumé": "fr"}
_KEYWORDS = re.compile(r"^(descriptores|descritores|keywords|key words|palavras-chave|"
                       r"palabras clave|mots-clés|descriptors|uniterms)", re.IGNORECASE)


class PairError(Exception):
    """A pair that cannot be rebuilt; the message says why."""


def held_out(file: dict[str, str]) -> bool:
    return any(file["repo"] == repo and file["path"].startswith(prefix)
               for repo, prefix in HELD_OUT_FOLDERS) or any(
        name in file["path"] for name in HELD_OUT)


def obtain(file: dict[str, str], files: Path, local: Path | None) -> Path:
    """The file under `files`, copied from `local` or downloaded, its SHA-256 checked."""
    target = files / file["repo"] / file["path"]
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        copy = local / file["repo"] / file["path"] if local else None
        if copy is not None and copy.exists():
            shutil.copyfile(copy, target)
        else:
            url = RAW.format(**file)
            try:
                with urllib.request.urlopen(url, timeout=60) as response:
                    data = response.read()
            except (urllib.error.URLError, TimeoutError) as error:
                where = f"not in {local} and " if local else ""
                raise PairError(f"{file['path']}: {where}not downloaded from {url}: "
                                f"{error}") from error
            target.write_bytes(data)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    if digest != file["sha256"]:
        target.unlink()
        raise PairError(f"{file['path']}: SHA-256 {digest} is not the listed "
                        f"{file['sha256']}")
    return target


def _text(node: ET.Element) -> str:
    return " ".join("".join(node.itertext()).split())


def jats_part(path: Path, sub_article: str | None, ref_list_title: str | None
              ) -> tuple[dict[str, Any], dict[str, str], str]:
    """Gold, abstracts by language and title of the main article (translations left out)
    or of one translation."""
    root = ET.parse(path).getroot()
    subs = [el for el in root if el.tag == "sub-article"]
    if sub_article is None:
        part = root
        for el in subs:
            root.remove(el)
    else:
        found = next((el for el in subs if el.get(XML_LANG) == sub_article), None)
        if found is None:
            raise PairError(f"{path.name}: no sub-article in {sub_article!r}")
        part = ET.Element("article", {XML_LANG: sub_article})
        part.extend(found)
        shared = root.find("back/ref-list")
        back = part.find("back")
        if shared is not None and next(part.iter("ref-list"), None) is None:
            # the translation's PDF prints the article's references ahead of its back matter
            if back is None:
                back = ET.SubElement(part, "back")
            for printed in shared.findall("title"):
                shared.remove(printed)
            back.insert(0, shared)
    for refs in part.iter("ref-list"):
        heading = refs.find("title")
        if ref_list_title and (heading is None or not _text(heading)):
            if heading is None:
                heading = ET.Element("title")
                refs.insert(0, heading)
            heading.text = ref_list_title
    main = part.get(XML_LANG, "")
    abstracts: dict[str, str] = {}
    for kind in ("abstract", "trans-abstract"):
        for el in part.iter(kind):
            if el.get("abstract-type") in ("graphical", "key-points"):
                continue
            heading = el.find("title")
            text = " ".join(_text(c) for c in el if c is not heading)
            lang = el.get(XML_LANG) or main
            if text and lang not in abstracts:
                abstracts[lang] = text
    title_el = next(part.iter("article-title"), None)
    with tempfile.TemporaryDirectory() as tmp:
        single = Path(tmp) / path.name
        ET.ElementTree(part).write(single, encoding="utf-8")
        gold = jats_gold(single)
    return gold, abstracts, _text(title_el) if title_el is not None else ""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _own_text(node: ET.Element) -> str:
    """Text of a node without its `no` (a note's number)."""
    parts = [node.text or ""]
    for child in node:
        if _local(child.tag) != "no":
            parts.append("".join(child.itertext()))
        parts.append(child.tail or "")
    return " ".join("".join(parts).split())


def erudit_gold(path: Path, ref_list_title: str | None
                ) -> tuple[dict[str, Any], dict[str, str], str]:
    """Gold, abstracts by language and title of an Érudit article."""
    root = ET.parse(path).getroot()
    sections: list[dict[str, Any]] = []
    for el in root.iter():
        tag = _local(el.tag)
        if re.fullmatch(r"section[1-6]", tag) or tag in ("merci", "annexe"):
            title = next((c for c in el if _local(c.tag) == "titre"), None)
            text = _text(title) if title is not None else ""
            if text:
                level = int(tag[-1]) if tag.startswith("section") else 1
                sections.append({"title": text, "level": level})
    if ref_list_title and any(_local(el.tag) == "grbiblio" for el in root.iter()):
        sections.append({"title": ref_list_title, "level": 1})
    notes = [_own_text(el) for el in root.iter() if _local(el.tag) == "note"]
    refs = [_text(el) for el in root.iter() if _local(el.tag) == "refbiblio"]
    captions = [" ".join(_text(c) for c in el if _local(c.tag) in ("no", "legende"))
                for el in root.iter() if _local(el.tag) in ("figure", "tableau")]
    abstracts = {el.get("lang", ""): " ".join(_text(c) for c in el if _local(c.tag) != "titre")
                 for el in root.iter() if _local(el.tag) == "resume"}
    heading = next((el for el in root.iter() if _local(el.tag) == "grtitre"), None)
    first = next((c for c in heading if _local(c.tag) == "titre"), None) if (
        heading is not None) else None
    gold = {"sections": sections, "captions": [c for c in captions if c],
            "footnotes": [n for n in notes if n], "references": refs}
    return gold, {k: v for k, v in abstracts.items() if k and v}, (
        _text(first) if first is not None else "")


def html_abstracts(markup: str) -> dict[str, str]:
    """The paragraphs under an "Abstract/Resumo/Resumen" heading, up to the keywords."""
    abstracts: dict[str, str] = {}
    lang: str | None = None
    taken: list[str] = []
    for _, text in _paragraphs(markup):
        head = _ABSTRACT_HEADS.get(text.strip(" :.").lower())
        if head:
            lang, taken = head, []
        elif lang and _KEYWORDS.match(text):
            abstracts.setdefault(lang, " ".join(taken))
            lang = None
        elif lang and text.strip("\xa0 "):
            taken.append(text)
    return {k: v for k, v in abstracts.items() if v}


def gold_of(pair: dict[str, Any], path: Path) -> tuple[dict[str, Any], dict[str, str], str]:
    """The gold, the abstracts by language and the title."""
    kind = pair["gold_kind"]
    try:
        if kind == "jats":
            return jats_part(path, pair.get("sub_article"), pair.get("ref_list_title"))
        if kind == "isis":
            data = path.read_bytes().decode("latin-1")
            body = "\n".join(re.findall(r"^!v704!(.*?)\s*\^cY\s*$", data, re.M))
            return isis_gold(path), html_abstracts(body), ""
        if kind == "scielo-html":
            markup = path.read_bytes().decode("latin-1")
            return html_gold(markup), html_abstracts(markup), ""
        if kind == "erudit":
            return erudit_gold(path, pair.get("ref_list_title"))
    except ET.ParseError as error:
        raise PairError(f"{path.name}: not well-formed XML: {error}") from error
    raise PairError(f"{pair['id']}: unknown gold kind {kind!r}")


def build(out: Path, local: Path | None, pairs: list[dict[str, Any]]
          ) -> tuple[list[dict[str, Any]], list[str]]:
    """The entries written, and the reasons of the pairs left out."""
    out.mkdir(parents=True, exist_ok=True)
    files = out / "files"
    made: list[dict[str, Any]] = []
    skipped: list[str] = []
    records: list[dict[str, Any]] = []
    for pair in pairs:
        try:
            if any(held_out(f) for f in (pair["pdf"], pair["gold"],
                                         *pair.get("more_abstracts", []))):
                raise PairError(f"{pair['id']}: held out for evaluation")
            pdf = obtain(pair["pdf"], files, local)
            gold, abstracts, title = gold_of(pair, obtain(pair["gold"], files, local))
            for extra in pair.get("more_abstracts", []):
                markup = obtain(extra, files, local).read_bytes().decode("latin-1")
                abstracts = {**html_abstracts(markup), **abstracts}
            if not gold["sections"]:
                raise PairError(f"{pair['id']}: the gold has no heading")
        except PairError as error:
            skipped.append(str(error))
            continue
        entry = {"id": pair["id"], "pdf": str(pdf.resolve()), "language": pair["language"],
                 "layout": pair["layout"], "origin": ORIGIN[pair["gold_kind"]],
                 "provenance": {key: [pair[key]["repo"], pair[key]["path"], pair[key]["commit"]]
                                for key in ("pdf", "gold")},
                 **gold}
        (out / f"{pair['id']}.json").write_text(json.dumps(entry, ensure_ascii=False, indent=1),
                                                encoding="utf-8")
        made.append(entry)
        records.append({"id": pair["id"], "language": pair["language"], "title": title,
                        "abstracts": abstracts, "doc_kind": "article"})
    with (out / "manifest.jsonl").open("w", encoding="utf-8") as manifest:
        for record in records:
            manifest.write(json.dumps(record, ensure_ascii=False) + "\n")
    return made, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the pairs and their gold")
    parser.add_argument("--from", dest="local", type=Path,
                        help="copies already fetched, as DIR/<owner>/<repo>/<path>")
    parser.add_argument("--pairs", type=Path, default=PAIRS, help="the pair list")
    args = parser.parse_args(argv)
    pairs = json.loads(args.pairs.read_text(encoding="utf-8"))
    made, skipped = build(args.out, args.local, pairs)
    for entry in made:
        print(f"{entry['id']:32} {entry['language']} {entry['layout']:13} {entry['origin']:12}"
              f" sections {len(entry['sections']):3} captions {len(entry['captions']):3}"
              f" notes {len(entry['footnotes']):3} refs {len(entry['references']):3}")
    for line in (args.out / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        print(f"{record['id']:32} abstracts {sorted(record['abstracts'])}")
    for reason in skipped:
        print(f"left out: {reason}", file=sys.stderr)
    print(f"{len(made)} documents in {args.out}, {len(skipped)} left out")
    return 0 if made else 1


if __name__ == "__main__":
    sys.exit(main())
