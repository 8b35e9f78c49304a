"""Generated EU acts and summaries for the EUR-Lex sandbox: the act's XHTML in the four
families EUR-Lex serves (and older consolidated texts in the legacy markup), its Official
Journal PDF, and LEGISSUM summaries in the current (`lseu` sections) and the older flat
format. Markup is modelled on the real pages; the prose is generated, in six languages
including Greek, Bulgarian (Cyrillic) and Irish.
"""

from __future__ import annotations

import html
import io
import random
from dataclasses import dataclass
from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import cm
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer

FONT_FILES = ("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
              "/usr/share/fonts/dejavu/DejaVuSerif.ttf",
              "/usr/share/fonts/TTF/DejaVuSerif.ttf")
LATIN = frozenset({"en", "fr", "de", "ga"})

# Per language: the OJ's name, "Article", sentence templates and their nouns.
WORDS: dict[str, dict[str, list[str]]] = {
    "en": {
        "oj": ["Official Journal of the European Union"], "article": ["Article"],
        "t": ["Member States shall ensure that the {n} referred to in Article {k} are "
              "applied without delay.",
              "The Commission shall adopt implementing acts laying down the {n} for the "
              "purposes of this Regulation.",
              "Competent authorities shall cooperate with each other on {n} and exchange all "
              "relevant information.",
              "This Regulation shall not affect the {n} of the Member States under national "
              "law.",
              "By {y}, the Commission shall submit a report on the {n} to the European "
              "Parliament and to the Council."],
        "n": ["rules", "procedures", "safeguards", "requirements", "obligations", "measures",
              "conditions", "rights", "penalties", "reports"],
        "s": ["The regulation sets out common {n} for the whole Union.",
              "It requires national authorities to publish their {n} every year.",
              "Businesses must keep records of the {n} for five years.",
              "The rules aim to simplify the {n} applying to citizens."],
    },
    "fr": {
        "oj": ["Journal officiel de l'Union européenne"], "article": ["Article"],
        "t": ["Les États membres veillent à ce que les {n} visées à l'article {k} soient "
              "appliquées sans délai.",
              "La Commission adopte des actes d'exécution établissant les {n} aux fins du "
              "présent règlement.",
              "Les autorités compétentes coopèrent entre elles en matière de {n} et échangent "
              "toute information utile.",
              "Le présent règlement n'affecte pas les {n} des États membres en vertu du droit "
              "national.",
              "Au plus tard en {y}, la Commission présente un rapport sur les {n} au Parlement "
              "européen et au Conseil."],
        "n": ["règles", "procédures", "garanties", "exigences", "obligations", "mesures",
              "conditions", "sanctions"],
        "s": ["Le règlement fixe des {n} communes pour toute l'Union.",
              "Il impose aux autorités nationales de publier leurs {n} chaque année.",
              "Les entreprises conservent la trace des {n} pendant cinq ans.",
              "Ces règles visent à simplifier les {n} applicables aux citoyens."],
    },
    "de": {
        "oj": ["Amtsblatt der Europäischen Union"], "article": ["Artikel"],
        "t": ["Die Mitgliedstaaten stellen sicher, dass die in Artikel {k} genannten {n} "
              "unverzüglich angewandt werden.",
              "Die Kommission erlässt Durchführungsrechtsakte zur Festlegung der {n} für die "
              "Zwecke dieser Verordnung.",
              "Die zuständigen Behörden arbeiten bei den {n} zusammen und tauschen alle "
              "einschlägigen Informationen aus.",
              "Bis {y} legt die Kommission dem Europäischen Parlament und dem Rat einen Bericht "
              "über die {n} vor."],
        "n": ["Vorschriften", "Verfahren", "Garantien", "Anforderungen", "Pflichten",
              "Maßnahmen", "Bedingungen"],
        "s": ["Die Verordnung legt gemeinsame {n} für die gesamte Union fest.",
              "Die nationalen Behörden müssen ihre {n} jährlich veröffentlichen.",
              "Unternehmen bewahren Aufzeichnungen über die {n} fünf Jahre lang auf."],
    },
    "el": {
        "oj": ["Επίσημη Εφημερίδα της Ευρωπαϊκής Ένωσης"], "article": ["Άρθρο"],
        "t": ["Τα κράτη μέλη διασφαλίζουν ότι οι {n} που αναφέρονται στο άρθρο {k} "
              "εφαρμόζονται χωρίς καθυστέρηση.",
              "Η Επιτροπή εκδίδει εκτελεστικές πράξεις για τον καθορισμό των {n} για τους "
              "σκοπούς του παρόντος κανονισμού.",
              "Οι αρμόδιες αρχές συνεργάζονται για τις {n} και ανταλλάσσουν κάθε σχετική "
              "πληροφορία.",
              "Έως το {y}, η Επιτροπή υποβάλλει έκθεση σχετικά με τις {n} στο Ευρωπαϊκό "
              "Κοινοβούλιο και στο Συμβούλιο."],
        "n": ["διαδικασίες", "εγγυήσεις", "απαιτήσεις", "υποχρεώσεις", "κυρώσεις", "αρχές"],
        "s": ["Ο κανονισμός θεσπίζει κοινές {n} για ολόκληρη την Ένωση.",
              "Οι εθνικές αρχές δημοσιεύουν τις {n} κάθε χρόνο.",
              "Οι επιχειρήσεις τηρούν αρχεία για τις {n} επί πέντε έτη."],
    },
    "bg": {
        "oj": ["Официален вестник на Европейския съюз"], "article": ["Член"],
        "t": ["Държавите членки гарантират, че посочените в член {k} {n} се прилагат без "
              "забавяне.",
              "Комисията приема актове за изпълнение за определяне на {n} за целите на "
              "настоящия регламент.",
              "Компетентните органи си сътрудничат по отношение на {n} и обменят цялата "
              "относима информация.",
              "До {y} г. Комисията представя доклад относно {n} на Европейския парламент и на "
              "Съвета."],
        "n": ["правилата", "процедурите", "гаранциите", "изискванията", "задълженията",
              "мерките"],
        "s": ["Регламентът определя общи {n} за целия Съюз.",
              "Националните органи публикуват {n} всяка година.",
              "Предприятията съхраняват данни за {n} в продължение на пет години."],
    },
    "ga": {
        "oj": ["Iris Oifigiúil an Aontais Eorpaigh"], "article": ["Airteagal"],
        "t": ["Áiritheoidh na Ballstáit go gcuirfear na {n} dá dtagraítear in Airteagal {k} "
              "i bhfeidhm gan mhoill.",
              "Glacfaidh an Coimisiún gníomhartha cur chun feidhme lena leagfar síos na {n} "
              "chun críocha an Rialacháin seo.",
              "Comhoibreoidh na húdaráis inniúla le chéile maidir leis na {n} agus malartóidh "
              "siad gach faisnéis ábhartha.",
              "Faoin mbliain {y}, tíolacfaidh an Coimisiún tuarascáil ar na {n} do Pharlaimint "
              "na hEorpa agus don Chomhairle."],
        "n": ["rialacha", "nósanna imeachta", "coimircí", "ceanglais", "oibleagáidí",
              "bearta"],
        "s": ["Leagtar síos sa rialachán {n} coiteanna don Aontas ar fad.",
              "Foilseoidh na húdaráis náisiúnta a {n} gach bliain.",
              "Coimeádfaidh gnólachtaí taifid ar na {n} ar feadh cúig bliana."],
    },
}
SANDBOX_LANGUAGES = tuple(WORDS)


