"""A source is self-contained: a toy one, defined wholly here (its configuration, discovery,
fetch, its own column, its card notes and its fake server), is registered through
`sources.register` and built, verified and loaded like a shipped one.

The build and the verification run in a fresh interpreter (`run`) that registers the toy
before handing its arguments to the CLI, as a package adding a source would; the fake
server runs in the test's process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from loralay_build.blobs import BlobStore
from loralay_build.corpus.columns import Column, names
from loralay_build.fetch import fetch_pdf
from loralay_build.http import HttpClient
from loralay_build.identity import Identity
from loralay_build.licences import LicenceMapping
from loralay_build.parse.clean import Cleaner
from loralay_build.records import Candidate
from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.server import Reply, Request, SandboxServer
from loralay_build.sandbox.textgen import ProseGenerator
from loralay_build.source_table import SourceConfig
from loralay_build.sources.base import DiscoveryContext
from loralay_build.sources.command import SourceCommand
from loralay_build.views.schema import ViewLayout

ROOT = Path(__file__).resolve().parent.parent
DOCS = 8
SHELVES = ("north", "south")


# -- the toy source ---------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class ToyConfig(SourceConfig):
    """`[source]` of the toy library: where its listing is."""

    listing_url: str


class ToySource:
    """A library whose listing is one JSON array of records, each with a PDF link."""

    name = "toy"
    config_class: type[SourceConfig] = ToyConfig
    command = SourceCommand(help="Build the toy library.")
    declares: tuple[Column, ...] = (
        Column("shelf", pa.string(), "the shelf the toy library files the document on"),
    )
    columns: tuple[str, ...] = names(declares)
    card_notes = "The toy library of the source test: generated documents on loopback."
    licences = LicenceMapping()
    identity = Identity()  # its PDF URL and record page say where a document is, not what
    cleaners: tuple[tuple[str, Cleaner], ...] = ()
    views: tuple[ViewLayout, ...] = ()
    demos: tuple[str, ...] = ()

    def discover(self, ctx: DiscoveryContext) -> Iterator[list[Candidate]]:
        cfg = ctx.settings(ToyConfig)
        records = ctx.client.get_json(cfg.listing_url)
        yield [Candidate(id=f"toy:{r['id']}", source=self.name, source_id=r["id"],
                         dataset=ctx.dataset, title=r["title"], language="en",
                         abstracts={"en": r["abstract"]}, published=r["published"],
                         file_url=r["pdf"], licence=r["licence"],
                         extra={"columns": {"shelf": r["shelf"]}})
               for r in records]

    def fetch(self, candidate: Candidate, client: HttpClient, blobs: BlobStore) -> str:
        return fetch_pdf(candidate.file_url, client, blobs)


def run() -> None:
    """`python -c "from tests.test_toy_source import run; run()" ARGS`: the CLI with the toy
    registered."""
    from loralay_build import cli
    from loralay_build.sources import register

    register(ToySource)
    cli.main.add_command(cli.source_command(ToySource.name, ToySource.command))
    sys.argv = ["build-corpus", *sys.argv[1:]]
    cli.main()


# -- its fake server --------------------------------------------------------------------------

class ToyLibrary:
    """The toy library on a `SandboxServer`: `/toy/list` and one generated PDF per record."""

    def __init__(self, server: SandboxServer) -> None:
        self.server = server
        self.pdfs: dict[str, bytes] = {}
        self.records: list[dict[str, str]] = []
        for i in range(DOCS):
            gen = ProseGenerator(900 + i)
            abstract = gen.paragraph("en", 3)
            spec = ArticleSpec(title=gen.title("en"), authors=gen.authors(),
                               abstracts=[("Abstract", abstract)],
                               sections=[(f"{k} Part", [gen.paragraph("en", 7) for _ in range(3)])
                                         for k in range(1, 4)])
            doc_id = f"t{i}"
            self.pdfs[doc_id] = render_article(spec)
            self.records.append({
                "id": doc_id, "title": spec.title, "abstract": abstract,
                "published": f"20{10 + i:02d}-0{1 + i % 9}", "licence": "CC BY 4.0",
                "shelf": SHELVES[i % 2], "pdf": f"{server.base_url}/toy/pdf/{doc_id}",
            })
        server.route("/toy/list", self._listing)
        server.route("/toy/pdf/", self._pdf)

    def _listing(self, req: Request) -> Reply:
        return Reply(200, json.dumps(self.records).encode(),
                     {"Content-Type": "application/json"})

    def _pdf(self, req: Request) -> Reply:
        pdf = self.pdfs.get(req.path.rsplit("/", 1)[-1])
        if pdf is None:
            return Reply(404, b"not found")
        return Reply(200, pdf, {"Content-Type": "application/pdf"})


@pytest.fixture
def library() -> Iterator[ToyLibrary]:
    server = SandboxServer()
    toy = ToyLibrary(server)
    server.start()
    try:
        yield toy
    finally:
        server.stop()


def _toy_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from tests.test_toy_source import run; run()", *args],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])},
    )


def test_a_source_defined_outside_the_package_builds_verifies_and_loads(
        library: ToyLibrary, tmp_path: Path) -> None:
    config = tmp_path / "toy.toml"
    config.write_text(f'[source]\nlisting_url = "{library.server.base_url}/toy/list"\n'
                      'cleaners = ["running_headers"]\n\n[http]\nmin_interval = 0.0\n')
    out = tmp_path / "out"
    built = _toy_cli("toy", "--out", str(out), "--config", str(config), "--workers", "1",
                     "--no-filter")
    assert built.returncode == 0, built.stderr
    folder = out / "toy"
    verified = _toy_cli("verify", str(folder))
    assert verified.returncode == 0, verified.stdout + verified.stderr

    schema = pq.read_schema(next(folder.glob("*-of-*.parquet"))).remove_metadata()
    assert schema.names[-1] == "shelf" and "doi" not in schema.names
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "the shelf the toy library files the document on" in card
    assert ToySource.card_notes in card

    loaded = datasets.load_dataset(str(folder))
    rows = [row for split in loaded.values() for row in split]
    assert len(rows) == DOCS
    expected = {f"toy:{r['id']}": r for r in library.records}
    for row in rows:
        record = expected[row["article_id"]]
        assert row["shelf"] == record["shelf"]
        assert row["source"] == "toy" and row["licence"] == "CC-BY-4.0"
        assert row["abstract"] == record["abstract"] and row["article_words"]
