"""OCR against the born-digital originals: words, boxes, abstracts, cost and false positives.

Usage: python scripts/bench_ocr.py ../shared/realdocs [--docs 12] [--pages 3] [--workers 2]
       [--languages ko,fr] [--variants scan300] [--cipher 2] [--no-born-digital]
       [--config FILE] [--no-reread] [--out DIR] [--json FILE]

From a realdocs-style folder (`manifest.jsonl` with gold abstracts), it keeps the first
`--pages` pages of `--docs` documents (spread over the body languages, or only those of
`--languages`), and more up to the page of the main abstract (a Korean thesis prints it on
its fifth page), as digital copies and makes image-only copies of them: every page rendered
in gray at 200 and at 300 dpi and wrapped as a picture, and a third at 300 dpi with mild
noise and a 1 degree skew (`--variants` keeps some). Each set is built with `build-corpus
local --no-filter` (the copies with `--ocr`, and `--config`: `[ocr] languages = ["Hangul"]`
adds Tesseract's Hangul script model), and the rows are compared with the digital build's,
document by document:

- body words: recall and precision of the bag of body tokens (abstracts already removed by
  both builds), mean and minimum per language; Korean by characters, on every page parsed
  in process (its abstracts may lie beyond the pages kept, so the builds may not publish it);
- boxes: IoU of each OCR word's box with the digital box of the same word on the same page
  (words found once on the page in both);
- abstracts: share of the abstracts found in the digital copy that are found in the image
  copy, and the excess leakage (image copy's leakage minus the digital copy's);
- cost: CPU seconds (every process) per page, and the peak RSS of one process reading
  every copy of a set as a worker does;
- false positives: the born-digital originals, whole, built with `--ocr`: pages OCRed, and
  the share of the parse CPU the detection costs (timed in process);
- the ASCII cipher: `--cipher` generated articles set in a font whose ToUnicode map sends
  letters to punctuation and digits, built with `--ocr` against the same articles in a
  sound font: pages OCRed, words and abstracts as above; and as many generated cover
  pictures without text, read in process: CPU per page, against a full recognition.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pypdfium2 as pdfium
from PIL import Image

VARIANTS = {"scan200": (200, False), "scan300": (300, False), "noisy300": (300, True)}
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def _pick(manifest: list[dict[str, Any]], count: int,
          languages: set[str] | None = None) -> list[dict[str, Any]]:
    """`count` documents with a printed abstract, round-robin over the body languages (those
    of `languages` only, when given)."""
    by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in manifest:
        if record.get("abstracts") and (not languages or record["language"] in languages):
            by_lang[record["language"]].append(record)
    picked: list[dict[str, Any]] = []
    while len(picked) < count and any(by_lang.values()):
        for lang in sorted(by_lang):
            if by_lang[lang] and len(picked) < count:
                picked.append(by_lang[lang].pop(0))
    return picked


def _abstract_page(source: Path, record: dict[str, Any]) -> int:
    """The page of the main abstract in the born-digital original, 0 when not found."""
    from loralay_build.errors import Reject
    from loralay_build.parse import parse_pdf
    from loralay_build.text import prepare_abstract, strip_abstracts
    from loralay_build.text.settings import MatchSettings

    try:
        doc = parse_pdf(source)
        abstracts = {k: prepare_abstract(v, "plain") for k, v in record["abstracts"].items()}
        found = strip_abstracts(doc.words, doc.word_pages, abstracts, record["language"],
                                MatchSettings())
    except Reject:
        return 0
    return max(0, found.matches[0].page)


def _cipher_articles(count: int) -> list[tuple[str, Any]]:
    """`count` generated French articles: (id, spec)."""
    from loralay_build.sandbox.pdfgen import ArticleSpec
    from loralay_build.sandbox.textgen import ProseGenerator

    out = []
    for i in range(count):
        gen = ProseGenerator(900 + i)
        out.append((f"cipher-{i}", ArticleSpec(
            title=gen.title("fr"), authors=gen.authors(),
            abstracts=[("Résumé", gen.paragraph("fr", 4))],
            sections=[(f"{k} Partie", [gen.paragraph("fr", 6) for _ in range(3)])
                      for k in (1, 2)])))
    return out


def cipher_case(work: Path, count: int, workers: int, config: Path | None) -> dict[str, Any]:
    """The ASCII-cipher articles built with `--ocr` against the same articles in a sound
    embedded font."""
    from loralay_build.sandbox.pdfgen import render_article, render_cipher_font

    articles = _cipher_articles(count)
    records = [{"id": name, "language": "fr", "title": spec.title, "date": "2010",
                "abstracts": {"fr": spec.abstracts[0][1]}} for name, spec in articles]
    sets = {"cipher-sound": lambda spec: render_article(spec, embedded_font=True),
            "cipher": render_cipher_font}
    out = work / "data"
    costs = {}
    for name, render in sets.items():
        folder = work / "input" / name
        folder.mkdir(parents=True, exist_ok=True)
        for doc_id, spec in articles:
            (folder / f"{doc_id}.pdf").write_bytes(render(spec))
        costs[name] = _build(_manifest(folder, records), out, name, workers,
                             ocr=name == "cipher", config=config)
    read = _rows(out / "cipher")
    return {**compare(_rows(out / "cipher-sound"), read, {r["id"]: "fr" for r in records}),
            "pages_ocred": sum(o == "ocr" for r in read.values()
                               for o in r["page_text_origin"]),
            **costs["cipher"]}


def picture_cost(count: int) -> dict[str, float]:
    """CPU seconds (this process) of reading a page that is one picture without text (a
    generated photograph-like cover) with `--ocr`: rendering and layout analysis, against
    the same page recognised in full."""
    import pypdfium2 as pdfium

    from loralay_build.parse.ocr import OcrSettings, Reader, _render
    from loralay_build.records import Page
    from loralay_build.sandbox.pdfgen import render_article, with_cover_picture

    settings = OcrSettings(enabled=True)
    reader = Reader(settings)
    reader.engine(["eng"])  # the model loaded before the clock runs
    read = full = 0.0
    for seed, (_, spec) in enumerate(_cipher_articles(count)):
        pdf = pdfium.PdfDocument(with_cover_picture(render_article(spec), seed=seed))
        page = Page(0, *pdf[0].get_size())
        start = time.process_time()
        words = reader.read(pdf, page, ["eng"]).lines
        read += time.process_time() - start
        assert not words, "a picture page read as text"
        start = time.process_time()
        gray, dpi = _render(pdf, 0, settings)
        api = reader.engine(["eng"])
        api.SetImageBytes(gray.tobytes(), gray.shape[1], gray.shape[0], 1, gray.shape[1])
        api.SetSourceResolution(dpi)
        api.Recognize()
        full += time.process_time() - start
        pdf.close()
    reader.close()
    return {"pages": count, "cpu_s_per_page": read / count,
            "cpu_s_per_page_full_recognition": full / count}


def _first_pages(source: Path, pages: int) -> bytes:
    pdf = pdfium.PdfDocument(str(source))
    out = pdfium.PdfDocument.new()
    out.import_pages(pdf, list(range(min(pages, len(pdf)))))
    buffer = io.BytesIO()
    out.save(buffer)
    out.close()
    pdf.close()
    return buffer.getvalue()


def _image_only(data: bytes, dpi: int, noisy: bool, seed: int) -> bytes:
    """Each page as a gray picture at `dpi`, optionally skewed by 1 degree with noise."""
    pdf = pdfium.PdfDocument(data)
    rng = np.random.default_rng(seed)
    images, sizes = [], []
    for page in pdf:
        sizes.append(page.get_size())
        image = page.render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
        if noisy:
            image = image.rotate(1.0, resample=Image.Resampling.BILINEAR, fillcolor=255)
            pixels = np.asarray(image, dtype=np.int16) + rng.normal(0, 12, image.size[::-1])
            image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
        images.append(image)
        page.close()
    pdf.close()
    buffer = io.BytesIO()
    images[0].save(buffer, format="PDF", save_all=True, append_images=images[1:],
                   resolution=float(dpi))
    return buffer.getvalue()


def _manifest(folder: Path, records: list[dict[str, Any]]) -> Path:
    lines = []
    for record in records:
        abstracts = dict(record.get("abstracts") or {})
        lines.append(json.dumps({
            "id": record["id"], "pdf": f"{record['id']}.pdf", "language": record["language"],
            "abstracts": abstracts, "published": record.get("date") or "",
            "title": record.get("title") or ""}, ensure_ascii=False))
    path = folder / "manifest.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _build(manifest: Path, out: Path, name: str, workers: int, ocr: bool,
           config: Path | None = None) -> dict[str, float]:
    """Build one set; CPU of every process and the largest child's peak RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    command = [sys.executable, "-m", "loralay_build.cli", "local", "--input", str(manifest),
               "--out", str(out), "--name", name, "--no-filter", "--workers", str(workers),
               "--allow-empty", "-q", *(["--ocr"] if ocr else []),
               *(["--config", str(config)] if config and ocr else [])]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in (0, 3):
        sys.exit(f"{name}: build failed ({done.returncode}): {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu_s": cpu, "wall_s": time.monotonic() - started,
            "largest_process_rss_mib": after.ru_maxrss / 1024}


