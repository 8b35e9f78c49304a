"""The one XML parser for data from the network: no entity expansion, no DTD, no network.

Metadata feeds (OAI-PMH, JATS) never need an internal DTD; one that declares entities is an
attack (billion laughs, external entities), so it is refused outright instead of parsed.
"""

from __future__ import annotations

from lxml import etree

from loralay_build.errors import LoralayError


class XmlRejected(LoralayError):
    """The bytes are not well-formed XML, or declare entities."""


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
        remove_comments=True, remove_pis=True,
    )


def parse_xml(data: bytes) -> etree._Element:
    """Root element of `data`; raises XmlRejected for malformed XML or entity declarations."""
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        raise XmlRejected(f"malformed XML: {exc}") from exc
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise XmlRejected("XML declares entities in its DTD; refused")
    return root


def local(element: etree._Element) -> str:
    """Local name of an element, whatever its namespace (JATS comes both ways)."""
    return str(etree.QName(element).localname)


def children(element: etree._Element, name: str) -> list[etree._Element]:
    """Child elements with the given local name."""
    return [c for c in element if isinstance(c.tag, str) and local(c) == name]


def child(element: etree._Element | None, name: str) -> etree._Element | None:
    if element is None:
        return None
    found = children(element, name)
    return found[0] if found else None


def text_of(element: etree._Element | None, name: str) -> str:
    """Whitespace-collapsed text of the first child called `name`, or ""."""
    found = child(element, name)
    return " ".join("".join(found.itertext()).split()) if found is not None else ""
