"""Document structure read from the layout: section headings, the sections they open and a
role for every body word (heading, caption, footnote, table, reference list, formula).

Why: a row's words come with boxes, pages, lines and font sizes, which is what a reader uses
to see a heading or a footnote; the published `sections` and `word_roles` columns carry what
they show, so section-aware models and filters need no second parser. The names below are
imported on first use: the card only needs the role table (`structure.roles`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loralay_build.lazy import lazy_attributes

if TYPE_CHECKING:
    from loralay_build.structure.detect import Structure, detect_structure
    from loralay_build.structure.roles import ROLE_NAMES, Role

__all__ = ["ROLE_NAMES", "Role", "Structure", "detect_structure"]

_MODULES = {
    "Structure": "detect",
    "detect_structure": "detect",
    "ROLE_NAMES": "roles",
    "Role": "roles",
}

__getattr__ = lazy_attributes(__name__, _MODULES)
