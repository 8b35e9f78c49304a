"""Run one Scrapy spider in a subprocess (`spiders.run`) and read its items as they arrive.

Shared by the HTML-only routes: the caller commits each item to the state database before
asking for the next one, so a killed crawl loses at most the items not yet committed.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from loralay_build.errors import LoralayError
from loralay_build.http import HttpClient
from loralay_build.source_table import SourceConfig
from loralay_build.tables import check_ranges

log = logging.getLogger(__name__)

STOP_WAIT = 10.0
# A crawl's log line as `spiders.run` formats it (LOG_FORMAT): level, logger, message.
_LOG_LINE = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$")


@dataclass(frozen=True, kw_only=True)
class CrawlConfig(SourceConfig):
    """`[source]` keys of a source crawled by a Scrapy spider."""

    download_delay: float  # seconds between two pages (jittered 0.5x-1.5x by Scrapy)
    timeout: float  # seconds a page request may take
    retries: int  # tries of a failed page after the first
    retry_after_max: float  # a longer Retry-After is cut to this
    batch_size: int  # items committed to the state DB together
    max_page_bytes: int | None = None  # largest page the spider reads (unset: 10 MiB)
    log_level: str | None = None  # Scrapy's log level (unset: WARNING)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ranges(self, "source", at_least={"download_delay": 0, "retries": 0,
                                               "retry_after_max": 0, "batch_size": 1},
                     above={"timeout": 0})

    def spider_config(self, client: HttpClient) -> dict[str, Any]:
        """What `spiders.run` reads of these keys, with the run's HTTP policy."""
        given = {"max_page_bytes": self.max_page_bytes, "log_level": self.log_level}
        return {"download_delay": self.download_delay, "timeout": self.timeout,
                "retries": self.retries, "retry_after_max": self.retry_after_max,
                **{k: v for k, v in given.items() if v is not None},
                "user_agent": client.settings.user_agent, "policy": crawl_policy(client)}


def crawl_policy(client: HttpClient) -> dict[str, Any]:
    """The run's HTTP policy for a spider (`policy` in its config): one policy for both HTTP
    stacks, with the same trusted endpoints (host and port)."""
    settings = client.settings
    return {
        "allowed_hosts": list(settings.allowed_hosts),
        "trusted_endpoints": sorted([host, port] for host, port in client.trusted),
        "allow_private": settings.allow_private,
        "deadline": settings.deadline,
    }


def spider_items(spider: str, config: dict[str, Any],
                 label: str) -> Generator[dict[str, Any], None, None]:
    """Items of one crawl of `spider` (`module:Class`); error items are logged, not yielded.
    Closing the generator early ends the crawl; a crawl that ran to its end with a failure
    status raises."""
    with tempfile.TemporaryDirectory(prefix="loralay-spider-") as tmp:
        path = Path(tmp) / "config.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        proc = subprocess.Popen(
            [sys.executable, "-m", "loralay_build.sources.spiders.run", spider, str(path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
            errors="replace",
        )
        assert proc.stdout is not None and proc.stderr is not None
        relay = threading.Thread(target=_relay, args=(proc.stderr, label), daemon=True)
        relay.start()
        try:
            for line in proc.stdout:
                item = json.loads(line)
                if "error" in item:
                    log.error("%s %s error at %s: %s", label, item["error"], item.get("url"),
                              item.get("detail"))
                    continue
                yield item
        finally:
            _stop(proc)
            relay.join(STOP_WAIT)
            proc.stderr.close()
        if proc.returncode != 0:
            raise LoralayError(f"the {label} crawl exited with {proc.returncode}")


def _relay(stream: IO[str], label: str) -> None:
    """The crawl's log lines through this process's logging: printed above the progress bars
    (a line written straight to the terminal lands inside one) and silenced by -q. A line
    without a level (a traceback's) keeps the level of the line before it."""
    level = logging.WARNING
    for line in stream:
        text = line.rstrip("\n")
        found = _LOG_LINE.match(text)
        if found:
            level = logging.getLevelNamesMapping()[found.group(1)]
            text = found.group(2)
        if text:
            log.log(level, "%s crawl: %s", label, text)


def _stop(proc: subprocess.Popen[str]) -> None:
    """End the crawl (it may still be running when discovery stops early)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