def _rows(folder: Path) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.parquet")):
        for row in pq.read_table(path).to_pylist():
            rows[row["article_id"].removeprefix("local:")] = row
    return rows


def _bag(words: list[str]) -> Counter[str]:
    return Counter(t.lower() for w in words for t in _TOKEN.findall(w))


def _recall_precision(found: Counter[str], truth: Counter[str]) -> tuple[float, float]:
    common = sum((found & truth).values())
    return (common / max(1, sum(truth.values())), common / max(1, sum(found.values())))


def _iou(a: list[float], b: list[float]) -> float:
    x0, y0, x1, y1 = max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _unique_words(row: dict[str, Any]) -> dict[tuple[int, str], list[float]]:
    seen: Counter[tuple[int, str]] = Counter()
    boxes: dict[tuple[int, str], list[float]] = {}
    for word, box, page in zip(row["article_words"], row["article_bboxes"], row["word_pages"],
                               strict=True):
        seen[(page, word)] += 1
        boxes[(page, word)] = box
    return {key: box for key, box in boxes.items() if seen[key] == 1 and len(key[1]) > 1}


def compare(digital: dict[str, dict[str, Any]], read: dict[str, dict[str, Any]],
            languages: dict[str, str]) -> dict[str, Any]:
    per_lang: dict[str, list[tuple[float, float]]] = defaultdict(list)
    chars: list[float] = []
    ious: list[float] = []
    wanted = retrieved = 0
    excess: list[float] = []
    missing = sorted(set(digital) - set(read))
    for doc_id, truth in digital.items():
        row = read.get(doc_id)
        if row is None:
            continue
        lang = languages[doc_id]
        per_lang[lang].append(_recall_precision(_bag(row["article_words"]),
                                                _bag(truth["article_words"])))
        if lang == "ko":
            chars.append(_recall_precision(Counter("".join(row["article_words"])),
                                           Counter("".join(truth["article_words"])))[0])
        mine = _unique_words(row)
        for key, box in _unique_words(truth).items():
            if key in mine:
                ious.append(_iou(box, mine[key]))
        found = {m["lang"]: m for m in row["matches"] if m["found"]}
        for match in truth["matches"]:
            if match["found"]:
                wanted += 1
                if match["lang"] in found:
                    retrieved += 1
                    excess.append(found[match["lang"]]["leakage"] - match["leakage"])
    latin = [pair for lang, pairs in per_lang.items() if lang != "ko" for pair in pairs]
    return {
        "documents": len(read), "missing": missing,
        "latin_recall_mean": statistics.fmean(p[0] for p in latin) if latin else 0.0,
        "latin_recall_min": min((p[0] for p in latin), default=0.0),
        "latin_precision_mean": statistics.fmean(p[1] for p in latin) if latin else 0.0,
        "per_language": {lang: {"recall_mean": statistics.fmean(p[0] for p in pairs),
                                "recall_min": min(p[0] for p in pairs),
                                "precision_mean": statistics.fmean(p[1] for p in pairs)}
                         for lang, pairs in sorted(per_lang.items())},
        "korean_char_recall": statistics.fmean(chars) if chars else None,
        "boxes_matched": len(ious),
        "boxes_iou_median": statistics.median(ious) if ious else 0.0,
        "boxes_iou_at_least_half": sum(i >= 0.5 for i in ious) / len(ious) if ious else 0.0,
        "abstract_retrieval": retrieved / wanted if wanted else 0.0,
        "abstracts_over_5pct_excess_leakage": sum(e > 0.05 for e in excess),
    }


