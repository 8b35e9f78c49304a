"""The SciELO collection websites for the generated articles: journal list, issue lists and
tables of contents (`scielo.php?script=sci_alphabetic|sci_issues|sci_issuetoc`), classic
`sci_arttext` pages (`citation_*` meta tags, one `citation_pdf_url` per language) and
`sci_abstract&tlng=<l>` pages (`div[class="index,<l>"]`: heading, bibliographic line, text),
and on www.scielo.br the new `/j/<acronym>/a/<id>/` pages, where `sci_arttext` redirects.

Links are absolute public URLs, as on the real sites. Classic pages of three collections are
served in ISO-8859-1 (header and `<meta>`), the others in UTF-8.
"""

from __future__ import annotations

import hashlib
import html

from loralay_build.sandbox.scielo_article import SciELOArticle
from loralay_build.sandbox.server import Reply, Request

LATIN1_COLLECTIONS = ("ecu", "pry", "bol")
NEW_SITE_COLLECTIONS = ("scl",)
HEADINGS = {"es": "Resumen", "pt": "Resumo", "en": "Abstract"}
SECTIONS = {"pt": "resumo", "en": "abstract", "es": "resumen"}
KEYWORDS = {"es": "Palabras clave", "pt": "Palavras-chave", "en": "Keywords"}
V3_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
NOT_FOUND = Reply(404, b"<html><body>Not Found</body></html>", {"Content-Type": "text/html"})


def pid_v3(pid: str) -> str:
    """A stable 23-character opaque id, shaped like the new site's."""
    digest = hashlib.sha256(pid.encode()).digest()
    return "".join(V3_ALPHABET[b % len(V3_ALPHABET)] for b in digest[:23])


def _link(host: str, script: str, pid: str, tlng: str = "") -> str:
    extra = f"&amp;tlng={tlng}" if tlng else ""
    return (f'<a href="http://{host}/scielo.php?script={script}&amp;pid={pid}&amp;lng=en'
            f'&amp;nrm=iso{extra}">{script}</a>')


def _page(head: str, body: str, latin1: bool) -> Reply:
    charset = "ISO-8859-1" if latin1 else "UTF-8"
    page = (f'<html><head><meta http-equiv="Content-Type" content="text/html; '
            f'charset={charset}">{head}</head><body>{body}</body></html>')
    data = page.encode("iso-8859-1", "xmlcharrefreplace") if latin1 else page.encode()
    return Reply(200, data, {"Content-Type": f"text/html; charset={charset}"})


def _paragraph(article: SciELOArticle, lang: str) -> str:
    """The abstract as a paragraph of several text nodes (inline markup in the middle)."""
    words = html.escape(article.abstracts[lang]).split(" ")
    half = len(words) // 2
    heading = (f"<b>{HEADINGS[lang].upper()}</b> " if article.variant == "heading" else "")
    return f'<p>{heading}{" ".join(words[:half])} <i>{words[half]}</i> ' \
           f'{" ".join(words[half + 1:])}</p>'


