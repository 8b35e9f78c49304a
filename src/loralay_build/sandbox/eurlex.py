"""Cellar as EUR-Lex-Sum needs it: a SPARQL endpoint (JSON results, LIMIT/OFFSET paging, a
date FILTER) and content-negotiated resources (`celex/<id>`, `legissum/<id>`) answering 200,
300 (multi-part act), 404 (language or format missing) and 400 (a language code that is not
ISO 639-2/T), over generated acts and summaries.

Faults, when on: one act always behind a WAF challenge (HTTP 202 + `x-amzn-waf-action`), one
answering 429 with Retry-After once, one multi-part act, one Virtuoso timeout (500) on a SPARQL
page; acts without a PDF, without XHTML, missing in a language; a summary shared by two acts,
an act with two summaries, an obsolete summary, a summary in the older flat format.
`challenge_cellar` puts every Cellar resource behind the WAF challenge (as Cellar itself
sometimes answers scripts).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from loralay_build.sandbox.eurlex_docs import (
    SANDBOX_LANGUAGES,
    ActBody,
    act_body,
    can_render,
    render_oj_pdf,
    render_summary,
    render_xhtml,
    summary_lines,
)
from loralay_build.sandbox.server import FakeService, Reply, Request, SandboxServer, retry_after

# Cellar's own table (ISO 639-2/T), independent of the client's: `ger`/`fre` get a 400.
LANGUAGES = {"bg": "bul", "cs": "ces", "da": "dan", "de": "deu", "el": "ell", "en": "eng",
             "es": "spa", "et": "est", "fi": "fin", "fr": "fra", "ga": "gle", "hr": "hrv",
             "hu": "hun", "it": "ita", "lt": "lit", "lv": "lav", "mt": "mlt", "nl": "nld",
             "pl": "pol", "pt": "por", "ro": "ron", "sk": "slk", "sl": "slv", "sv": "swe"}
CDM_LANG = "http://publications.europa.eu/resource/authority/language/"
FAMILIES = ("oj", "oj-legacy", "legacy", "consolidated", "consolidated-legacy")
LIMIT_CAP = 1000
WAF_BODY = (b'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title></title>'
            b'<script>window.awsWafCookieDomainList = []; window.gokuProps = {"key":"x"};'
            b'</script><script src="https://x.token.awswaf.com/challenge.js"></script></head>'
            b'<body><div id="challenge-container"></div></body></html>')


@dataclass
class FakeAct:
    index: int
    celex: str
    date: str
    languages: tuple[str, ...]
    family: str
    articles: int
    behaviour: str = "ok"  # ok | multipart | waf | throttled | no_pdf | no_html

    @property
    def number(self) -> str:
        return f"{self.celex[1:5]}/{int(self.celex[6:10])}"


@dataclass
class FakeSummary:
    legissum: str
    acts: list[str]
    languages: tuple[str, ...]
    modified: str
    obsolete: bool = False
    flat: bool = False
    sentences: int = 4


@dataclass
class _Catalogue:
    acts: dict[str, FakeAct] = field(default_factory=dict)
    summaries: dict[str, FakeSummary] = field(default_factory=dict)


class EurlexSandbox(FakeService):
    def __init__(self, server: SandboxServer, n_docs: int = 24, seed: int = 7,
                 faults: bool = True) -> None:
        super().__init__(server, seed, faults)
        self.cat = _Catalogue()
        self.failing_offset: int | None = None  # a SPARQL page that always times out
        self.challenge_cellar = False  # every celex/, parts/ and legissum/ answer is a challenge
        # False: `?modified` is never bound (as Cellar leaves it for many summaries); a FILTER
        # on it is then false, as in SPARQL, and only the summary's XHTML carries its date.
        self.bind_modified = True
        self.languages = tuple(lang for lang in SANDBOX_LANGUAGES if can_render(lang))
        self._add_catalogue(max(12, n_docs))
        server.route("/cellar/sparql", self._sparql)
        server.route("/cellar/resource/celex/", self._celex)
        server.route("/cellar/resource/parts/", self._part)
        server.route("/cellar/resource/legissum/", self._legissum)
        server.route("/eurlex/legal-content/", self._eurlex_page)

    # -- configuration for clients -----------------------------------------------------------

    def client_config(self, languages: tuple[str, ...] = ("en", "fr", "el")) -> dict[str, Any]:
        base = self.server.base_url
        return {
            "source": {"sparql_url": f"{base}/cellar/sparql",
                       "cellar_url": f"{base}/cellar/resource/", "sparql_page": 10,
                       "eurlex_url": f"{base}/eurlex/",
                       "page_size": 10, "languages": list(languages), "waf_backoff": 0.01,
                       "waf_retries": 2, "waf_log": "info"},  # its challenges are expected
            "http": {"min_interval": 0.0, "backoff_base": 0.01},
        }

    # -- catalogue ---------------------------------------------------------------------------

    def _add_catalogue(self, n: int) -> None:
        special = {0: "multipart", 1: "waf", 2: "throttled", 3: "no_pdf", 4: "no_html"}
        for i in range(n):
            behaviour = special.get(i, "ok")
            if behaviour in ("waf", "throttled") and not self.faults:
                behaviour = "ok"  # protocol faults; gaps in the content stay
            langs = tuple(lang for lang in self.languages
                          if not (i == 5 and lang == "fr") and not (i % 5 == 4 and lang == "ga"))
            self._add_act(i, langs, behaviour)
        acts = [a.celex for a in sorted(self.cat.acts.values(), key=lambda a: a.index)]
        for i, celex in enumerate(acts):
            if i == 7:
                continue  # covered by the summary of act 6
            covered = [celex, acts[7]] if i == 6 else [celex]
            act = self.cat.acts[celex]
            self._add_summary(f"{4_000_000 + i}", covered, act.languages, act.date,
                              obsolete=i == 9, flat=i == 11, sentences=150 if i == 10 else 4)
        self._add_summary(f"l{24_000 + 8}", [acts[8]], self.cat.acts[acts[8]].languages,
                          "2015-01-01", obsolete=True)
        summary_ga = self.cat.summaries[f"{4_000_000 + 3}"]
        summary_ga.languages = tuple(lang for lang in summary_ga.languages if lang != "ga")

    def _add_act(self, i: int, languages: tuple[str, ...], behaviour: str) -> FakeAct:
        year = 2004 + (i * 7) % 19
        celex = f"3{year}R{1000 + i:04d}"
        date = f"{year}-{1 + i % 12:02d}-{1 + (i * 3) % 27:02d}"
        act = FakeAct(i, celex, date, languages, _family(i), 3 + i % 4, behaviour)
        self.cat.acts[celex] = act
        return act

    def _add_summary(self, legissum: str, acts: list[str], languages: tuple[str, ...],
                     date: str, obsolete: bool = False, flat: bool = False,
                     sentences: int = 4) -> None:
        modified = f"{min(2024, int(date[:4]) + 2)}{date[4:]}"
        self.cat.summaries[legissum] = FakeSummary(legissum, acts, languages, modified,
                                                   obsolete, flat, sentences)

    def add_acts(self, n: int, date: str = "2025-03-01") -> list[str]:
        """New acts, each with its own new summary, dated `date` (by default after everything
        served so far; an older date is an older act whose summary appears only now)."""
        with self._lock:
            start = len(self.cat.acts)
            added = []
            for i in range(start, start + n):
                act = self._add_act(i, self.languages, "ok")
                act.date = date
                self._add_summary(f"{4_000_000 + i}", [act.celex], act.languages, date)
                added.append(act.celex)
        return added

    def touch_summary(self, celex: str, modified: str) -> str:
        """Update the summary of `celex` (a new last-modified date and one more sentence)."""
        with self._lock:
            summary = next(s for s in self.cat.summaries.values() if celex in s.acts)
            summary.modified = modified
            summary.sentences += 1
        return summary.legissum

    # -- SPARQL ------------------------------------------------------------------------------

    def bindings(self) -> list[dict[str, Any]]:
        """Every (summary, act) link as Cellar's SPARQL JSON would bind it, in query order."""
        rows = []
        for summary in self.cat.summaries.values():
            for celex in summary.acts:
                act = self.cat.acts[celex]
                rows.append({
                    "summary": _uri(f"http://publications.europa.eu/resource/legissum/"
                                    f"{summary.legissum}"),
                    "legissum": _literal(summary.legissum),
                    "celex": _literal(celex),
                    "date": _literal(act.date, "date"),
                    "type": _uri("http://publications.europa.eu/resource/authority/"
                                 "resource-type/REG"),
                    "obsolete": _literal("true" if summary.obsolete else "false", "boolean"),
                    **({"modified": _literal(summary.modified, "date")}
                       if self.bind_modified else {}),
                    "act_languages": _literal(",".join(
                        CDM_LANG + LANGUAGES[lang].upper() for lang in act.languages)),
                    "summary_languages": _literal(",".join(
                        CDM_LANG + LANGUAGES[lang].upper() for lang in summary.languages)),
                })
        rows.sort(key=lambda r: (r["date"]["value"], r["celex"]["value"],
                                 r["legissum"]["value"]))
        return rows

    def _sparql(self, req: Request) -> Reply:
        query = req.arg("query")
        fmt = req.arg("format") or req.headers.get("accept", "")
        if not query or "summary_legislation_eu_summarizes_resource_legal" not in query:
            return _text(400, "Virtuoso 37000 Error SP030: SPARQL compiler: syntax error")
        if "sparql-results+json" not in fmt and "application/json" not in fmt:
            return _text(406, "unsupported format")
        limit = re.search(r"\bLIMIT\s+(\d+)", query)
        offset = re.search(r"\bOFFSET\s+(\d+)", query)
        size = int(limit.group(1)) if limit else 10_000
        start = int(offset.group(1)) if offset else 0
        if size > LIMIT_CAP:
            return _text(500, "Virtuoso S1T00 Error SR171: Transaction timed out")
        if start == self.failing_offset or (start > 0 and self._once(f"sparql-timeout:{start}")):
            return _text(500, "Virtuoso S1T00 Error SR171: Transaction timed out")
        rows = self.bindings()
        after = dict(re.findall(r'\?(date|modified)\s*>\s*"(\d{4}-\d{2}-\d{2})"', query))
        if after:
            rows = [r for r in rows
                    if any(k in r and r[k]["value"] > v for k, v in after.items())]
        page = rows[start:start + size]
        body = {"head": {"link": [], "vars": ["summary", "legissum", "celex", "date", "type",
                                              "obsolete", "modified", "act_languages",
                                              "summary_languages"]},
                "results": {"distinct": False, "ordered": True, "bindings": page}}
        return Reply(200, json.dumps(body).encode(),
                     {"Content-Type": "application/sparql-results+json"})

    # -- content negotiation -----------------------------------------------------------------

    def _language(self, req: Request) -> str | Reply:
        code = req.headers.get("accept-language", "").strip().lower()
        by_code = {v: k for k, v in LANGUAGES.items()}
        if code not in by_code:
            return _text(400, f"Bad Request: language {code!r} is not an ISO 639-2/T code")
        return by_code[code]

    def _celex(self, req: Request) -> Reply:
        if self.challenge_cellar:
            return _challenge()
        celex = req.path.rsplit("/", 1)[-1]
        act = self.cat.acts.get(celex)
        lang = self._language(req)
        if isinstance(lang, Reply):
            return lang
        if act is None or lang not in act.languages:
            return _text(404, "Not Found")
        if act.behaviour == "waf":
            return _challenge()
        if act.behaviour == "throttled" and self._once(f"429:{celex}"):
            return Reply(429, b"Too Many Requests", {"Retry-After": retry_after()})
        kind = _kind(req)
        if isinstance(kind, Reply):
            return kind
        if act.behaviour == "multipart":
            links = "".join(f'<li><a href="{self.server.base_url}/cellar/resource/parts/'
                            f'{celex}.{LANGUAGES[lang]}/DOC_{n}">DOC_{n}</a></li>'
                            for n in (2, 1))  # listed out of order on purpose
            head = "".join(f'<meta name="part-{n}" content="{act.celex} part {n}: '
                           f'{"annex " * 200}"/>' for n in (1, 2))  # a list longer than 2 KB
            return Reply(300, f"<html><head>{head}</head><body><ul>{links}</ul></body></html>"
                         .encode(),
                         {"Content-Type": "application/xhtml+xml"})
        return self._content(act, lang, kind, None)

    def _part(self, req: Request) -> Reply:
        if self.challenge_cellar:
            return _challenge()
        match = re.match(r".*/parts/([0-9A-Z]+)\.([a-z]{3})/DOC_(\d+)$", req.path)
        lang = self._language(req)
        if isinstance(lang, Reply):
            return lang
        kind = _kind(req)
        if match is None or isinstance(kind, Reply) or match.group(1) not in self.cat.acts:
            return kind if isinstance(kind, Reply) else _text(404, "Not Found")
        return self._content(self.cat.acts[match.group(1)], lang, kind, int(match.group(3)))

    def _content(self, act: FakeAct, lang: str, kind: str, part: int | None) -> Reply:
        if (kind == "pdf" and act.behaviour == "no_pdf") or (
                kind == "xhtml" and act.behaviour == "no_html"):
            return _text(404, "Not Found")
        if kind == "pdf":
            series = f"L {100 + act.index}"
            pdf = _pdf(self.seed, act.celex, lang, part, series, act.date, act.articles)
            return Reply(200, pdf, {"Content-Type": "application/pdf"})
        body = _body(self.seed, act, lang, part)
        xhtml = render_xhtml(body, act.family, lang, act.celex, act.date)
        return Reply(200, xhtml, {"Content-Type": "application/xhtml+xml;charset=UTF-8"})

    def _eurlex_page(self, req: Request) -> Reply:
        """The EUR-Lex website: behind a WAF challenge when faults are on (as it is for most
        scripts), else the bare text page, or its "does not exist" page."""
        if self.faults:
            return _challenge()
        lang = req.path.split("/")[3].lower()
        act = self.cat.acts.get(req.arg("uri").removeprefix("CELEX:"))
        if act is None or lang not in act.languages:
            return Reply(200, b"<html><body><p>The requested document does not exist.</p>"
                              b"</body></html>", {"Content-Type": "text/html"})
        page = render_xhtml(_body(self.seed, act, lang, None), "oj-legacy", lang, act.celex,
                            act.date)
        return Reply(200, page, {"Content-Type": "text/html; charset=UTF-8"})

    def _legissum(self, req: Request) -> Reply:
        if self.challenge_cellar:
            return _challenge()
        legissum = req.path.rsplit("/", 1)[-1]
        summary = self.cat.summaries.get(legissum)
        lang = self._language(req)
        if isinstance(lang, Reply):
            return lang
        if "xhtml" not in req.headers.get("accept", ""):
            return _text(406, "Not Acceptable")
        if summary is None or lang not in summary.languages:
            return _text(404, "Not Found")
        acts = [(f"http://data.europa.eu/eli/reg/{c[1:5]}/{int(c[6:10])}/oj/"
                 f"{LANGUAGES[lang]}", f"Regulation (EU) {c[1:5]}/{int(c[6:10])}")
                for c in summary.acts]
        lines = summary_lines(int(legissum.strip("l")), lang, summary.sentences)
        title = f"{legissum}: " + lines[0].split(" ", 3)[-1]
        page = render_summary(title, lines, acts, lang, summary.modified, summary.flat)
        return Reply(200, page, {"Content-Type": "application/xhtml+xml;charset=UTF-8"})


