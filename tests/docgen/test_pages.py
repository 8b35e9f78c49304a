"""The generated documentation pages equal what the code writes, and the readers of the
settings dataclasses see every shape of field doc and check the settings use."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from loralay_build.docgen import columns_page, settings_page
from loralay_build.docgen.__main__ import main
from loralay_build.docgen.fielddocs import field_docs, field_ranges
from loralay_build.docgen.pages import PAGES, regenerate
from loralay_build.errors import ConfigError
from loralay_build.tables import check_choice, check_ranges

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("a", "b")


def test_committed_pages_are_what_the_code_writes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check", "--root", str(ROOT)]) == 0, capsys.readouterr().out


def test_check_names_a_stale_page_and_writing_fixes_it(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text((ROOT / "Makefile").read_text())
    for page in PAGES:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        text = (ROOT / page).read_text(encoding="utf-8")
        stale = text.replace(" do not edit -->\n", " do not edit -->\n| `stale` |\n")
        assert stale != text
        (tmp_path / page).write_text(stale, encoding="utf-8")
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert main(["--root", str(tmp_path)]) == 0
    assert main(["--check", "--root", str(tmp_path)]) == 0
    for page in PAGES:
        assert (tmp_path / page).read_text() == (ROOT / page).read_text()


def test_a_page_without_its_markers_is_refused() -> None:
    with pytest.raises(SystemExit, match="markers of the generated part"):
        regenerate("docs/configuration.md", "# Configuration\n", ROOT)


def test_every_column_of_every_source_and_view_is_in_the_page() -> None:
    from loralay_build.corpus.columns import catalogue
    from loralay_build.sources import SOURCES

    text = columns_page.render()
    for column in catalogue():
        assert f"| `{column.name}` | `{columns_page.arrow_type(column.type)}` | " \
               f"{column.doc}" in text.replace("\\|", "|")
    for source in SOURCES.values():
        for view in source.views:
            for name, _, doc in view.columns:
                assert f"| `{name}` |" in text and doc in text


def test_every_reject_reason_is_in_the_page_with_why() -> None:
    from loralay_build.errors import Reason

    text = columns_page.render()
    for reason in Reason:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{reason}` |"))
        assert not row.endswith("|  |"), row


def test_every_make_target_is_in_the_table_with_what_it_does() -> None:
    import re

    from loralay_build.docgen.pages import make_targets

    makefile = (ROOT / "Makefile").read_text()
    targets = re.findall(r"^([a-z][\w-]*):(?!=)", makefile, re.M)
    table = make_targets(ROOT)
    assert targets and all(f"| `make {target}` | " in table for target in targets)


def test_every_settings_key_has_a_meaning() -> None:
    assert settings_page.undocumented() == []


@dataclass(frozen=True)
class Example:
    """A settings table with every documented shape."""

    # the comment above,
    # on two lines
    above: int = 1
    trailing: float = 0.5  # the comment at the end
    docstring: str = "a"
    """the docstring below"""
    bare: int = 3
    choice: str = "a"
    band: int = 5
    either: str = "a"

    def __post_init__(self) -> None:
        check_ranges(self, "x", at_least={"above": 0}, above={"trailing": 0},
                     at_most={"trailing": 1})
        check_choice(self.choice, "x", "choice", KINDS)
        if not 2 <= self.band <= 9:
            raise ConfigError("band")
        if self.either not in ("a", "c") or self.bare < 1:
            raise ConfigError("either")


def test_field_docs_read_comments_above_at_the_end_and_docstrings() -> None:
    assert field_docs(Example) == {"above": "the comment above, on two lines",
                                   "trailing": "the comment at the end",
                                   "docstring": "the docstring below"}


def test_field_ranges_read_the_checks() -> None:
    assert field_ranges(Example) == {
        "above": ["≥ 0"], "trailing": ["> 0", "≤ 1"], "choice": ["one of `a`, `b`"],
        "band": ["≥ 2", "≤ 9"], "either": ["one of `a`, `c`"], "bare": ["≥ 1"]}


def test_a_key_is_shown_with_its_type_default_range_and_meaning() -> None:
    keys = {key.name: key for key in settings_page.keys(Example)}
    assert keys["trailing"] == settings_page.Key("trailing", "float", "0.5", "> 0, ≤ 1",
                                                 "the comment at the end")
    assert keys["bare"].meaning == ""
