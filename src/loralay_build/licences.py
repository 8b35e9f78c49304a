"""Licences as SPDX identifiers: the shared recogniser, each source's mapping (declared in
its package, `LicenceMapping`), the `redistributable` group, the licence filter and the Hub's
card identifiers.

Why: each source spells licences its own way (URLs, "CC BY", "by-nc", "CC BY-SA 4.0"), so a
corpus mixing them cannot be filtered. Every row gets one SPDX id (or a `LicenseRef-` id
where SPDX has none, or `NOASSERTION` where the source states nothing); the raw value stays
beside it in `licence_source`.
"""

from __future__ import annotations

import difflib
import fnmatch
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from loralay_build.errors import ConfigError

log = logging.getLogger(__name__)

NOASSERTION = "NOASSERTION"

# Creative Commons licence elements and the versions each was published in.
_CC_KINDS = ("BY", "BY-SA", "BY-ND", "BY-NC", "BY-NC-SA", "BY-NC-ND")
_CC_VERSIONS = ("1.0", "2.0", "2.5", "3.0", "4.0")
_PORTED_ONLY = ("2.1",)  # 2.1 exists only as ports (by-sa/2.1/jp)
_NO_V1 = {"BY-NC-ND"}  # 1.0 had "BY-ND-NC" instead, which SPDX lists as CC-BY-NC-ND-1.0 too
# Ported (jurisdiction and IGO) Creative Commons licences that SPDX lists (SPDX License List,
# spdx/license-list-data json/details/, checked 2026-11-28); other ports are `LicenseRef-`.
_SPDX_PORTED = frozenset({
    "CC-BY-2.5-AU", "CC-BY-3.0-AT", "CC-BY-3.0-AU", "CC-BY-3.0-DE", "CC-BY-3.0-IGO",
    "CC-BY-3.0-NL", "CC-BY-3.0-US", "CC-BY-NC-3.0-DE", "CC-BY-NC-3.0-IGO",
    "CC-BY-NC-ND-3.0-DE", "CC-BY-NC-ND-3.0-IGO", "CC-BY-NC-SA-2.0-DE", "CC-BY-NC-SA-2.0-FR",
    "CC-BY-NC-SA-2.0-UK", "CC-BY-NC-SA-3.0-DE", "CC-BY-NC-SA-3.0-IGO", "CC-BY-ND-3.0-DE",
    "CC-BY-SA-2.0-UK", "CC-BY-SA-2.1-JP", "CC-BY-SA-3.0-AT", "CC-BY-SA-3.0-DE",
    "CC-BY-SA-3.0-IGO",
})

# SPDX ids for the public-domain tools (same list): the mark, the old dedication and CC0.
PUBLIC_DOMAIN_MARK = "CC-PDM-1.0"
PUBLIC_DOMAIN_DEDICATION = "CC-PDDC"
ALL_RIGHTS_RESERVED = "LicenseRef-all-rights-reserved"  # terms SPDX has no id for


@dataclass(frozen=True)
class Terms:
    """Licence terms SPDX has no id for, declared by the source whose documents carry them
    (`LicenceMapping.terms`)."""

    spdx: str  # its `LicenseRef-` id
    link: str | None = None  # where the terms can be read
    free: bool = False  # whether they let a third party redistribute the text
    spelling: str = ""  # how any source may write them: a regex `recognise` fully matches
    summary: str = ""  # what they allow, in a few words, for the card's warning (when not free)


@dataclass(frozen=True)
class LicenceMapping:
    """How a source's licence values become SPDX ids, beyond the shared recogniser."""

    read: Callable[[str], str | None] | None = None  # a stated value; None: `recognise`
    fixed: str | None = None  # every document's licence, whatever the source states
    terms: tuple[Terms, ...] = ()


# What the registered sources declared (`declare_licences`): their mappings, and the terms.
_MAPPINGS: dict[str, LicenceMapping] = {}
_TERMS: dict[str, Terms] = {}


def declare_licences(source: str, mapping: LicenceMapping) -> None:
    """Give `source` its mapping and make its terms known to every source (the filter, the
    recogniser, the card); the source registry calls it for every source it registers."""
    _MAPPINGS[source] = mapping
    for terms in mapping.terms:
        _TERMS[terms.spdx] = terms
        _FOLDED[terms.spdx.lower()] = terms.spdx


def restricted_terms() -> list[str]:
    """The summaries of the declared terms that do not let a third party redistribute, each
    once, in the order the sources declared them (the card's licence warning lists them)."""
    return list(dict.fromkeys(t.summary for t in _TERMS.values() if not t.free and t.summary))