class SciELOSite:
    """Pages of one host; `articles` are the sandbox's, shared and growing."""

    def __init__(self, articles: dict[str, SciELOArticle], hosts: dict[str, str],
                 base_url: str) -> None:
        self.articles = articles
        self.hosts = hosts
        self.base_url = base_url

    def _on(self, host: str) -> list[SciELOArticle]:
        return sorted((a for a in self.articles.values() if self.hosts[a.collection] == host
                       and a.events[-1][2] != "delete"), key=lambda a: a.pid)

    def listing(self, host: str, req: Request) -> Reply:
        script, pid = req.arg("script"), req.arg("pid")
        on_host = self._on(host)
        if script == "sci_alphabetic":
            links = {a.pid[1:10]: _link(host, "sci_issues", a.pid[1:10]) for a in on_host}
        elif script == "sci_issues":
            links = {a.pid[1:18]: _link(host, "sci_issuetoc", a.pid[1:18])
                     for a in on_host if a.pid[1:10] == pid}
        else:
            links = {a.pid: self._toc_entry(host, a) for a in on_host if a.pid[1:18] == pid}
        if not links:
            return NOT_FOUND
        robots = (f'<a href="http://{host}/cgi-bin/wxis.exe/iah/?IsisScript=iah/iah.xis">'
                  "search</a>")
        return _page("", f"<ul><li>{'</li><li>'.join(links.values())}</li></ul>{robots}",
                     False)

    @staticmethod
    def _toc_entry(host: str, article: SciELOArticle) -> str:
        abstracts = " | ".join(_link(host, "sci_abstract", article.pid, lang)
                               for lang in article.abstracts)
        return (f"abstract in {abstracts} · text "
                f"{_link(host, 'sci_arttext', article.pid, article.lang)} · pdf "
                f"{_link(host, 'sci_pdf', article.pid, article.lang)}")

    def article(self, host: str, req: Request, pdf: str) -> Reply:
        """`sci_arttext` / `sci_abstract` of a classic site, or the redirect to a new page."""
        article = self.articles.get(req.arg("pid"))
        if article is None:
            return NOT_FOUND
        if article.collection in NEW_SITE_COLLECTIONS and req.arg("script") == "sci_arttext":
            acronym = pdf.split("/")[4]
            location = (f"{self.base_url}/_scielo/{host}/j/{acronym}/a/{pid_v3(article.pid)}"
                        f"/?lang={article.lang}")
            return Reply(301, b"", {"Location": location})
        latin1 = article.collection in LATIN1_COLLECTIONS
        month, year = article.record["article"]["v65"][0]["_"][4:6], article.pid[10:14]
        translation = pdf.rsplit("/", 1)
        head = (
            f'<meta name="citation_title" content="{html.escape(article.spec.title)}">'
            f'<meta name="citation_date" content="{month}/{year}">'
            f'<meta name="citation_doi" content="{article.record["doi"]}">'
            f'<meta name="citation_pdf_url" language="{article.lang}" default="true"'
            f' content="{pdf}">'
            f'<meta name="citation_pdf_url" language="en" '
            f'content="{translation[0]}/en_{translation[1]}">'
        ) + "".join(f'<meta name="citation_pdf_url" language="{code}" '
                    f'content="{translation[0]}/{name}.pdf">'
                    for name, code in article.translations.items())
        lang = req.arg("tlng")
        if req.arg("script") == "sci_abstract":
            if lang not in article.abstracts:
                return NOT_FOUND
            body = (f'<div class="index,{lang}"><h4>{HEADINGS[lang]}</h4><p>'
                    f"{html.escape(article.spec.title)}, {year}</p>{_paragraph(article, lang)}"
                    f"<p><b>{KEYWORDS[lang]}</b>: uno; dos</p></div>")
        else:
            body = '<div class="content">Texto completo disponible en PDF</div>'
        return _page(head, body, latin1)

    def new_page(self, host: str, acronym: str, v3: str, req: Request,
                 pdf: bytes | None) -> Reply:
        """A `/j/<acronym>/a/<id>/` page, or its PDF with `format=pdf`."""
        article = next((a for a in self.articles.values()
                        if self.hosts[a.collection] == host and pid_v3(a.pid) == v3), None)
        if article is None:
            return Reply(404, "Artigo não encontrado".encode(), {"Content-Type": "text/html"})
        lang = req.arg("lang", article.lang)
        if req.arg("format") == "pdf":
            if pdf is None or lang not in (article.lang, *article.translations.values()):
                return Reply(404, "PDF do Artigo não encontrado".encode(),
                             {"Content-Type": "text/html"})
            return Reply(200, pdf, {"Content-Type": "application/pdf"})
        path = f"/j/{acronym}/a/{v3}/"
        record = article.record["article"]
        date = (record.get("v223") or record["v65"])[0]["_"]
        head = (
            f'<meta name="citation_title" content="{html.escape(article.spec.title)}">'
            f'<meta name="citation_doi" content="{article.record["doi"]}">'
            f'<meta name="citation_language" content="{lang}">'
            f'<meta name="citation_publication_date" content="{date[:4]}-{date[4:6]}">'
            f'<meta name="citation_pdf_url" content="https://{host}{path}?lang={article.lang}'
            f'&amp;format=pdf">'
        )
        sections = "".join(
            f'<div class="articleSection articleSection--{SECTIONS[code]}" '
            f'data-anchor="{HEADINGS[code]}"><h1 class="articleSectionTitle">'
            f"{HEADINGS[code]}</h1>{_paragraph(article, code)}</div>"
            for code in article.abstracts
        )
        menu = "".join(f'<li><a href="{path}?lang={code}&amp;format=pdf">Download PDF '
                       f"({code})</a></li>"
                       for code in dict.fromkeys((article.lang, "en",
                                                  *article.translations.values())))
        return _page(head, f'<ul class="pdf-menu">{menu}</ul><article id="articleText">'
                           f"{sections}</article>", False)
