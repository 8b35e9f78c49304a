"""Section headings found from the layout: a short line that stands apart from the body by
its size or weight, its numbering, the space around it and its capitals.

Why these signals: they are what a reader uses and they hold in every language of the
corpora; a known name ("Introduction", "Métodos", "참고문헌") only adds to a line that
already looks like a heading, so an unknown language or wording is found as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from loralay_build.structure.lines import (
    BodyStyle,
    Lines,
    either_case,
    indices,
    letters,
    opening_pairs,
)

_ROMAN = r"(?=[IVXLC])M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})"
_DECIMAL = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,4})\.?$")
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
_DIVISION_NUMBER = re.compile(
    rf"^(?:\d{{1,3}}(?:\.?[oº°ª])?[a-z]?|{_ROMAN}|[A-Z]|premier|première|unique|único|única)"
    r"[.:]?$", re.IGNORECASE)
_ORDINAL = frozenset({"o", "º", "°", "ª", "a", "er", "re", "e"})  # "Artigo 1.o", "Article 1er"
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
MAX_LEVEL = 6  # the deepest level a heading gets
_DIGIT = re.compile(r"\d")
# What a numbered heading's first word may open with (a cheap test before `numbering`), and
# the two ASCII characters it can start with.
_NUMBER_START = re.compile(
    r"\n(?:\d{1,2}(?:\.\d{1,2}){0,4}\.?$|[IVXLC]+[.)]?$|[A-H][.)]$"
    r"|(?i:art|cha|cap|sec|tit|par|ann|app|anex))", re.MULTILINE)
_NUMBER_PAIRS = opening_pairs([
    *(a + b for a in "0123456789" for b in "0123456789.\n"),
    *(a + b for a in "IVXLC" for b in "IVXLC.)\n"),
    *(a + b for a in "ABCDEFGH" for b in ".)"),
    *either_case(["ar", "ch", "ca", "se", "ti", "pa", "an", "ap"]),
])
_TWO_LETTERS = re.compile(r"[^\W\d_].*[^\W\d_]")
_CARRIES_ON = frozenset(",;:.)]}-–—")
# What a line's size against the body's adds to its score, as `line_score` counts it: below
# the first step, between two steps, past the last.
_SIZE_STEPS = np.array([0.93, 1.05, 1.15])
_SIZE_SCORES = np.array([-2.0, 0.0, 1.0, 2.0])
# By a line's first character (code point, 128 for any beyond ASCII): it carries on a
# sentence, as a lower-case letter that opens no division's name or punctuation does.
_RUNS_ON = np.zeros(129, dtype=bool)
_RUNS_ON[[ord(c) for c in ",;:.)]}-bdefghijklmnoqruvwxyz"]] = True
# What a first word that `numbering` accepts may look like (a cheap superset).
_NUMBERED_FIRST = re.compile(r"\d|[IVXLCDM]+[.)]?$|[A-H][.)]$")
_LEADER = re.compile(r"\.\s?\.\s?\.|…")
_YEAR = re.compile(r"\b(?:1[89]|20)\d\d\b")
_CAPTION_NUMBER = re.compile(rf"^(?:\d{{1,3}}[a-z]?|{_ROMAN}|[A-Z])(?:[.:)\-–—]|$)")
CAPTION_PREFIXES = frozenset({"fig", "tab", "qua", "grá", "gra", "cha", "abb", "sch", "pla",
                               "lâm", "그림", "표"})


@dataclass
class Heading:
    """A heading: lines [first, last], its numbering depth (0: none), whether numbering or a
    known name anchors it, and the style that ranks it against the others."""

    first: int
    last: int
    depth: int
    anchored: bool
    style: tuple[float, bool, bool]  # (size, bold, all capitals)
    level: int = 1


def numbering(words: list[str]) -> tuple[int, int]:
    """(depth, words the numbering takes) of a line's leading number: `2.1` -> (2, 1),
    `IV.` -> (1, 1), `A.` -> (2, 1), `Article 5` -> (3, 2); (0, 0) when unnumbered."""
    if not words:
        return 0, 0
    first = words[0]
    if len(words) > 1 and (first[:1].isdecimal() or first[:1] in "IVXLCABDEFGH"):
        found = _DECIMAL.match(first)
        if found:
            return found.group(1).count(".") + 1, 1
        if _ROMAN_NUMBER.match(first) and (first[-1] in ".)" or len(first) > 1):
            return 1, 1
        if _LETTER_NUMBER.match(first):
            return 2, 1
    division = _DIVISIONS.get(first.lower())
    if division and len(words) >= 2 and _DIVISION_NUMBER.match(words[1]):
        return division, 3 if len(words) > 2 and words[2] in _ORDINAL else 2
    return 0, 0


def is_caption_start(words: list[str]) -> bool:
    """The line opens with "Figure 2", "Fig. 3:", "Tabela 1", "TABLE IV" and the like."""
    if len(words) < 2 or (words[0][:3].lower() not in CAPTION_PREFIXES and (
            words[0] not in ("그림", "표"))):
        return False
    head, number = words[0], words[1]
    if not _CAPTION_START.match(head.rstrip(".:")) and not _CAPTION_START.match(head):
        return False
    return bool(_CAPTION_NUMBER.match(number))


def _all_caps(text: str) -> bool:
    return text.isupper() and len(letters(text)) >= 3


def _opens_upper(words: list[str]) -> bool:
    """The first letter is a capital or of a script without case (Hangul, CJK), and the
    line does not open with punctuation that carries on a sentence."""
    if not words or words[0][0] in ",;:.)]}-–—":
        return False
    for ch in words[0] if words[0][0].isalpha() else " ".join(words):
        if ch.isalpha():
            return ch.isupper() or not ch.islower()
    return False


def is_known_name(words: list[str]) -> bool:
    name = " ".join(words).lower().strip(" .:")
    return name in KNOWN_NAMES or (bool(words) and words[0].lower().strip(".:") in KNOWN_NAMES)


def candidates(lines: Lines, body: BodyStyle, skip: np.ndarray) -> list[int]:
    """Indices of the lines that may be headings: short, not in `skip` (a mask), and set
    apart by size or weight, by a leading number, or by space above and (unless very
    short) below; the rest cannot reach MIN_SCORE."""
    apart = body.apart
    above = (lines.gap_above > apart) | (lines.gap_above < 0)
    spaced = lines.gap_below > apart
    below = spaced | (lines.gap_below < 0) | (lines.count <= 4)
    styled = (lines.size >= 1.05 * body.size) | lines.bold
    short = (lines.count <= MAX_WORDS) & ~skip
    # A plain line of more than ten words scores at most 2 unless numbered (space above and
    # below, a known name, less one for its length): only numbered ones are looked at.
    plain = above & below & (lines.count <= 10)
    found = indices(short & (styled | plain) & ~_RUNS_ON[np.minimum(lines.heads, 128)])
    # The part of `line_score` that size, weight, spacing and length give.
    layout = (_SIZE_SCORES[_SIZE_STEPS.searchsorted(lines.size[found] / body.size, side="right")]
              + 2.0 * lines.bold[found] + above[found] + spaced[found]
              - (lines.count[found] > 10))
    out = _may_open(lines, found, layout.tolist())
    numbered = lines.opening(_NUMBER_START, _NUMBER_PAIRS, short & ~styled & ~plain)
    more = [i for i in numbered.tolist() if numbering(lines.words_of(i))[0]]
    return sorted({*out, *more}) if more else out


def _may_open(lines: Lines, found: np.ndarray, layout: list[float]) -> list[int]:
    """The `found` lines that `line_score` does not reject on their first word and layout
    alone: a line opening with a lower-case letter or with punctuation that carries on a
    sentence (unless it names a division, "article 5"), a lone word of fewer than two
    letters, or one whose layout score (`layout`, one per found line) stays below MIN_SCORE
    with the most that its numbering, capitals and a known name could add."""
    firsts, count = lines.firsts, lines.at.count
    keep = []
    for i, score in zip(found.tolist(), layout, strict=True):
        first = firsts[i]
        head = first[:1]
        if (((head.islower() and head.isalpha()) or head in _CARRIES_ON)
                and first.lower() not in _DIVISIONS):
            continue
        if count[i] == 1 and not _TWO_LETTERS.search(first):
            continue
        if score < MIN_SCORE:
            # Numbering adds 2 and a known name after it 1; unnumbered, the name is the
            # first word (known names are single words). Capitals need no lower-case letter.
            if _NUMBERED_FIRST.match(first) or first.lower() in _DIVISIONS:
                score += 3.0
            elif first.lower().strip(".:") in KNOWN_NAMES:
                score += 1.0
            if count[i] <= 10 and not any(map(str.islower, first)):
                score += 1.0
            if score < MIN_SCORE:
                continue
        keep.append(i)
    return keep


class Scored(NamedTuple):
    """What `line_score` reads of a line: its score, and what a heading it opens keeps."""

    score: float
    depth: int = 0
    anchored: bool = False
    caps: bool = False


_NOT_A_HEADING = Scored(0.0)


def line_score(lines: Lines, i: int, body: BodyStyle) -> Scored:
    """How much line `i` looks like a heading (or the first line of one); below MIN_SCORE
    it is body text."""
    at = lines.at
    words = lines.words[at.start[i]:at.end[i]]
    count = len(words)
    text = " ".join(words)
    if count > MAX_WORDS or not _TWO_LETTERS.search(text) or is_caption_start(words):
        return _NOT_A_HEADING
    depth, taken = numbering(words)
    rest = words[taken:]
    if not rest and taken >= 2:
        rest = words  # "Article 5" alone, its subject on the next line
    if not rest or not _opens_upper(rest):
        return _NOT_A_HEADING
    ratio = at.size[i] / body.size
    bold = at.bold[i]
    score = 0.0
    if ratio >= 1.15:
        score += 2.0
    elif ratio >= 1.05:
        score += 1.0
    elif ratio < 0.93:
        score -= 2.0
    if bold:
        score += 2.0
    if depth:
        score += 2.0
    caps = _all_caps(text)
    if count <= 10 and caps:
        score += 1.0
    above, below = at.gap_above[i], at.gap_below[i]
    if above < 0 or above > body.apart:
        score += 1.0
    if below > body.apart:
        score += 1.0
    known = is_known_name(rest)
    if known:
        score += 1.0
    if score < MIN_SCORE:
        return Scored(score)  # what follows only lowers it
    if text[-1] in ",;-" or (text[-1] == ":" and count > 3):
        score -= 2.0
    elif (not bold and ratio < 1.05 and 0 <= below <= body.apart
          and i + 1 < len(lines) and lines.firsts[i + 1][:1].islower()):
        score -= 2.0  # a list item or a sentence running on to the next line
    elif text[-1] == "." and not (depth and count <= 3):
        score -= 2.0 if depth and count > 3 else 1.0  # a numbered sentence
    if count > 10:
        score -= 1.0
    colon = text.find(":")
    if 0 < colon < len(text) - 1 and count > 3:
        score -= 2.0  # a run-in label ("Editor: ...")
    if _LEADER.search(text) or (words[-1].isdigit() and not depth and count > 1):
        score -= 2.0  # a table of contents' entry
    if text.count(",") >= 2 or _YEAR.search(text):
        score -= 2.0  # a list of names, a reference entry, a date
    elif len(_DIGIT.findall(text)) > 4 + sum(len(w) for w in words[:taken]):
        score -= 1.0
    return Scored(score, depth, bool(depth) or known, caps)


def _continues(lines: Lines, head: int, i: int, body: BodyStyle) -> bool:
    """Line `i` carries on the heading that line `head` opens: same block, same style, set
    apart from the body by size or weight, with a normal line gap between; or it names the
    division that a lone "Article 5" / "CHAPTER II" line numbers."""
    at = lines.at
    if at.page[i] != at.page[head] or not (0 <= at.gap_above[i] <= body.apart * 1.5):
        return False
    words = lines.words_of(i)
    if len(words) > MAX_WORDS or words[0][0] in ",;:.)]}" or numbering(words) != (0, 0):
        return False
    size, bold = at.size[i], at.bold[i]
    if (bold or size >= 1.05 * body.size) and (
            numbering(lines.words_of(head))[1] == at.end[head] - at.start[head] >= 2):
        return True  # "Article 5" then its subject
    return (at.block[i] == at.block[head] and abs(size - at.size[head]) <= 0.05 * at.size[head]
            and bold == at.bold[head] and (bold or size >= 1.05 * body.size)
            and at.gap_above[i] <= body.apart)


def find_headings(lines: Lines, body: BodyStyle, skip: np.ndarray) -> list[Heading]:
    """The headings among `lines`, in order, their levels not yet set; lines in `skip` (a
    mask: captions, footnotes, tables) are never headings."""
    out: list[Heading] = []
    after = -1
    at, skipped = lines.at, skip.data
    for i in candidates(lines, body, skip):
        if i <= after:
            continue
        scored = line_score(lines, i, body)
        if scored.score < MIN_SCORE:
            continue
        last = i
        count = at.count[i]
        while (last + 1 < len(lines) and not skipped[last + 1] and count < 24
               and _continues(lines, i, last + 1, body)):
            last += 1
            count += at.count[last]
        style = (round(at.size[i] * 2) / 2, bool(at.bold[i]), scored.caps)
        out.append(Heading(i, last, scored.depth, scored.anchored, style))
        after = last
    return out


def _style_key(style: tuple[float, bool, bool]) -> tuple[float, bool, bool]:
    return (-style[0], not style[1], not style[2])


def assign_levels(headings: list[Heading]) -> None:
    """Levels from numbering depth, and for unnumbered headings from their style's rank:
    a style a numbered heading wears gives its depth, other styles rank by size, weight
    and capitals (sizes less than a point apart count as one)."""
    sizes = sorted({h.style[0] for h in headings}, reverse=True)
    merged: dict[float, float] = {}
    for size in sizes:
        near = next((m for m in merged.values() if m - size < 1.0), None)
        merged[size] = near if near is not None else size
    for heading in headings:
        heading.style = (merged[heading.style[0]], heading.style[1], heading.style[2])
    by_style: dict[tuple[float, bool, bool], int] = {}
    for heading in headings:
        if heading.depth:
            known = by_style.get(heading.style)
            by_style[heading.style] = min(known, heading.depth) if known else heading.depth
    styles = sorted({h.style for h in headings}, key=_style_key)
    rank = {style: i + 1 for i, style in enumerate(styles)}
    for heading in headings:
        if heading.depth:
            heading.level = heading.depth
        elif heading.style in by_style:
            heading.level = by_style[heading.style]
        elif by_style:
            above = [d for s, d in by_style.items() if rank[s] < rank[heading.style]]
            heading.level = max(above) + 1 if above else 1
        else:
            heading.level = rank[heading.style]
    top = min((h.level for h in headings), default=1)
    for heading in headings:  # the highest level found is the top: acts number articles
        heading.level = max(1, min(heading.level - top + 1, MAX_LEVEL))
