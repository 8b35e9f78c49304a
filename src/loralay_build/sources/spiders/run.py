"""`python -m loralay_build.sources.spiders.run <module:Spider> <config.json>`: one Scrapy
crawl, items as JSON lines on stdout, logs on stderr. The spider lives in its source's
package and is named by its import path, so this runner knows no source.

A subprocess because Twisted's reactor cannot be restarted inside one process; the source
reading stdout commits each item to the state database as it arrives.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

from scrapy import Spider
from scrapy.crawler import CrawlerProcess
from scrapy.settings import default_settings


class StdoutPipeline:
    """Write every item as one flushed JSON line, so the reader sees it at once."""

    def process_item(self, item: dict[str, Any]) -> dict[str, Any]:
        sys.stdout.write(json.dumps(item, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return item


# Scrapy renamed the setting (the old name still works there, with a deprecation warning).
RESOLVER_SETTING = ("TWISTED_DNS_RESOLVER" if hasattr(default_settings, "TWISTED_DNS_RESOLVER")
                    else "DNS_RESOLVER")


def crawl_settings(config: dict[str, Any]) -> dict[str, Any]:
    """Polite defaults: robots.txt, one request at a time per host, delays, timeouts."""
    return {
        "ROBOTSTXT_OBEY": True,
        "CONCURRENT_REQUESTS": 1,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": float(config.get("download_delay", 3.0)),
        "DOWNLOAD_DELAY_JITTER": 0.5,
        "DOWNLOAD_TIMEOUT": float(config.get("timeout", 30.0)),
        "DOWNLOAD_MAXSIZE": int(config.get("max_page_bytes", 10 * 1024 * 1024)),
        "USER_AGENT": str(config.get("user_agent", "loralay-build/0.1 (corpus builder)")),
        "TELNETCONSOLE_ENABLED": False,
        "DOWNLOAD_HANDLERS": {"file": None, "data": None, "s3": None, "ftp": None},
        "RETRY_HTTP_CODES": [500, 502, 504, 522, 524, 408],  # 429/503: RetryAfterMiddleware
        "RETRY_TIMES": int(config.get("retries", 3)),
        "RETRY_AFTER_TIMES": int(config.get("retries", 3)),
        "RETRY_AFTER_MAX": float(config.get("retry_after_max", 60.0)),
        "DOWNLOADER_MIDDLEWARES": {
            "loralay_build.sources.spiders.middleware.RetryAfterMiddleware": 560,
            # after every middleware that makes requests (redirects, retries): it sees all
            "loralay_build.sources.spiders.middleware.PolicyMiddleware": 950,
        },
        RESOLVER_SETTING: "loralay_build.sources.spiders.middleware.PolicyResolver",
        **policy_settings(config.get("policy", {})),
        "ITEM_PIPELINES": {"loralay_build.sources.spiders.run.StdoutPipeline": 100},
        "LOG_LEVEL": str(config.get("log_level", "WARNING")),
        "LOG_FORMAT": "%(levelname)s %(name)s: %(message)s",  # read back by crawl._relay
        "COOKIES_ENABLED": False,
        "LOG_INSTALL_ROOT_HANDLER": True,
    }


def policy_settings(policy: dict[str, Any]) -> dict[str, Any]:
    """The `policy` the source passed (`crawl.crawl_policy`) as PolicyMiddleware settings."""
    return {
        "POLICY_ALLOWED_HOSTS": list(policy.get("allowed_hosts", [])),
        "POLICY_TRUSTED_ENDPOINTS": [f"{host}:{port}"
                                     for host, port in policy.get("trusted_endpoints", [])],
        "POLICY_ALLOW_PRIVATE": bool(policy.get("allow_private", False)),
        "POLICY_DEADLINE": float(policy.get("deadline", 300.0)),
    }


def spider_class(path: str) -> type[Spider] | None:
    """The spider class `module:Name` names, or None when it names none."""
    module, _, name = path.partition(":")
    try:
        found = getattr(importlib.import_module(module), name, None) if name else None
    except ImportError:
        return None
    return found if isinstance(found, type) and issubclass(found, Spider) else None


def main(argv: list[str]) -> int:
    spider = spider_class(argv[0]) if len(argv) == 2 else None
    if spider is None:
        sys.stderr.write("usage: run MODULE:SPIDER CONFIG.json\n")
        return 2
    config = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    process = CrawlerProcess(crawl_settings(config))
    process.crawl(spider, config=config)
    process.start()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
