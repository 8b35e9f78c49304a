"""Offline fakes of every source's protocol, on loopback, over generated documents."""

from __future__ import annotations

from loralay_build.sandbox.hal import HalSandbox
from loralay_build.sandbox.server import SandboxServer


class Sandbox:
    """One server carrying every protocol; a context manager."""

    def __init__(self, hal_docs: int = 24, seed: int = 7, faults: bool = True) -> None:
        self.server = SandboxServer()
        self.hal = HalSandbox(self.server, n_docs=hal_docs, seed=seed, faults=faults)

    def __enter__(self) -> Sandbox:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
