"""Offline fakes of every source's protocol, on loopback, over generated documents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loralay_build.sandbox.arxiv import ArxivSandbox
from loralay_build.sandbox.eurlex import EurlexSandbox
from loralay_build.sandbox.hal import HalSandbox
from loralay_build.sandbox.koreascience import KoreaScienceSandbox
from loralay_build.sandbox.openreview import OpenReviewSandbox
from loralay_build.sandbox.pubmed import PubmedSandbox
from loralay_build.sandbox.scielo import SciELOSandbox
from loralay_build.sandbox.server import SandboxServer
from loralay_build.sources.openreview.notes import STATUSES


@dataclass(frozen=True)
class DemoBuild:
    """One dataset `build-corpus demo` builds: the source, the folder, the config overlay."""

    source: str
    dataset: str
    overrides: dict[str, Any]


class Sandbox:
    """One server carrying every protocol; a context manager."""

    def __init__(self, docs: int = 24, seed: int = 7, faults: bool = True) -> None:
        self.server = SandboxServer()
        self.hal = HalSandbox(self.server, n_docs=docs, seed=seed, faults=faults)
        self.scielo = SciELOSandbox(self.server, n_docs=docs, seed=seed, faults=faults)
        self.koreascience = KoreaScienceSandbox(self.server, n_docs=docs, seed=seed,
                                                faults=faults)
        self.arxiv = ArxivSandbox(self.server, n_docs=docs, seed=seed, faults=faults)
        self.pubmed = PubmedSandbox(self.server, n_docs=docs, seed=seed, faults=faults)
        self.openreview = OpenReviewSandbox(self.server, n_docs=docs, seed=seed, faults=faults)
        self.eurlex = EurlexSandbox(self.server, n_docs=docs, seed=seed, faults=faults)

    def demo_builds(self) -> list[DemoBuild]:
        """Every dataset the demo builds, pointed at this sandbox."""
        return [
            DemoBuild("hal", "hal", self.hal.client_config()),
            DemoBuild("scielo", "scielo-es", self.scielo.client_config()),
            DemoBuild("scielo", "scielo-pt", self.scielo.client_config()),
            DemoBuild("koreascience", "koreascience", self.koreascience.client_config()),
            DemoBuild("arxiv", "arxiv", self.arxiv.demo_config()),
            DemoBuild("pubmed", "pubmed",
                      self.pubmed.client_config(views=["sumpubmed", "citations"])),
            DemoBuild("openreview", "openreview", self.openreview.client_config(STATUSES)),
            *(DemoBuild("eurlex", f"eurlex-{lang}", self.eurlex.client_config())
              for lang in ("en", "fr", "el")),
        ]

    def __enter__(self) -> Sandbox:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
