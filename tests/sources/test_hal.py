"""HAL record mapping, robust to the shapes real (and hand-edited) answers take."""

from __future__ import annotations

import pytest

from loralay_build.errors import ConfigError
from loralay_build.sources.hal import solr_date, to_candidate


def test_list_valued_fields_and_every_abstract_language() -> None:
    doc = {
        "docid": "440439", "halId_s": "hal-00440439", "uri_s": "https://hal.science/hal-00440439v2",
        "version_i": 2, "docType_s": "ART", "language_s": ["fr"],
        "title_s": ["Titre", "Title"], "fr_title_s": ["Titre"],
        "fr_abstract_s": ["Résumé « ici »\navec <i>patris</i>."], "en_abstract_s": ["Abstract."],
        "it_abstract_s": [""],
        "abstract_s": ["Résumé", "Abstract."],
        "fileMain_s": "https://hal.science/hal-00440439/document",
        "files_s": ["https://hal.science/hal-00440439/file/annexe.pdf"],
        "producedDate_s": "2016", "publicationDate_s": "2016-05-01",
        "modifiedDate_tdate": "2023-09-14T03:36:44Z", "doiId_s": "10.1000/x",
    }
    cand = to_candidate(doc, "hal")
    assert cand.id == "hal:440439" and cand.source_id == "440439"
    assert cand.abstracts == {"fr": "Résumé « ici »\navec <i>patris</i>.", "en": "Abstract."}
    assert cand.file_url == "https://hal.science/hal-00440439/document"  # main file, not files_s[0]
    assert cand.published == "2016"  # producedDate first, partial dates kept
    assert cand.title == "Titre" and cand.language == "fr" and cand.doi == "10.1000/x"
    assert cand.extra["halId"] == "hal-00440439" and cand.extra["version"] == 2


def test_scalars_integer_docid_and_broken_dates_are_tolerated() -> None:
    doc = {
        "docid": 123, "language_s": "fr", "title_s": "Seul titre",
        "files_s": ["https://hal.science/hal-1/file/a.pdf"],
        "producedDate_s": "-2016-33-01XX0:00:00Z", "publicationDate_s": "2014-05",
    }
    cand = to_candidate(doc, "hal")
    assert cand.id == "hal:123" and cand.title == "Seul titre" and cand.language == "fr"
    assert cand.file_url.endswith("a.pdf")  # no fileMain_s: first file
    assert cand.published == "2014-05"
    assert cand.abstracts == {}


def test_solr_dates() -> None:
    assert solr_date("2024") == "2024-01-01T00:00:00Z"
    assert solr_date("2024-03-05") == "2024-03-05T00:00:00Z"
    assert solr_date("2024-03-05T10:00:00") == "2024-03-05T10:00:00Z"
    with pytest.raises(ConfigError):
        solr_date("05/03/2024")
