"""`inspect` draws what the build did: the words between two pieces of an abstract that
the row keeps are drawn kept, not removed; a default build gets no excuse in the picture;
when the parse differs from the row because of a setting, the setting is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reportlab.pdfgen import canvas

from loralay_build.inspect.layers import ABSTRACT, KEPT, document_layers
from loralay_build.inspect.locate import find_row
from loralay_build.sandbox.textgen import ProseGenerator
from loralay_build.state import SETTINGS_MARK, State
from tests.helpers.cli import run_cli_in_process

FOOTNOTE = ("Correspondence to Maria Silva, Rua das Flores 12, Sao Paulo. Funded by grant "
            "4521 of the research council. Received March 2003, accepted July 2003.")


def _lines(c: canvas.Canvas, text: str, y: float, size: int = 10, width: int = 95) -> float:
    """Draw `text` wrapped at `width` characters from height `y`; the height below it."""
    c.setFont("Helvetica", size)
    line: list[str] = []
    rows = []
    for word in text.split():
        if line and sum(len(x) + 1 for x in line) + len(word) > width:
            rows.append(" ".join(line))
            line = []
        line.append(word)
    rows.append(" ".join(line))
    for row in rows:
        c.drawString(60, y, row)
        y -= size + 4
    return y


def split_abstract_pdf(path: Path) -> str:
    """Page 1: body, then the first half of the abstract, a footnote at the foot of the
    page; page 2: the second half, then body. Returns the abstract."""
    gen = ProseGenerator(7)
    abstract = gen.paragraph("en", 6)
    body = [gen.paragraph("en", 6) for _ in range(6)]
    words = abstract.split()
    half = len(words) // 2
    c = canvas.Canvas(str(path), pagesize=(612, 792))
    y = 740.0
    for paragraph in body[:3]:
        y = _lines(c, paragraph, y) - 10
    c.setFont("Helvetica-Bold", 11)
    c.drawString(60, y - 4, "Abstract")
    _lines(c, " ".join(words[:half]), y - 20)
    _lines(c, FOOTNOTE, 60, size=7, width=140)
    c.showPage()
    y = _lines(c, " ".join(words[half:]), 740)
    for paragraph in body[3:]:
        y = _lines(c, paragraph, y - 12)
    c.showPage()
    c.save()
    return abstract


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("split")
    abstract = split_abstract_pdf(root / "split.pdf")
    (root / "docs.jsonl").write_text(json.dumps(
        {"id": "split", "pdf": "split.pdf", "language": "en", "abstracts": {"en": abstract}})
        + "\n")
    result = run_cli_in_process("local", "--input", str(root / "docs.jsonl"), "--out",
                                str(root / "out"),
                                "--no-filter", "--executor", "serial", "-q")
    assert result.returncode == 0, result.stderr
    return root / "out" / "local"


def test_words_between_the_pieces_of_an_abstract_stay_kept(dataset: Path) -> None:
    row = find_row(dataset, "local:split")
    assert row is not None
    (match,) = row["matches"]
    assert match["found"] and match["page"] == 0
    layers = document_layers(dataset, "split")
    assert layers.drawn == [0] and layers.notes == []
    marks = layers.pages[0].marks
    kept = [(m.text, m.box) for m in marks if m.kind == KEPT]
    assert kept == [(w, tuple(b)) for w, b, p in zip(row["article_words"], row["article_bboxes"],
                                                     row["word_pages"], strict=True) if p == 0]
    footnote = {w.strip(".,") for w in FOOTNOTE.split()}
    kept_footnote = {m.text.strip(".,") for m in marks if m.kind == KEPT} & footnote
    # the row keeps the footnote (all of it but what the match swallowed), inside the
    # match's word range: the picture keeps it too
    in_row = {w.strip(".,") for w in row["article_words"]} & footnote
    assert {"Funded", "grant", "Received", "accepted"} <= in_row
    assert kept_footnote == in_row
    removed = [m for m in marks if m.kind == ABSTRACT]
    assert removed and {m.label for m in removed} == {"en"}
    assert not {m.text.strip(".,") for m in removed} & {"Funded", "grant", "Received",
                                                         "accepted", "Flores", "Maria"}
    second = document_layers(dataset, "local:split", page=2)
    assert [m.label for m in second.pages[1].marks if m.kind == ABSTRACT]
    assert second.notes == []


def test_a_setting_that_changes_the_parse_is_named(dataset: Path, tmp_path: Path) -> None:
    """The build state now records another PDF backend than the one the rows were made
    with: the picture parses with it, cannot line it up with the row, and says so."""
    state = State(dataset.parent)
    try:
        raw = json.loads(state.get_mark("local", SETTINGS_MARK) or "{}")
        raw.setdefault("parse", {})["backend"] = "poppler"
        state.set_mark("local", SETTINGS_MARK, json.dumps(raw))
        layers = document_layers(dataset, "split")
    finally:
        raw["parse"]["backend"] = "pdfium"
        state.set_mark("local", SETTINGS_MARK, json.dumps(raw))
        state.close()
    (note,) = layers.notes
    assert "[parse] backend = 'poppler'" in note, note
    assert not [m for m in layers.pages[0].marks if m.kind == ABSTRACT]
    out = tmp_path / "p.png"
    result = run_cli_in_process("inspect", str(dataset), "split", "--out", str(out))
    assert result.returncode == 0 and out.is_file(), result.stderr
