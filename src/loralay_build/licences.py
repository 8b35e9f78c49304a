"""Licences as SPDX identifiers: one mapping per source, the `redistributable` group, the
licence filter and the Hub's card identifiers.

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

from loralay_build.errors import ConfigError

log = logging.getLogger(__name__)

NOASSERTION = "NOASSERTION"

# Creative Commons licence elements and the versions each was published in.
_CC_KINDS = ("BY", "BY-SA", "BY-ND", "BY-NC", "BY-NC-SA", "BY-NC-ND")
_CC_VERSIONS = ("1.0", "2.0", "2.5", "3.0", "4.0")
_NO_V1 = {"BY-NC-ND"}  # 1.0 had "BY-ND-NC" instead, which SPDX lists as CC-BY-NC-ND-1.0 too
# Ported (jurisdiction) Creative Commons licences that SPDX lists.
_SPDX_PORTED = frozenset({
    "CC-BY-2.5-AU", "CC-BY-3.0-AT", "CC-BY-3.0-AU", "CC-BY-3.0-DE", "CC-BY-3.0-IGO",
    "CC-BY-3.0-NL", "CC-BY-3.0-US", "CC-BY-NC-3.0-DE", "CC-BY-NC-ND-3.0-DE",
    "CC-BY-NC-ND-3.0-IGO", "CC-BY-NC-SA-2.0-DE", "CC-BY-NC-SA-2.0-FR", "CC-BY-NC-SA-2.0-UK",
    "CC-BY-NC-SA-3.0-DE", "CC-BY-NC-SA-3.0-IGO", "CC-BY-ND-3.0-DE", "CC-BY-SA-2.0-UK",
    "CC-BY-SA-2.1-JP", "CC-BY-SA-3.0-AT", "CC-BY-SA-3.0-DE", "CC-BY-SA-3.0-IGO",
})

ARXIV_NONEXCLUSIVE = "LicenseRef-arXiv-nonexclusive-distrib-1.0"
ARXIV_ASSUMED = "LicenseRef-arXiv-assumed-1991-2003"
PUBLIC_DOMAIN_MARK = "LicenseRef-CC-PDM-1.0"
HAL_PUBLIC_DOMAIN = "LicenseRef-HAL-public-domain"
ALL_RIGHTS_RESERVED = "LicenseRef-all-rights-reserved"
PMC_TDM = "LicenseRef-PMC-TDM"  # author manuscripts: text mining only


def unversioned(kind: str) -> str:
    """A Creative Commons licence whose version the source does not state: SPDX has no id
    without a version, and guessing one would misstate the terms."""
    return f"LicenseRef-CC-{kind}"


KNOWN: frozenset[str] = frozenset(
    [f"CC-{k}-{v}" for k in _CC_KINDS for v in _CC_VERSIONS if not (v == "1.0" and k in _NO_V1)]
    + [unversioned(k) for k in _CC_KINDS]
    + sorted(_SPDX_PORTED)
    + ["CC0-1.0", "CC-BY-NC-ND-1.0", "etalab-2.0", "PDDL-1.0", NOASSERTION, ARXIV_NONEXCLUSIVE,
       ARXIV_ASSUMED, PUBLIC_DOMAIN_MARK, HAL_PUBLIC_DOMAIN, ALL_RIGHTS_RESERVED, PMC_TDM]
)

# Licences that let anyone redistribute the text, commercially too, asking at most for
# attribution and share-alike. NC (non-commercial) and ND (no derivatives) licences, arXiv's
# distribution licence, text-mining-only terms and unknown terms are not in it.
_FREE = frozenset({"CC0-1.0", "etalab-2.0", "PDDL-1.0", PUBLIC_DOMAIN_MARK, HAL_PUBLIC_DOMAIN})
_CC_FREE = re.compile(r"(LicenseRef-)?CC-BY(-SA)?(-\d\.\d(-[A-Z]{2,3})?)?")


def redistributable(spdx: str) -> bool:
    """Whether the licence lets a third party redistribute the text (see above)."""
    return spdx in _FREE or bool(_CC_FREE.fullmatch(spdx))


GROUPS: dict[str, Callable[[str], bool]] = {"redistributable": redistributable}

# The Hub's licence identifiers (its card `license:` list) for the SPDX ids that have one.
_HUB_IDS = {f"CC-{k}-{v}": f"cc-{k.lower()}-{v}" for k in _CC_KINDS for v in _CC_VERSIONS} | {
    "CC0-1.0": "cc0-1.0", "etalab-2.0": "etalab-2.0", "PDDL-1.0": "pddl",
    "CC-BY-SA-3.0-IGO": "cc-by-sa-3.0-igo", "CC-BY-NC-SA-2.0-FR": "cc-by-nc-sa-2.0-fr",
    "CC-BY-NC-SA-2.0-UK": "cc-by-nc-sa-2.0-uk", "CC-BY-NC-SA-3.0-IGO": "cc-by-nc-sa-3.0-igo",
    "CC-BY-NC-ND-3.0-IGO": "cc-by-nc-nd-3.0-igo", "CC-BY-3.0-US": "cc-by-3.0-us",
}
_HUB_KNOWN = frozenset(
    f"cc-{k.lower()}-{v}" for k in _CC_KINDS for v in ("2.0", "2.5", "3.0", "4.0")
) | {"cc-by-1.0", "cc-by-sa-1.0", "cc-by-nc-1.0", "cc-by-nd-1.0", "cc-by-nc-sa-1.0", "cc0-1.0",
     "etalab-2.0", "pddl", "cc-by-sa-3.0-igo", "cc-by-nc-sa-2.0-fr", "cc-by-nc-sa-2.0-uk",
     "cc-by-nc-sa-3.0-igo", "cc-by-nc-nd-3.0-igo", "cc-by-3.0-us"}


# -- parsing the spellings sources use --------------------------------------------------------

_CC_URL = re.compile(
    r"(?:https?://)?(?:www\.)?creativecommons\.org/"
    r"(?:licen[cs]es/(?P<kind>[a-z-]+)(?:/(?P<version>\d\.\d))?(?:/(?P<port>[a-z]{2,3}))?"
    r"|publicdomain/(?P<pd>zero|mark)/(?P<pdversion>\d\.\d))"
    r"/?(?:(?:deed|legalcode)(?:\.[a-z-]+)?)?/?",
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
    if version not in _CC_VERSIONS:
        return None
    if version == "1.0" and kind == "BY-NC-ND":
        return "CC-BY-NC-ND-1.0"
    base = f"CC-{kind}-{version}"
    if port:
        ported = f"{base}-{port.upper()}"
        return ported if ported in _SPDX_PORTED else f"LicenseRef-{ported}"
    return base


def creative_commons(raw: str) -> str | None:
    """The SPDX id of a Creative Commons URL or name ("CC BY-NC 4.0", "by-nc", "CC0"), or
    None when `raw` is neither."""
    text = raw.strip()
    url = _CC_URL.fullmatch(text)
    if url:
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


def _generic(raw: str) -> str | None:
    """SPDX ids written as such, then Creative Commons spellings."""
    text = raw.strip()
    for spdx in KNOWN:
        if spdx.lower() == text.lower():
            return spdx
    return creative_commons(text)


def _arxiv(raw: str) -> str | None:
    """arXiv's licence URLs: its own distribution licence, the assumed pre-2004 one, CC."""
    text = raw.strip().lower().rstrip("/")
    text = re.sub(r"^https?://(www\.)?", "", text)
    if text == "arxiv.org/licenses/nonexclusive-distrib/1.0":
        return ARXIV_NONEXCLUSIVE
    if text == "arxiv.org/licenses/assumed-1991-2003":
        return ARXIV_ASSUMED
    return creative_commons(raw)