@dataclass(frozen=True)
class ActBody:
    """One act in one language: title lines, recitals, articles (heading, subject, paragraphs)."""

    title: list[str]
    recitals: list[str]
    articles: list[tuple[str, str, list[str]]]

    def lines(self) -> list[str]:
        """The text a correct extraction gives, one block a line (recitals numbered)."""
        out = list(self.title)
        out += [f"({i}) {text}" for i, text in enumerate(self.recitals, 1)]
        for heading, subject, paragraphs in self.articles:
            out += [heading, subject, *paragraphs]
        return out


def _sentence(rng: random.Random, lang: str, key: str = "t") -> str:
    words = WORDS[lang]
    return rng.choice(words[key]).format(n=rng.choice(words["n"]), k=rng.randint(1, 30),
                                         y=rng.randint(2005, 2030))


def act_body(seed: int, lang: str, number: str, articles: int) -> ActBody:
    """The same structure in every language (seeded per act), the prose in `lang`."""
    rng = random.Random(f"{seed}:{lang}")
    shape = random.Random(seed)
    title = [f"(EU) {number}", _sentence(rng, lang)]
    recitals = [" ".join(_sentence(rng, lang) for _ in range(2))
                for _ in range(shape.randint(2, 4))]
    body = []
    for k in range(1, articles + 1):
        paragraphs = [f"{p}. " + " ".join(_sentence(rng, lang) for _ in range(3))
                      for p in range(1, shape.randint(2, 3) + 1)]
        body.append((f"{WORDS[lang]['article'][0]} {k}", _sentence(rng, lang).split(",")[0],
                     paragraphs))
    return ActBody(title, recitals, body)