def unversioned(kind: str) -> str:
    """A Creative Commons licence whose version the source does not state: SPDX has no id
    without a version, and guessing one would misstate the terms."""
    return f"LicenseRef-CC-{kind}"


_SHARED_KNOWN: frozenset[str] = frozenset(
    [f"CC-{k}-{v}" for k in _CC_KINDS for v in _CC_VERSIONS if not (v == "1.0" and k in _NO_V1)]
    + [unversioned(k) for k in _CC_KINDS]
    + sorted(_SPDX_PORTED)
    + ["CC0-1.0", "CC-BY-NC-ND-1.0", "etalab-2.0", "PDDL-1.0", NOASSERTION, PUBLIC_DOMAIN_MARK,
       PUBLIC_DOMAIN_DEDICATION, ALL_RIGHTS_RESERVED]
)


_FOLDED = {k.lower(): k for k in _SHARED_KNOWN}  # and the sources' terms (declare_licences)


def known() -> frozenset[str]:
    """Every licence id a row may carry: the shared ones and the sources' terms."""
    return _SHARED_KNOWN | frozenset(_TERMS)


def __getattr__(name: str) -> Any:
    """`KNOWN`, read when asked: sources declare their terms as the registry imports them."""
    if name == "KNOWN":
        return known()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# Licences that let anyone redistribute the text, commercially too, asking at most for
# attribution and share-alike. NC (non-commercial) and ND (no derivatives) licences, arXiv's
# distribution licence, text-mining-only terms and unknown terms are not in it.
_FREE = frozenset({"CC0-1.0", "etalab-2.0", "PDDL-1.0", PUBLIC_DOMAIN_MARK,
                   PUBLIC_DOMAIN_DEDICATION})
_CC_FREE = re.compile(r"(LicenseRef-)?CC-BY(-SA)?(-\d\.\d(-[A-Z]{2,3})?)?")


def redistributable(spdx: str) -> bool:
    """Whether the licence lets a third party redistribute the text (see above)."""
    terms = _TERMS.get(spdx)
    return spdx in _FREE or bool(_CC_FREE.fullmatch(spdx)) or (terms is not None and terms.free)


GROUPS: dict[str, Callable[[str], bool]] = {"redistributable": redistributable}

# The licence identifiers a Hub card's `license:` may carry: the table of the Hub's
# documentation page "Licenses", https://huggingface.co/docs/hub/repositories-licenses
# (docs/hub/repositories-licenses.md of huggingface/hub-docs, last changed 2026-06-06; read
# 2026-11-28). An id outside it fails the Hub's metadata validation, and so does the upload.
HUB_LICENCES = frozenset({
    "apache-2.0", "mit", "openrail", "bigscience-openrail-m", "creativeml-openrail-m",
    "bigscience-bloom-rail-1.0", "bigcode-openrail-m", "afl-3.0", "artistic-2.0", "bsl-1.0",
    "bsd", "bsd-2-clause", "bsd-3-clause", "bsd-3-clause-clear", "c-uda", "cc", "cc0-1.0",
    "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0",
    "cc-by-nc-2.0", "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0", "cc-by-nc-nd-3.0",
    "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0",
    "cdla-sharing-1.0", "cdla-permissive-1.0", "cdla-permissive-2.0", "wtfpl", "ecl-2.0",
    "epl-1.0", "epl-2.0", "etalab-2.0", "eupl-1.1", "eupl-1.2", "agpl-3.0", "gfdl", "gpl",
    "gpl-2.0", "gpl-3.0", "lgpl", "lgpl-2.1", "lgpl-3.0", "isc", "h-research",
    "intel-research", "lppl-1.3c", "ms-pl", "apple-ascl", "apple-amlr", "mpl-2.0", "odc-by",
    "odbl", "openmdw-1.0", "openmdw-1.1", "openrail++", "osl-3.0", "postgresql", "ofl-1.1",
    "ncsa", "unlicense", "zlib", "pddl", "lgpl-lr", "deepfloyd-if-license",
    "fair-noncommercial-research-license", "llama2", "llama3", "llama3.1", "llama3.2",
    "llama3.3", "llama4", "grok2-community", "gemma", "unknown", "other",
})
# SPDX ids the Hub spells otherwise than by lower case.
_HUB_SPELLING = {"PDDL-1.0": "pddl", NOASSERTION: "unknown"}


def hub_id(spdx: str) -> str | None:
    """The Hub's identifier for an SPDX id, or None when the Hub's list has none."""
    hub = _HUB_SPELLING.get(spdx, spdx.lower())
    return hub if hub in HUB_LICENCES and hub != "other" else None


# -- recognising the spellings sources use ----------------------------------------------------

