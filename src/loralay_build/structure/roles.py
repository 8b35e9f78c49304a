"""The code table of the `word_roles` column: one int8 per word of `article_words`.

Declared once here; the dataset card, the views and `inspect` read it from this module.
"""

from __future__ import annotations

from enum import IntEnum


class Role(IntEnum):
    """What a body word is part of, as the layout shows it."""

    BODY = 0
    HEADING = 1  # a section heading (its numbering included)
    CAPTION = 2  # a figure or table caption ("Figure 2.", "Tabela 1", "Tableau 3")
    FOOTNOTE = 3  # a note set small at the bottom of a page
    TABLE = 4  # a cell of a table (words aligned on a grid)
    REFERENCE = 5  # an entry of the reference list (bibliography)
    FORMULA = 6  # a displayed formula
    OTHER = 7  # the printed title, page furniture


ROLE_NAMES: dict[int, str] = {role.value: role.name.lower() for role in Role}


def role_table() -> str:
    """The code table as one line of text (`0 body, 1 heading, ...`), for the card."""
    return ", ".join(f"{code} {name}" for code, name in ROLE_NAMES.items())