def _family(index: int) -> str:
    """The four families in turn; every eighth act (from the 8th) an older consolidated text
    in the legacy markup."""
    return FAMILIES[4] if index % 8 == 7 else FAMILIES[index % 4]


def _challenge() -> Reply:
    return Reply(202, WAF_BODY, {"Content-Type": "text/html; charset=utf-8",
                                 "x-amzn-waf-action": "challenge"})


def _kind(req: Request) -> str | Reply:
    accept = req.headers.get("accept", "")
    if "application/pdf" in accept:
        return "pdf"
    if "xhtml" in accept or "text/html" in accept:
        return "xhtml"
    return _text(406, "Not Acceptable")


def _body(seed: int, act: FakeAct, lang: str, part: int | None) -> ActBody:
    """The act's text; a multi-part act's parts split its articles in two."""
    body = act_body(seed * 1000 + act.index, lang, act.number, act.articles)
    if part is None:
        return body
    half = len(body.articles) // 2
    arts = body.articles[:half] if part == 1 else body.articles[half:]
    return ActBody(body.title if part == 1 else [f"ANNEX {part}"],
                      body.recitals if part == 1 else [], arts)


@lru_cache(maxsize=256)
def _pdf(seed: int, celex: str, lang: str, part: int | None, series: str, date: str,
         articles: int) -> bytes:
    index = int(celex[6:10]) - 1000
    act = FakeAct(index, celex, date, (lang,), "oj", articles)
    return render_oj_pdf(_body(seed, act, lang, part), lang, series, date, 1 + 10 * (part or 0))


def _literal(value: str, datatype: str = "") -> dict[str, str]:
    out = {"type": "literal", "value": value}
    if datatype:
        out = {"type": "typed-literal", "value": value,
               "datatype": f"http://www.w3.org/2001/XMLSchema#{datatype}"}
    return out


def _uri(value: str) -> dict[str, str]:
    return {"type": "uri", "value": value}


def _text(status: int, message: str) -> Reply:
    return Reply(status, message.encode(), {"Content-Type": "text/plain"})
