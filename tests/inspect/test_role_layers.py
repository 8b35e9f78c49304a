"""`inspect` draws the row's roles: headings with their level, captions, footnotes and the
reference list, each outlined in a colour of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from loralay_build.inspect.layers import document_layers
from loralay_build.inspect.locate import find_row
from loralay_build.inspect.render import SCALE
from loralay_build.inspect.roles import HEADING_COLOURS, ROLE_COLOURS
from loralay_build.structure.roles import Role
from tests.helpers.cli import run_cli_in_process
from tests.helpers.local import write_manifest
from tests.helpers.papers import CAPTION_WORD, REFERENCE_WORD, structured_papers


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("roles")
    manifest = write_manifest(root / "docs.jsonl", structured_papers(root, 1))
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(root / "data"),
                                "--executor", "serial", "--no-filter")
    assert result.returncode == 0, result.stderr
    return root / "data" / "local"


def test_role_words_are_layered_with_heading_levels(dataset: Path) -> None:
    row = find_row(dataset, "local:paper0")
    assert row is not None
    layers = document_layers(dataset, "local:paper0", all_pages=True)
    marks = [m for page in layers.pages.values() for m in page.roles]
    roles = row["word_roles"]
    for kind, role in (("heading", Role.HEADING), ("caption", Role.CAPTION),
                       ("reference", Role.REFERENCE)):
        assert sum(m.kind == kind for m in marks) == roles.count(role) > 0
    firsts = [m for m in marks if m.first]
    titled = [s for s in row["sections"] if s["title"]]
    assert len(firsts) == len(titled)  # one level tag per heading
    assert [m.level for m in firsts] == [s["level"] for s in titled]
    boxes = {tuple(b) for b, w in zip(row["article_bboxes"], row["article_words"], strict=True)
             if CAPTION_WORD in w or REFERENCE_WORD in w}
    assert boxes <= {m.box for m in marks if m.kind in ("caption", "reference")}


def test_roles_are_outlined_in_their_colours(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "page.png"
    result = run_cli_in_process("inspect", str(dataset), "local:paper0", "--page", "1", "--out",
                                str(out))
    assert result.returncode == 0, result.stderr
    image = Image.open(out).convert("RGB")
    layers = document_layers(dataset, "local:paper0", all_pages=True)
    for kind, colour in (("heading", HEADING_COLOURS[0]), ("caption", ROLE_COLOURS["caption"]),
                         ("reference", ROLE_COLOURS["reference"])):
        mark = next(m for m in layers.pages[0].roles if m.kind == kind)
        x0, y0, x1, y1 = (round(v * SCALE) for v in mark.box)
        outline = image.crop((x0 - 1, y0 - 1, x1 + 2, y1 + 2))  # the word's own box
        assert colour in {c for _, c in outline.getcolors(maxcolors=1 << 16) or []}, kind