def summary_lines(seed: int, lang: str, sentences: int) -> list[str]:
    rng = random.Random(f"summary:{seed}:{lang}")
    return [_sentence(rng, lang, "s") for _ in range(sentences)]


# -- XHTML, four families -------------------------------------------------------------------


def _e(text: str) -> str:
    return html.escape(text, quote=False)


def render_xhtml(body: ActBody, family: str, lang: str, celex: str, date: str) -> bytes:
    """The act as EUR-Lex serves it in `family`: oj | oj-legacy | legacy | consolidated |
    consolidated-legacy (an older consolidated text in the legacy markup)."""
    if family == "oj":
        parts = [f'<p class="oj-doc-ti">{_e(t)}</p>' for t in body.title]
        for i, text in enumerate(body.recitals, 1):
            parts.append(f'<div class="eli-subdivision" id="rct_{i}"><table width="100%">'
                         f'<col width="4%"/><col width="96%"/><tbody><tr><td valign="top">'
                         f'<p class="oj-normal">({i})</p></td><td valign="top">'
                         f'<p class="oj-normal">{_e(text)}</p></td></tr></tbody></table></div>')
        for k, (heading, subject, paragraphs) in enumerate(body.articles, 1):
            parts.append(f'<div class="eli-subdivision" id="art_{k}">'
                         f'<p id="d1e{k}-1-1" class="oj-ti-art">{_e(heading)}</p>'
                         f'<div class="eli-title"><p class="oj-sti-art">{_e(subject)}</p></div>'
                         + "".join(f'<p class="oj-normal">{_e(p)}</p>' for p in paragraphs)
                         + "</div>")
        inner = f'<div class="eli-container">{"".join(parts)}</div>'
        return _page(inner, lang, 'charset="UTF-8"')
    if family == "oj-legacy":
        parts = [f'<p class="doc-ti">{_e(t)}</p>' for t in body.title]
        parts += [f'<table width="100%"><col width="4%"/><col width="96%"/><tbody><tr>'
                  f'<td valign="top"><p class="normal">({i})</p></td><td valign="top">'
                  f'<p class="normal">{_e(text)}</p></td></tr></tbody></table>'
                  for i, text in enumerate(body.recitals, 1)]
        for heading, subject, paragraphs in body.articles:
            parts += [f'<p class="ti-art">{_e(heading)}</p>',
                      f'<p class="sti-art">{_e(subject)}</p>']
            parts += [f'<p class="normal">{_e(p)}</p>' for p in paragraphs]
        return _page(f'<div id="text">{"".join(parts)}</div>', lang, 'charset="UTF-8"')
    if family in ("legacy", "consolidated-legacy"):
        def legacy(text: str) -> str:
            return _e(text).replace('"', "&quot;").replace("'", "&#039;")
        lines = [*body.title, *(f"({i}) {t}" for i, t in enumerate(body.recitals, 1))]
        for heading, subject, paragraphs in body.articles:
            lines += [heading, subject, *paragraphs]
        text = "".join(f"<p>{legacy(line)}</p>" for line in lines)
        if family == "consolidated-legacy":
            text = _consolidation_apparatus(celex, lang, date) + text
        head = (f'<meta name="DC.language" content="{lang.upper()}">'
                f'<meta name="DC.title" content="EUR-Lex - {celex} - {lang.upper()}">'
                '<meta name="DC.type" http-equiv="Content-Type" '
                'content="text/html; charset=UNICODE-1-1-UTF-8">')
        page = (f'<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">'
                f'<html lang="{lang.upper()}"><head>{head}<title>{celex}</title></head><body>'
                f'<h1>{celex}</h1><div id="TexteOnly"><p><TXT_TE>{text}</TXT_TE></p></div>'
                "</body></html>")
        return page.encode("utf-8")
    parts = [f'<p class="reference">0{celex[1:]} — {lang.upper()} — {date} — 001.001</p>',
             '<p class="disclaimer">Documentation tool only; without legal effect.</p>',
             f'<p class="arrow"><a title="{celex}">►B</a></p>']
    parts += [f'<p class="title-doc-first">{_e(t)}</p>' for t in body.title]
    parts += [f'<table><tbody><tr><td><p class="norm">({i})</p></td>'
              f'<td><p class="norm">{_e(t)}</p></td></tr></tbody></table>'
              for i, t in enumerate(body.recitals, 1)]
    for k, (heading, subject, paragraphs) in enumerate(body.articles, 1):
        marker = '<span class="boldface">►M1</span> ' if k == 1 else ""
        end = '<span class="boldface"> ◄ </span>' if k == 1 else ""
        parts += [f'<p class="title-article-norm">{_e(heading)}</p>',
                  f'<p class="stitle-article-norm">{marker}{_e(subject)}{end}</p>']
        parts += [f'<div class="norm">{_e(p)}</div>' for p in paragraphs]
        parts.append(f'<p class="modref"><a title="{celex}">▼B</a></p>')
    inner = f'<div class="eli-container">{"".join(parts)}</div>'
    return _page(inner, lang, 'charset="UTF-8"')