# HAL's licence referential: Creative Commons URLs plus HAL's own pages.
_HAL_OWN = {
    "publicdomain": HAL_PUBLIC_DOMAIN,
    "etalab": "etalab-2.0",
    "copyright": ALL_RIGHTS_RESERVED,
}
_HAL_NAMES = {
    "domaine public": HAL_PUBLIC_DOMAIN, "public domain": HAL_PUBLIC_DOMAIN,
    "licence etalab": "etalab-2.0", "licence ouverte": "etalab-2.0",
    "copyright": ALL_RIGHTS_RESERVED, "all rights reserved": ALL_RIGHTS_RESERVED,
}


def _hal(raw: str) -> str | None:
    own = re.fullmatch(r"(?:https?://)?[a-z.-]*(?:archives-ouvertes\.fr|hal\.science)"
                       r"/licen[cs]es/([A-Za-z]+)/?", raw.strip())
    if own:
        return _HAL_OWN.get(own.group(1).lower())
    named = _HAL_NAMES.get(raw.strip().lower())
    return named or creative_commons(raw)


def _pmc(raw: str) -> str | None:
    """PMC's `license_code` (no version: CC BY, CC BY-NC…, CC0, TDM) or a JATS licence URL."""
    if raw.strip().upper() == "TDM":
        return PMC_TDM
    if raw.strip().lower() in ("none", "no-cc code"):
        return NOASSERTION
    return creative_commons(raw)


def _eurlex(raw: str) -> str | None:
    # Commission Decision 2011/833/EU: reuse of EU documents under CC BY 4.0.
    return "CC-BY-4.0"


_SOURCES: dict[str, Callable[[str], str | None]] = {
    "arxiv": _arxiv,
    "hal": _hal,
    "pubmed": _pmc,
    "scielo": creative_commons,  # "by", "by-nc/3.0" or the v540 link
    "openreview": creative_commons,  # "CC BY 4.0", "CC BY-SA 4.0"
    "eurlex": _eurlex,
    "koreascience": _generic,  # what an article page states, else nothing
    "local": _generic,
}
_logged: set[tuple[str, str]] = set()


def to_spdx(source: str, raw: str) -> str:
    """The SPDX id for a source's licence value; unknown values are NOASSERTION (and logged
    once at INFO, so `-v` shows what the table misses)."""
    if not raw.strip() and source != "eurlex":
        return NOASSERTION
    mapped = _SOURCES.get(source, _generic)(raw)
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
    known = {k.lower(): k for k in KNOWN}
    out = []
    for pattern in patterns:
        pattern = pattern.strip()
        if not pattern:
            continue
        folded = pattern.lower()
        wildcard = any(c in pattern for c in "*?[")
        if folded in known:
            out.append(known[folded])
        elif folded in GROUPS:
            out.append(folded)
        elif wildcard and any(fnmatch.fnmatchcase(k, folded) for k in known):
            out.append(pattern)
        else:
            close = [known.get(c, c) for c in difflib.get_close_matches(
                folded, [*known, *GROUPS], n=3, cutoff=0.5)]
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
    """The card's YAML `license` list: the Hub's ids of the licences present, `other` for
    any licence outside the Hub's list."""
    ids = {_HUB_IDS.get(spdx, "other") for spdx in present}
    known = sorted(i for i in ids if i in _HUB_KNOWN)
    return known + (["other"] if ids - set(known) else [])