_CC_URL = re.compile(
    r"(?:https?://)?(?:www\.)?creativecommons\.org/"
    r"(?:(?P<dedication>licen[cs]es/publicdomain)|(?P<chooser>choose/mark)"
    r"|licen[cs]es/(?P<kind>[a-z-]+)(?:/(?P<version>\d\.\d))?(?:/(?P<port>[a-z]{2,3}))?"
    r"|publicdomain/(?P<pd>zero|mark)/(?P<pdversion>\d\.\d))"
    r"/?(?:(?:deed|legalcode)(?:\.[a-z]{2,3}(?:[_-][a-z]{2,4})?|\.txt)?)?/?",
    re.IGNORECASE,
)
_CC_NAME = re.compile(
    r"(?:CC|CREATIVE-COMMONS)?-?(?P<kind>BY(?:-(?:NC|ND|SA))*)(?:-?(?P<version>\d\.\d))?"
    r"(?:-(?P<port>[A-Z]{2,3}))?(?:-LICEN[CS]E)?",
)
_ELEMENT_NAMES = (
    (r"CREATIVE-COMMONS", "CC"), (r"ATTRIBUTION", "BY"), (r"NON-?COMMERCIAL", "NC"),
    (r"NO-?DERIV(ATIVE)?S", "ND"), (r"SHARE-?ALIKE", "SA"), (r"-?INTERNATIONAL", ""),
    (r"-?(GENERIC|UNPORTED)", ""),
)
_CC0_NAME = re.compile(r"CC-?ZERO(?:-1\.0)?|CC0(?:-1\.0)?|PUBLIC-DOMAIN-DEDICATION")


def _cc_kind(raw: str) -> str | None:
    """BY, BY-SA, BY-NC-ND… from element lists in any order ("by-nd-nc" is BY-NC-ND)."""
    parts = [p for p in raw.upper().split("-") if p]
    if not parts or parts[0] != "BY" or len(set(parts)) != len(parts):
        return None
    rest = set(parts[1:])
    if not rest <= {"NC", "ND", "SA"} or {"ND", "SA"} <= rest:
        return None
    kind = "-".join(["BY", *(e for e in ("NC", "ND", "SA") if e in rest)])
    return kind if kind in _CC_KINDS else None


def _cc_id(kind: str, version: str | None, port: str | None) -> str | None:
    if version is None:
        return unversioned(kind)
    if version not in _CC_VERSIONS and not (port and version in _PORTED_ONLY):
        return None
    if version == "1.0" and kind == "BY-NC-ND":
        return "CC-BY-NC-ND-1.0"
    base = f"CC-{kind}-{version}"
    if port:
        ported = f"{base}-{port.upper()}"
        return ported if ported in _SPDX_PORTED else f"LicenseRef-{ported}"
    return base


def creative_commons(raw: str) -> str | None:
    """The SPDX id of a Creative Commons URL in any of its forms (http or https, with or
    without version, port, `deed.xx`, `deed.xx_YY` or `legalcode`), of a public-domain tool,
    or of a name ("CC BY-NC 4.0", "by-nc", "CC0"); None when `raw` is none of these."""
    text = raw.strip()
    url = _CC_URL.fullmatch(text)
    if url:
        if url["dedication"]:
            return PUBLIC_DOMAIN_DEDICATION
        if url["chooser"]:
            return PUBLIC_DOMAIN_MARK
        if url["pd"]:
            return "CC0-1.0" if url["pd"].lower() == "zero" else PUBLIC_DOMAIN_MARK
        kind = _cc_kind(url["kind"])
        return None if kind is None else _cc_id(kind, url["version"], url["port"])
    inner = re.search(r"\((CC[^)]*)\)", text)  # "Attribution 4.0 International (CC BY 4.0)"
    name = re.sub(r"[\s_/]+", "-", (inner.group(1) if inner else text).upper())
    for long, short in _ELEMENT_NAMES:
        name = re.sub(long, short, name)
    name = re.sub(r"-+", "-", name).strip("-")
    if _CC0_NAME.fullmatch(name):
        return "CC0-1.0"
    found = _CC_NAME.fullmatch(name)
    if found:
        kind = _cc_kind(found["kind"])
        return None if kind is None else _cc_id(kind, found["version"], found["port"])
    return None


def recognise(raw: str) -> str | None:
    """The one recogniser every source uses: an id as written (any case), the spellings of
    the sources' terms (`Terms.spelling`), then Creative Commons URLs, tools and names;
    None when it is none."""
    text = raw.strip()
    written = _FOLDED.get(text.lower())
    if written:
        return written
    for terms in _TERMS.values():
        if terms.spelling and re.fullmatch(terms.spelling, text, re.IGNORECASE):
            return terms.spdx
    return creative_commons(text)


