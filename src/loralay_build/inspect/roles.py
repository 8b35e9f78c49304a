"""The role layers of `inspect`: the words a published row marks as heading, caption,
footnote, table cell or reference (its `word_roles`), outlined in colours of their own over
the kept words, each heading tagged with its level (`H1`, `H2`, from the row's `sections`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw

from loralay_build.records import Box
from loralay_build.structure.roles import Role

ROLE_KINDS: dict[int, str] = {Role.HEADING: "heading", Role.CAPTION: "caption",
                              Role.FOOTNOTE: "footnote", Role.TABLE: "table",
                              Role.REFERENCE: "reference"}
ROLE_COLOURS: dict[str, tuple[int, int, int]] = {
    "caption": (23, 190, 207), "footnote": (140, 86, 75), "table": (127, 127, 127),
    "reference": (227, 119, 194),
}
# Headings darker the higher they rank: level 1, 2, 3 and deeper.
HEADING_COLOURS = ((84, 39, 143), (128, 90, 200), (178, 150, 230))
OUTLINE = 2


@dataclass(frozen=True)
class RoleMark:
    """One word of a role; a heading's `level` (0 for the other roles), `first` for the
    first word of a heading, where its level is written."""

    box: Box
    kind: str
    level: int = 0
    first: bool = False


def colour_of(mark: RoleMark) -> tuple[int, int, int]:
    if mark.kind == "heading":
        return HEADING_COLOURS[min(mark.level, len(HEADING_COLOURS)) - 1]
    return ROLE_COLOURS[mark.kind]


def role_marks(row: dict[str, Any]) -> dict[int, list[RoleMark]]:
    """The row's role words by page (none for a row built before rows had roles)."""
    roles = row.get("word_roles") or []
    levels = [0] * len(roles)
    for section in row.get("sections") or []:
        for i in range(section["word_start"], min(section["word_end"], len(roles))):
            levels[i] = section["level"]
    out: dict[int, list[RoleMark]] = {}
    for i, (role, box, page) in enumerate(zip(roles, row["article_bboxes"], row["word_pages"],
                                              strict=True)):
        kind = ROLE_KINDS.get(role)
        if kind is None:
            continue
        heading = kind == "heading"
        first = heading and (i == 0 or roles[i - 1] != Role.HEADING)
        out.setdefault(page, []).append(RoleMark((box[0], box[1], box[2], box[3]), kind,
                                                 max(1, levels[i]) if heading else 0, first))
    return out


def draw_roles(image: Image.Image, marks: list[RoleMark], scale: float) -> None:
    """Outline each role word; write `H<level>` left of each heading's first word."""
    draw = ImageDraw.Draw(image)
    for mark in marks:
        x0, y0, x1, y1 = (v * scale for v in mark.box)
        colour = colour_of(mark)
        draw.rectangle((x0, y0, x1, y1), outline=colour, width=OUTLINE)
        if mark.first:
            draw.text((max(0.0, x0 - 18), y0), f"H{mark.level}", fill=colour)


def role_legend(marks: list[RoleMark]) -> list[tuple[tuple[int, int, int], str]]:
    """(colour, text) per role drawn on the page, headings by level."""
    counts = Counter((m.kind, m.level) for m in marks)
    return [(colour_of(RoleMark((0, 0, 0, 0), kind, level)),
             f"{kind} (level {level}): {n} words" if kind == "heading" else f"{kind}: {n} words")
            for (kind, level), n in sorted(counts.items())]
