"""Every path under an output root (`--out`): the state folder and what it holds (database,
blobs, work files, locks, the views' indexes) and the dataset folders beside it.

Why: one place spells the folder names, so no module guesses where another keeps its files
and a command builds the layout once and passes it down. Standard library only: every
floor of the package may import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class OutputLayout:
    """The paths of one output root; nothing is created here."""

    root: Path

    @classmethod
    def of_dataset(cls, folder: Path) -> OutputLayout:
        """The layout a dataset folder belongs to (its parent is the root)."""
        return cls(folder.parent)

    @property
    def state_dir(self) -> Path:
        """The build state: a dot folder, so no dataset name can take it."""
        return self.root / ".loralay"

    @property
    def state_db(self) -> Path:
        return self.state_dir / "state.sqlite"

    @property
    def blobs(self) -> Path:
        """Downloaded files and page images, by sha256 (blobs.BlobStore)."""
        return self.state_dir / "blobs"

    @property
    def work(self) -> Path:
        """One Arrow file of rows per processed document (corpus.writer.WorkStore)."""
        return self.state_dir / "work"

    @property
    def views_index(self) -> Path:
        """The PubMed views' full-text index: candidate id -> sha256 of its JATS blob."""
        return self.state_dir / "views.sqlite"

    @property
    def views_abstracts(self) -> Path:
        """The PubMed citations view's cache of cited papers' abstracts."""
        return self.state_dir / "views-abstracts.sqlite"

    def has_state(self) -> bool:
        """Whether a build ever ran under this root."""
        return self.state_dir.is_dir()

    def lock(self, owner: str) -> Path:
        """The run lock of a dataset (views are locked by their layout dataset's)."""
        return self.state_dir / f"{owner}.lock"

    def dataset(self, name: str) -> Path:
        """A dataset's (or a view's) published folder."""
        return self.root / name
