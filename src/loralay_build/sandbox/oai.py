"""OAI-PMH 2.0 envelopes and errors, as both the arXiv and the PMC fakes serve them."""

from __future__ import annotations

from collections.abc import Callable
from xml.sax.saxutils import escape, quoteattr

from loralay_build.sandbox.server import Reply, Request, retry_after

XML_TYPE = {"Content-Type": "text/xml; charset=UTF-8"}
RESPONSE_DATE = "2026-03-02T10:00:00Z"


def envelope(req: Request, base_url: str, body: str) -> Reply:
    attrs = "".join(f" {k}={quoteattr(v)}" for k, v in req.query)
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ '
        'http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">'
        f"<responseDate>{RESPONSE_DATE}</responseDate>"
        f"<request{attrs}>{escape(base_url)}</request>{body}</OAI-PMH>"
    )
    return Reply(200, xml.encode(), dict(XML_TYPE))


def error(req: Request, base_url: str, code: str, message: str = "") -> Reply:
    """Protocol errors come with HTTP 200."""
    return envelope(req, base_url, f'<error code="{code}">{escape(message)}</error>')


def header(identifier: str, datestamp: str, sets: list[str], deleted: bool = False) -> str:
    status = ' status="deleted"' if deleted else ""
    spec = "".join(f"<setSpec>{escape(s)}</setSpec>" for s in sets)
    return (f"<header{status}><identifier>{escape(identifier)}</identifier>"
            f"<datestamp>{datestamp}</datestamp>{spec}</header>")


def record(head: str, metadata: str) -> str:
    return f"<record>{head}<metadata>{metadata}</metadata></record>" if metadata \
        else f"<record>{head}</record>"


class TokenBook:
    """Opaque resumption tokens; `expire_next` makes the next token presented unknown once."""

    def __init__(self) -> None:
        self.tokens: dict[str, tuple[dict[str, str], int]] = {}
        self.expire_next = False

    def issue(self, params: dict[str, str], offset: int) -> str:
        token = f"t{len(self.tokens) + 1:04d}x{offset}"
        self.tokens[token] = (params, offset)
        return token

    def redeem(self, token: str) -> tuple[dict[str, str], int] | None:
        if self.expire_next:
            self.expire_next = False
            return None
        return self.tokens.get(token)


def list_page(req: Request, base_url: str, book: TokenBook, items: list[tuple[str, str]],
              params: dict[str, str], offset: int, page_size: int) -> Reply:
    """One ListRecords page over (datestamp, record xml) pairs already filtered and sorted."""
    if not items:
        return error(req, base_url, "noRecordsMatch",
                     "The combination of the values of the from, until, set and "
                     "metadataPrefix arguments results in an empty list.")
    page = items[offset:offset + page_size]
    more = offset + page_size < len(items)
    token = book.issue(params, offset + page_size) if more else ""
    body = "".join(xml for _, xml in page)
    return envelope(req, base_url,
                    f"<ListRecords>{body}<resumptionToken>{token}</resumptionToken></ListRecords>")


def list_records(
    req: Request,
    base_url: str,
    book: TokenBook,
    prefix: str,
    once: Callable[[str], bool],
    items_for: Callable[[dict[str, str]], list[tuple[str, str]]],
    page_size: int,
) -> Reply:
    """ListRecords with the faults real repositories show: one 503 with Retry-After, and one
    resumption token that expires after it is handed out (`once(name)` is True the first time)."""
    if once("oai-503"):
        return Reply(503, b"Retry later", {"Retry-After": retry_after()})
    token = req.arg("resumptionToken")
    if token:
        redeemed = book.redeem(token)
        if redeemed is None:
            return error(req, base_url, "badResumptionToken", "expired")
        params, offset = redeemed
        if once("oai-expire"):
            book.expire_next = True
    else:
        params = {k: req.arg(k) for k in ("metadataPrefix", "set", "from", "until")}
        offset = 0
        if params["metadataPrefix"] != prefix:
            return error(req, base_url, "cannotDisseminateFormat",
                         f"{params['metadataPrefix']} is not supported")
    return list_page(req, base_url, book, select(items_for(params), params), params, offset,
                     page_size)


def select(items: list[tuple[str, str]], params: dict[str, str]) -> list[tuple[str, str]]:
    """Records inside the from/until window (inclusive, day granularity), datestamp order."""
    start, end = params.get("from", ""), params.get("until", "")
    return sorted(
        (i for i in items if (not start or i[0] >= start) and (not end or i[0][:10] <= end)),
        key=lambda i: i[0],
    )