_logged: set[tuple[str, str]] = set()


def to_spdx(source: str, raw: str) -> str:
    """The SPDX id for a source's licence value; unknown values are NOASSERTION (and logged
    once at INFO, so `-v` shows what the table misses)."""
    mapping = _MAPPINGS.get(source, LicenceMapping())
    if mapping.fixed is not None:
        return mapping.fixed
    if not raw.strip():
        return NOASSERTION
    mapped = (mapping.read or recognise)(raw)
    if mapped is None:
        if (source, raw) not in _logged:
            _logged.add((source, raw))
            log.info("%s: unknown licence %r recorded as %s", source, raw, NOASSERTION)
        return NOASSERTION
    return mapped


# -- the filter and the card ------------------------------------------------------------------

def check_patterns(patterns: Iterable[str]) -> tuple[str, ...]:
    """Validate `--licences` / `[filters] licences`: exact ids, wildcards or a named group,
    in any case as SPDX ids are (`cc-by-4.0` is `CC-BY-4.0`); an id comes back as SPDX
    spells it, a group in lower case, a wildcard as given (`allowed` ignores its case)."""
    known_ids = {k.lower(): k for k in known()}
    out = []
    for pattern in patterns:
        pattern = pattern.strip()
        if not pattern:
            continue
        folded = pattern.lower()
        wildcard = any(c in pattern for c in "*?[")
        if folded in known_ids:
            out.append(known_ids[folded])
        elif folded in GROUPS:
            out.append(folded)
        elif wildcard and any(fnmatch.fnmatchcase(k, folded) for k in known_ids):
            out.append(pattern)
        else:
            close = [known_ids.get(c, c) for c in difflib.get_close_matches(
                folded, [*known_ids, *GROUPS], n=3, cutoff=0.5)]
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ConfigError(f"unknown licence {pattern!r}{hint} (SPDX ids such as "
                              f"CC-BY-4.0, wildcards such as CC-BY-*, or 'redistributable')")
    return tuple(out)


def allowed(spdx: str, patterns: tuple[str, ...]) -> bool:
    """Whether a licence passes the filter; an empty filter keeps everything."""
    if not patterns:
        return True
    return any(GROUPS[p](spdx) if p in GROUPS else fnmatch.fnmatchcase(spdx.lower(), p.lower())
               for p in patterns)


def licence_counts(rows: Iterable[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """{licence: {split: documents}} from (licence, split) pairs, for build.json and cards."""
    counts: dict[str, dict[str, int]] = {}
    for spdx, split in rows:
        per_split = counts.setdefault(spdx, {})
        per_split[split] = per_split.get(split, 0) + 1
    return {k: dict(sorted(v.items())) for k, v in sorted(counts.items())}


def hub_licences(present: Iterable[str]) -> list[str]:
    """The card's YAML `license` list: the Hub's ids of the licences present, `other` once
    for every licence outside the Hub's list."""
    ids = {hub_id(spdx) or "other" for spdx in present}
    return sorted(ids - {"other"}) + (["other"] if "other" in ids else [])


def _cc_link(spdx: str) -> str | None:
    """The deed of a Creative Commons id (`LicenseRef-CC-BY-ND-3.0-IGO` included)."""
    found = re.fullmatch(r"(?:LicenseRef-)?CC-(BY(?:-[A-Z]{2})*?)(?:-(\d\.\d)(?:-([A-Z]+))?)?",
                         spdx)
    if not found:
        return None
    parts = [found[1].lower(), *(p.lower() for p in found.groups()[1:] if p)]
    return f"https://creativecommons.org/licenses/{'/'.join(parts)}/"


def licence_link(spdx: str) -> str | None:
    """Where the terms of a licence can be read: its deed, SPDX's page, or the source's."""
    terms = _TERMS.get(spdx)
    link = (terms.link if terms else None) or _cc_link(spdx)
    if link or spdx.startswith("LicenseRef-") or spdx == NOASSERTION:
        return link
    return f"https://spdx.org/licenses/{spdx}.html"


def hub_other(present: Iterable[str]) -> tuple[str, str] | None:
    """(`license_name`, `license_link`) for the card when some licence is `other`: that
    licence's id and terms when it is the only one, else a name for the mix and the card
    itself, whose licence table lists every licence per split."""
    others = sorted(spdx for spdx in set(present) if hub_id(spdx) is None)
    if not others:
        return None
    if len(others) == 1:
        name = others[0].lower().removeprefix("licenseref-")
        return name, licence_link(others[0]) or "README.md"
    return "several-licences", "README.md"