def parsed_characters(folders: dict[str, Path], records: list[dict[str, Any]],
                      language: str, variants: dict[str, tuple[int, bool]]
                      ) -> dict[str, float] | None:
    """Character recall and precision of the image copies against the digital ones, parsed
    in process (whether the build published them or not): for scripts whose words do not
    compare as tokens (Korean)."""
    from loralay_build.errors import Reject
    from loralay_build.parse import parse_pdf
    from loralay_build.parse.ocr import OcrSettings

    chosen = [r["id"] for r in records if r["language"] == language]
    if not chosen:
        return None
    out: dict[str, float] = {}
    for name in variants:
        pairs = []
        for doc_id in chosen:
            try:
                truth = parse_pdf(folders["digital"] / f"{doc_id}.pdf").words
                read = parse_pdf(folders[name] / f"{doc_id}.pdf",
                                 ocr=OcrSettings(enabled=True), languages=[language]).words
            except Reject:
                continue
            pairs.append(_recall_precision(Counter("".join(read)), Counter("".join(truth))))
        if pairs:
            out[f"{name}_recall"] = statistics.fmean(p[0] for p in pairs)
            out[f"{name}_precision"] = statistics.fmean(p[1] for p in pairs)
    return out


_WORKER = """
import json, resource, sys
from pathlib import Path
from loralay_build.errors import Reject
from loralay_build.parse import parse_pdf
from loralay_build.parse.ocr import OcrSettings
for path, language in json.loads(sys.argv[1]):
    try:
        parse_pdf(path, ocr=OcrSettings(enabled=True), languages=[language])
    except Reject:
        pass
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def worker_rss(folder: Path, records: list[dict[str, Any]]) -> float:
    """Peak RSS (MiB) of one process reading every copy of `folder` as a worker does: one
    document after the other, its engine kept between documents of the same languages."""
    jobs = [(str(folder / f"{r['id']}.pdf"), r["language"]) for r in records]
    done = subprocess.run([sys.executable, "-c", _WORKER, json.dumps(jobs)],
                          capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def detection_share(pdfs: list[Path]) -> dict[str, float]:
    """CPU of the OCR detection (`pages_to_read`) as a share of parsing the born-digital
    files, in this process."""
    from loralay_build.parse import api, parse_pdf

    spent = [0.0]
    original = api.pages_to_read

    def timed(*args: Any) -> list[int]:
        start = time.process_time()
        try:
            return original(*args)
        finally:
            spent[0] += time.process_time() - start

    api.pages_to_read = timed  # type: ignore[assignment]
    start = time.process_time()
    for path in pdfs:
        try:
            parse_pdf(path)
        except Exception:  # a reject is part of parsing too
            continue
    total = time.process_time() - start
    api.pages_to_read = original
    return {"parse_cpu_s": total, "detection_cpu_s": spent[0],
            "detection_share": spent[0] / total if total else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--docs", type=int, default=12)
    parser.add_argument("--pages", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("bench-ocr"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--languages", help="only documents of these body languages (ko,fr)")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="image-only copies to build (scan200,scan300,noisy300)")
    parser.add_argument("--cipher", type=int, default=2,
                        help="generated ASCII-cipher articles (0: none)")
    parser.add_argument("--no-born-digital", action="store_true",
                        help="skip the false-positive build of every born-digital original")
    parser.add_argument("--config", type=Path, help="config of the --ocr builds")
    parser.add_argument("--no-reread", action="store_true",
                        help="skip reading the copies again in process (worker RSS, Korean "
                             "characters): each costs the OCR of every copy once more")
    args = parser.parse_args()
    variants = {name: VARIANTS[name] for name in args.variants.split(",") if name}
    manifest = [json.loads(line) for line in
                (args.folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]
    records = _pick(manifest, args.docs,
                    set(args.languages.split(",")) if args.languages else None)
    languages = {r["id"]: r["language"] for r in records}
    work = args.out
    work.mkdir(parents=True, exist_ok=True)
    folders = {name: work / "input" / name for name in ("digital", *variants)}
    pages = 0
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    for seed, record in enumerate(records):
        source = args.folder / record["file"]
        digital = _first_pages(source, max(args.pages, _abstract_page(source, record) + 1))
        pages += len(pdfium.PdfDocument(digital))
        (folders["digital"] / f"{record['id']}.pdf").write_bytes(digital)
        for name, (dpi, noisy) in variants.items():
            (folders[name] / f"{record['id']}.pdf").write_bytes(
                _image_only(digital, dpi, noisy, seed))
    report: dict[str, Any] = {"documents": len(records), "pages": pages, "builds": {}}
    out = work / "data"
    costs = {"digital": _build(_manifest(folders["digital"], records), out, "digital",
                               args.workers, ocr=False)}
    truth = _rows(out / "digital")
    for name in variants:
        costs[name] = _build(_manifest(folders[name], records), out, name, args.workers,
                             ocr=True, config=args.config)
        report["builds"][name] = {**compare(truth, _rows(out / name), languages),
                                  **costs[name],
                                  "cpu_s_per_page": costs[name]["cpu_s"] / pages}
        if not args.no_reread:
            report["builds"][name]["worker_rss_mib"] = worker_rss(folders[name], records)
    report["digital"] = costs["digital"]
    if not args.no_reread:
        report["korean_characters"] = parsed_characters(folders, records, "ko", variants)
    if args.cipher:
        report["cipher"] = cipher_case(work, args.cipher, args.workers, args.config)
        report["picture_pages"] = picture_cost(args.cipher)
    if not args.no_born_digital:
        report["false_positives"] = false_positives(args.folder, manifest, work, args.workers)
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")


def false_positives(source: Path, manifest: list[dict[str, Any]], work: Path,
                    workers: int) -> dict[str, Any]:
    """The born-digital originals, whole, built with `--ocr`: pages OCRed, and the share of
    the parse CPU the detection costs."""
    whole = work / "input" / "born-digital"
    whole.mkdir(parents=True, exist_ok=True)
    every = [r for r in manifest if r.get("abstracts")]
    for record in every:
        target = whole / f"{record['id']}.pdf"
        if not target.exists():
            target.write_bytes((source / record["file"]).read_bytes())
    out = work / "data"
    born = _build(_manifest(whole, every), out, "born-digital", workers, ocr=True)
    rows = _rows(out / "born-digital")
    return {
        "documents": len(rows),
        "pages": sum(len(r["page_text_origin"]) for r in rows.values()),
        "pages_ocred": sum(o == "ocr" for r in rows.values() for o in r["page_text_origin"]),
        **born, **detection_share(sorted(whole.glob("*.pdf"))),
    }


if __name__ == "__main__":
    main()
