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
from loralay_build.sources import SOURCES
from loralay_build.sources.openreview.notes import STATUSES


@dataclass(frozen=True)
class DemoBuild:
    """One dataset `build-corpus demo` builds: the source, the folder, the config overlay,
    and whether its fake serves scanned and broken-font documents (read with OCR when the
    machine can)."""

    source: str
    dataset: str
    overrides: dict[str, Any]
    ocr: bool = False


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
        """Every dataset the demo builds (`Source.demos`), in the registry's order (that of
        `demo --only`), pointed at this sandbox."""
        configs = {
            "hal": self.hal.client_config(),
            "scielo": self.scielo.client_config(),
            "koreascience": self.koreascience.client_config(),
            "arxiv": self.arxiv.demo_config(),
            "pubmed": self.pubmed.client_config(views=["sumpubmed", "citations"]),
            "openreview": self.openreview.client_config(STATUSES),
            "eurlex": self.eurlex.client_config(),
        }
        return [DemoBuild(name, dataset, configs[name], ocr=name == "hal")
                for name, source in SOURCES.items() for dataset in source.demos]

    def __enter__(self) -> Sandbox:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
