"""OAI-PMH 2.0 client shared by the arXiv and PMC sources.

Protocol errors come as HTTP 200 with `<error code=...>`: `noRecordsMatch` is an empty
answer, `idDoesNotExist` a missing record, `badResumptionToken` an expired harvest that is
restarted from the last committed datestamp, and format/argument errors are configuration
mistakes. Flow control (503 + Retry-After) is honoured by the HTTP client; a body that does
not parse (cut transfer) is retried like any transient failure.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from lxml import etree

from loralay_build.errors import ConfigError, LoralayError
from loralay_build.http import HttpClient, TransientHttpError
from loralay_build.safexml import XmlRejected, child, children, parse_xml, text_of
from loralay_build.sources.base import DiscoveryContext

log = logging.getLogger(__name__)

CONFIG_ERRORS = frozenset({"badArgument", "badVerb", "cannotDisseminateFormat", "noSetHierarchy"})
MAX_RESTARTS = 3


class OaiError(LoralayError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"OAI-PMH error {code}: {message}")
        self.code = code


class BadResumptionToken(OaiError):
    """The server no longer knows the token; the harvest must start again."""


@dataclass(frozen=True)
class OaiRecord:
    identifier: str
    datestamp: str
    deleted: bool
    metadata: etree._Element | None  # the payload element (arXivRaw, JATS article...)


@dataclass(frozen=True)
class OaiPage:
    records: list[OaiRecord]
    token: str  # "" on the last page


def _check_xml(sink: IO[bytes], url: str) -> None:
    """A body cut mid-transfer does not parse: retry it; entity payloads are refused."""
    sink.seek(0)
    try:
        parse_xml(sink.read())
    except XmlRejected as exc:
        if "entities" in str(exc):
            raise
        raise TransientHttpError(url, str(exc)) from exc


class OaiClient:
    """Requests against one OAI-PMH base URL."""

    def __init__(self, client: HttpClient, base_url: str) -> None:
        self.client = client
        self.base_url = base_url

    def _request(self, params: dict[str, str]) -> etree._Element | None:
        """The verb's element, or None for noRecordsMatch / idDoesNotExist."""
        buffer = io.BytesIO()
        self.client.download(self.base_url, buffer, params=params,
                             headers={"Accept": "text/xml"}, validate=_check_xml)
        root = parse_xml(buffer.getvalue())
        error = child(root, "error")
        if error is not None:
            code = error.get("code", "")
            message = " ".join("".join(error.itertext()).split())
            if code in ("noRecordsMatch", "idDoesNotExist"):
                return None
            if code == "badResumptionToken":
                raise BadResumptionToken(code, message)
            if code in CONFIG_ERRORS:
                raise ConfigError(f"OAI-PMH {code} for {params}: {message}")
            raise OaiError(code, message)
        return child(root, params["verb"])

    def list_records(self, params: dict[str, str]) -> Iterator[OaiPage]:
        """Pages of ListRecords, following resumption tokens until the empty one."""
        request = {"verb": "ListRecords", **params}
        while True:
            verb = self._request(request)
            if verb is None:
                return
            token = child(verb, "resumptionToken")
            value = (token.text or "").strip() if token is not None else ""
            yield OaiPage([_record(r) for r in children(verb, "record")], value)
            if not value:
                return
            request = {"verb": "ListRecords", "resumptionToken": value}

    def get_record(self, identifier: str, prefix: str) -> OaiRecord | None:
        verb = self._request(
            {"verb": "GetRecord", "identifier": identifier, "metadataPrefix": prefix}
        )
        record = child(verb, "record")
        return _record(record) if record is not None else None


def _record(element: etree._Element) -> OaiRecord:
    header = child(element, "header")
    metadata = child(element, "metadata")
    payload = next((c for c in metadata if isinstance(c.tag, str)), None) if metadata is not None \
        else None
    return OaiRecord(
        identifier=text_of(header, "identifier"),
        datestamp=text_of(header, "datestamp"),
        deleted=header is not None and header.get("status") == "deleted",
        metadata=payload,
    )


def harvest(
    ctx: DiscoveryContext, oai: OaiClient, params: dict[str, Any], mark_key: str
) -> Iterator[list[OaiRecord]]:
    """ListRecords pages, checkpointing the newest committed datestamp after each page.

    Servers list records in datestamp order and `from=` is inclusive, so restarting from
    the checkpoint (after a kill or an expired token) loses nothing; repeats are deduplicated
    by the state database. A page is committed once the consumer asks for the next one.
    """
    base = {k: str(v) for k, v in params.items() if v}
    start = base.get("from", "")
    newest = start
    restarts = 0
    while True:
        request = dict(base)
        if newest:
            request["from"] = newest[:10]
        try:
            for page in oai.list_records(request):
                yield page.records
                stamps = [r.datestamp for r in page.records if r.datestamp]
                if stamps and max(stamps) > newest:
                    newest = max(stamps)
                    ctx.set_mark(mark_key, newest[:10])
            return
        except BadResumptionToken as exc:
            restarts += 1
            if restarts > MAX_RESTARTS:
                raise
            log.info("%s; restarting the harvest from %s", exc, newest[:10] or "the start")