# An older consolidated text's apparatus, in the page's language where known.
DISCLAIMERS = {
    "en": "This document is meant purely as a documentation tool and the institutions do not "
          "assume any liability for its contents",
    "fr": "Ce document constitue un outil de documentation et n'engage pas la responsabilité "
          "des institutions",
    "de": "Dieses Dokument ist lediglich eine Dokumentationsquelle, für deren Richtigkeit die "
          "Organe der Gemeinschaften keine Gewähr übernehmen",
}
AMENDED_BY = {"en": "Amended by:", "fr": "Modifié par:", "de": "Geändert durch:"}


def _consolidation_apparatus(celex: str, lang: str, date: str) -> str:
    """Reference line, disclaimer, ►B and the "Amended by:" table that open an older
    consolidated text served in the legacy markup."""
    day = f"{date[8:10]}.{date[5:7]}.{date[:4]}"
    return (f"<p>{celex[1:]} — {lang.upper()} — {day} — 001.001</p>"
            f"<p>{_e(DISCLAIMERS.get(lang, DISCLAIMERS['en']))}</p>"
            f"<p>{_e(AMENDED_BY.get(lang, AMENDED_BY['en']))}</p>"
            "<table><tr><td></td><td></td><td>No</td><td>page</td><td>date</td></tr>"
            f"<tr><td>►M1</td><td>Regulation {int(celex[6:10]) + 1}/{date[:4]}</td>"
            f"<td>L 12</td><td>1</td><td>{day}</td></tr></table><p>►B</p>")


def _page(inner: str, lang: str, charset: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
            f'lang="{lang}"><head><meta {charset}/><title>act</title></head>'
            f"<body>{inner}</body></html>").encode()


# -- summaries ------------------------------------------------------------------------------


