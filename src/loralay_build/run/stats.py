"""What each stage of a build counted, in named fields.

`BuildStats.counts()` is their flat form, the run's record (the runs table, `status`, the
summary line): a count a stage did not take is absent from it, a count it took is there
even when zero.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from loralay_build.sources.base import DiscoveryFailure


def _taken(**counts: int | None) -> dict[str, int]:
    return {k: v for k, v in counts.items() if v is not None}


def _nonzero(**counts: int) -> dict[str, int]:
    return {k: v for k, v in counts.items() if v}


@dataclass
class DiscoverStats:
    batches: int = 0  # batches the source yielded: the three counts below are taken per batch
    discovered: int = 0
    new: int = 0
    changed: int = 0
    moved: int = 0  # the same document at a new path or URL (or re-dated): kept as it was
    other_datasets: int = 0  # candidates a shared crawl found for the other datasets
    gone: int | None = None  # no longer listed; None: not judged (a limited or failed listing)
    failures: list[DiscoveryFailure] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        listed = _taken(discovered=self.discovered, new=self.new,
                        changed=self.changed) if self.batches else {}
        return {**listed, **_nonzero(moved=self.moved,
                                     discovered_other_datasets=self.other_datasets),
                **_taken(gone=self.gone)}


@dataclass
class DownloadStats:
    downloaded: int = 0
    deferred: int = 0  # the server's own schedule: waits without using an attempt
    failed: int = 0  # transient failures, retried by a later run
    # Per reason, before processing: told to the user (run.lifecycle), not in the run record
    rejected: Counter[str] = field(default_factory=Counter)

    def counts(self) -> dict[str, int]:
        return _nonzero(downloaded=self.downloaded, download_deferred=self.deferred,
                        download_failed=self.failed)


@dataclass
class ProcessStats:
    processed: int = 0
    rejected: Counter[str] = field(default_factory=Counter)  # per reason
    file_changed: int | None = None  # stored files gone or changed; None: not checked

    def counts(self) -> dict[str, int]:
        return {**_nonzero(processed=self.processed),
                **{f"rejected_{reason}": n for reason, n in self.rejected.items() if n},
                **_taken(file_changed=self.file_changed)}


@dataclass
class BuildStats:
    discover: DiscoverStats = field(default_factory=DiscoverStats)
    download: DownloadStats = field(default_factory=DownloadStats)
    process: ProcessStats = field(default_factory=ProcessStats)
    published_rows: int | None = None
    # The source's step after publishing adds its own (PublishedDataset.counts).
    after_publish: Counter[str] = field(default_factory=Counter)
    waiting_retry: int | None = None
    discovery_failed: int | None = None
    downloads_discarded: int | None = None
    shards_repaired: int = 0  # published files found missing or damaged, written again

    def rejected(self) -> Counter[str]:
        """Documents this run rejected, per reason, at either stage."""
        return self.download.rejected + self.process.rejected

    def counts(self) -> Counter[str]:
        out = Counter({**self.discover.counts(), **self.download.counts(),
                       **self.process.counts()})
        out.update(_taken(published_rows=self.published_rows,
                          waiting_retry=self.waiting_retry,
                          discovery_failed=self.discovery_failed,
                          downloads_discarded=self.downloads_discarded))
        out.update(_nonzero(shards_repaired=self.shards_repaired))
        out.update(self.after_publish)
        return out
