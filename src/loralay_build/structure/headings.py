"""Section headings found from the layout: a short line that stands apart from the body by
its size or weight, its numbering, the space around it and its capitals.

Why these signals: they are what a reader uses and they hold in every language of the
corpora; a known name ("Introduction", "Métodos", "참고문헌") only adds to a line that
already looks like a heading, so an unknown language or wording is found as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from loralay_build.structure.lines import BodyStyle, TextLine

_ROMAN = r"(?=[IVXLC])M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})"
_DECIMAL = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,4})\.?\)?$")
_ROMAN_NUMBER = re.compile(rf"^{_ROMAN}[.)]$|^{_ROMAN}$")
_LETTER_NUMBER = re.compile(r"^[A-H][.)]$")
# Legal and book divisions, numbered by the next word ("Article 3", "CHAPITRE II").
_DIVISIONS = {
    "part": 1, "partie": 1, "parte": 1, "title": 1, "titre": 1, "título": 1, "titulo": 1,
    "chapter": 1, "chapitre": 1, "capítulo": 1, "capitulo": 1, "annex": 1, "annexe": 1,
    "anexo": 1, "appendix": 1, "apêndice": 1, "apéndice": 1,
    "section": 2, "sección": 2, "seção": 2, "secção": 2,
    "article": 3, "artigo": 3, "artículo": 3, "articulo": 3,
}
_DIVISION_NUMBER = re.compile(rf"^(?:\d{{1,3}}[a-z]?|{_ROMAN}|[A-Z])[.:]?$")
# Words that open many papers' sections; they only raise a line's score.
KNOWN_NAMES = frozenset({
    "introduction", "introdução", "introducción", "introduccion", "conclusion",
    "conclusions", "conclusão", "conclusões", "conclusiones", "conclusión", "méthodes",
    "methods", "method", "métodos", "metodologia", "metodología", "methodology",
    "materials", "material", "matériel", "resultados", "results", "résultats", "result",
    "discussion", "discussão", "discusión", "references", "références", "referências",
    "referencias", "bibliografía", "bibliographie", "bibliography", "bibliografia",
    "acknowledgements", "acknowledgments", "acknowledgement", "remerciements",
    "agradecimentos", "agradecimientos", "background", "contexte", "related", "evaluation",
    "évaluation", "avaliação", "evaluación", "experiments", "expériences", "experimentos",
    "abstract", "appendix", "annexe", "서론", "결론", "참고문헌", "요약", "실험", "결과", "관련",
    "연구", "고찰", "방법", "논의",
})
_CAPTION_START = re.compile(
    r"^(fig(?:ure|\.|ura|uur)?|tab(?:le|\.|ela|la|leau)?|quadro|gráfico|grafico|chart|"
    r"graph|abbildung|scheme|plate|lâmina|그림|표)$", re.IGNORECASE)

MIN_SCORE = 3.0
MAX_WORDS = 16


@dataclass
class Heading:
    """A heading: lines [first, last] of the line list, its numbering depth (0: none) and
    the style that ranks it against the others."""

    first: int
    last: int
    depth: int
    style: tuple[float, bool, bool]  # (size, bold, all capitals)
    level: int = 1


def numbering(words: list[str]) -> tuple[int, int]:
    """(depth, words the numbering takes) of a line's leading number: `2.1` -> (2, 1),
    `IV.` -> (1, 1), `A.` -> (2, 1), `Article 5` -> (3, 2); (0, 0) when unnumbered."""
    if not words:
        return 0, 0
    first = words[0]
    found = _DECIMAL.match(first)
    if found and len(words) > 1:
        return found.group(1).count(".") + 1, 1
    if _ROMAN_NUMBER.match(first) and len(words) > 1 and (first[-1] in ".)" or len(first) > 1):
        return 1, 1
    if _LETTER_NUMBER.match(first) and len(words) > 1:
        return 2, 1
    division = _DIVISIONS.get(first.lower())
    if division and len(words) >= 2 and _DIVISION_NUMBER.match(words[1]):
        return division, 2
    return 0, 0


def is_caption_start(words: list[str]) -> bool:
    """The line opens with "Figure 2", "Fig. 3:", "Tabela 1", "TABLE IV" and the like."""
    if len(words) < 2:
        return False
    head, number = words[0], words[1]
    if not _CAPTION_START.match(head.rstrip(".:")) and not _CAPTION_START.match(head):
        return False
    return bool(re.match(rf"^(?:\d{{1,3}}[a-z]?|{_ROMAN}|[A-Z])(?:[.:)\-–—]|$)", number))


def _all_caps(line: TextLine) -> bool:
    letters = line.letters
    return len(letters) >= 3 and letters.isupper()


def _starts_upper(words: list[str]) -> bool:
    for ch in " ".join(words):
        if ch.isalpha():
            return ch.isupper() or (not ch.islower() and not ch.isupper())  # uncased: Hangul
    return False


def line_score(line: TextLine, body: BodyStyle) -> float:
    """How much a line looks like a heading (or the first line of one); below MIN_SCORE
    it is body text."""
    words = line.words
    count = len(words)
    if count == 0 or count > MAX_WORDS or len(line.letters) < 2:
        return 0.0
    if is_caption_start(words):
        return 0.0
    depth, taken = numbering(words)
    rest = words[taken:]
    if not rest or not _starts_upper(rest):
        return 0.0
    ratio = line.size / body.size
    score = 0.0
    if ratio >= 1.15:
        score += 2.0
    elif ratio >= 1.05:
        score += 1.0
    elif ratio < 0.93:
        score -= 2.0
    if line.bold:
        score += 2.0
    if depth:
        score += 2.0
    if _all_caps(line) and count <= 10:
        score += 1.0
    gap = body.gap + 0.25 * body.size
    if line.gap_above < 0 or line.gap_above > gap:
        score += 1.0
    if line.gap_below > gap:
        score += 1.0
    name = " ".join(rest).lower().strip(" .:")
    if name in KNOWN_NAMES or (rest and rest[0].lower().strip(".:") in KNOWN_NAMES):
        score += 1.0
    last = line.text[-1]
    if last in ",;":
        score -= 2.0
    elif last == "." and not (depth and count <= 3):
        score -= 1.0
    if count > 10:
        score -= 1.0
    if sum(ch.isdigit() for ch in " ".join(rest)) > 4:
        score -= 1.0
    return score


def _continues(head: TextLine, line: TextLine, body: BodyStyle) -> bool:
    """`line` carries on the heading that `head` opens: same block, same style, set apart
    from the body by size or weight, with a normal line gap between."""
    return (line.page == head.page and line.block == head.block
            and abs(line.size - head.size) <= 0.05 * head.size and line.bold == head.bold
            and (line.bold or line.size >= 1.05 * body.size)
            and 0 <= line.gap_above <= body.gap + 0.25 * body.size
            and len(line.words) <= MAX_WORDS and numbering(line.words) == (0, 0))


def find_headings(lines: list[TextLine], body: BodyStyle, skip: set[int]) -> list[Heading]:
    """The headings among `lines`, in order; lines in `skip` (captions, footnotes, tables)
    are never headings."""
    out: list[Heading] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if i in skip or line_score(line, body) < MIN_SCORE:
            i += 1
            continue
        last = i
        words = len(line.words)
        while (last + 1 < len(lines) and last + 1 not in skip and words < 24
               and _continues(line, lines[last + 1], body)):
            last += 1
            words += len(lines[last].words)
        depth, _ = numbering(line.words)
        style = (round(line.size * 2) / 2, line.bold, _all_caps(line))
        out.append(Heading(i, last, depth, style))
        i = last + 1
    assign_levels(out)
    return out


def assign_levels(headings: list[Heading]) -> None:
    """Levels from numbering depth, and for unnumbered headings from their style's rank:
    a style a numbered heading wears gives its depth, other styles rank by size, weight
    and capitals below or above them."""
    by_style: dict[tuple[float, bool, bool], int] = {}
    for heading in headings:
        if heading.depth:
            known = by_style.get(heading.style)
            by_style[heading.style] = min(known, heading.depth) if known else heading.depth
    styles = sorted({h.style for h in headings}, key=lambda s: (-s[0], not s[1], not s[2]))
    rank = {style: i + 1 for i, style in enumerate(styles)}
    numbered_top = min((h.depth for h in headings if h.depth), default=0)
    for heading in headings:
        if heading.depth:
            heading.level = heading.depth
        elif heading.style in by_style:
            heading.level = by_style[heading.style]
        elif numbered_top:
            above = [d for s, d in by_style.items() if rank[s] < rank[heading.style]]
            heading.level = max(above) + 1 if above else 1
        else:
            heading.level = rank[heading.style]
        heading.level = max(1, min(heading.level, 6))