def render_summary(title: str, lines: list[str], acts: list[tuple[str, str]], lang: str,
                   lastmod: str, flat: bool) -> bytes:
    """A LEGISSUM summary; `acts` = (ELI or CELEX link, label) of the acts it summarises."""
    day = f"{int(lastmod[8:10])}.{int(lastmod[5:7])}.{lastmod[:4]}"
    if flat:
        body = (f"<h1>{_e(title)}</h1>" + "".join(f"<p>{_e(line)}</p>" for line in lines)
                + f"<p>Last update: {day}</p>")
        return f"<html><head><title>{_e(title)}</title></head><body>{body}</body></html>".encode()
    links = "".join(f'<p><a href="{href}">{_e(label)}</a></p>' for href, label in acts)
    half = max(1, len(lines) // 2)
    points = [f"<li>{_e(t)}</li>" for t in lines[half:]]
    if len(points) >= 2:  # a point with its own words above a nested list, as real ones have
        points = [*points[:-2], f"<li>{_e(lines[-2])} <ul>{points[-1]}</ul></li>"]
    sections = [
        ("summary-of", "SUMMARY OF:", links),
        ("aim", "WHAT IS THE AIM?", "".join(f"<p>{_e(t)}</p>" for t in lines[:half])),
        ("key-points", "KEY POINTS", "<ul>" + "".join(points) + "</ul>"),
        ("main-document", "MAIN DOCUMENT", "".join(f"<p>{_e(label)}</p>" for _, label in acts)),
    ]
    inner = "".join(f'<section class="lseu-section-{key}" id="lseu-section-{key}">'
                    f"<h2>{head}</h2>{content}</section>" for key, head, content in sections)
    page = (f'<html xmlns="http://www.w3.org/1999/xhtml" lang="{lang}"><head>'
            f'<title>{_e(title)}</title><meta charset="UTF-8"/></head><body><header>'
            f"<h1>{_e(title)}</h1></header>{inner}"
            f'<p class="lseu-lastmod">last update <time datetime="{lastmod}">{day}</time></p>'
            "</body></html>")
    return page.encode("utf-8")


# -- Official Journal PDF -------------------------------------------------------------------


def unicode_font() -> str | None:
    """Register a TTF with Greek and Cyrillic glyphs; None when the machine has none."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    if "DejaVuSerif" in pdfmetrics.getRegisteredFontNames():
        return "DejaVuSerif"
    for path in FONT_FILES:
        if Path(path).is_file():
            pdfmetrics.registerFont(TTFont("DejaVuSerif", path))
            return "DejaVuSerif"
    return None


def can_render(lang: str) -> bool:
    return lang in LATIN or unicode_font() is not None


def render_oj_pdf(body: ActBody, lang: str, series: str, date: str, first_page: int) -> bytes:
    """The act as printed in the Official Journal: running header with page reference."""
    font = unicode_font() or "Times-Roman"
    buffer = io.BytesIO()
    doc = SimpleDocTemplate(buffer, pagesize=A4, topMargin=3 * cm, bottomMargin=2 * cm,
                            leftMargin=2.5 * cm, rightMargin=2.5 * cm, invariant=1)
    normal = ParagraphStyle("n", fontName=font, fontSize=10, leading=12.5, alignment=4)
    title = ParagraphStyle("t", parent=normal, fontSize=11, alignment=1, leading=14)
    head = ParagraphStyle("h", parent=normal, alignment=1, spaceBefore=6)
    journal = WORDS[lang]["oj"][0]

    def header(canvas: Canvas, document: SimpleDocTemplate) -> None:
        page = first_page + document.page - 1
        canvas.setFont(font, 8)
        canvas.drawString(2.5 * cm, A4[1] - 2 * cm, f"{series}/{page}")
        canvas.drawCentredString(A4[0] / 2, A4[1] - 2 * cm, journal)
        canvas.drawRightString(A4[0] - 2.5 * cm, A4[1] - 2 * cm, f"{lang.upper()}  {date}")

    story = [Paragraph(_e(t), title) for t in body.title] + [Spacer(1, 12)]
    story += [Paragraph(f"({i}) {_e(t)}", normal) for i, t in enumerate(body.recitals, 1)]
    for heading, subject, paragraphs in body.articles:
        story += [Paragraph(_e(heading), head), Paragraph(_e(subject), head)]
        story += [Paragraph(_e(p), normal) for p in paragraphs]
    doc.build(story, onFirstPage=header, onLaterPages=header)
    return buffer.getvalue()
