"""Which arXiv PDF to download: the bulk bucket (GCS `arxiv-dataset`), else the export host.

Bulk downloads from arxiv.org are not allowed, so the bucket comes first. It may lack a
paper's newest version; the version policy says what then: `latest` takes the newest version
the bucket has, `metadata` insists on the version whose abstract the metadata holds and gets
it from the export host (paced at arXiv's one request per 3 s) when the bucket lacks it.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from loralay_build.http import HttpClient
from loralay_build.sources.arxiv.meta import ArxivMeta, yymm

STORAGE = "https://storage.googleapis.com"
BUCKET = "arxiv-dataset"
EXPORT = "https://export.arxiv.org"
POLICIES = ("latest", "metadata")
_OBJECT_VERSION = re.compile(r"v(\d+)\.pdf$")


@dataclass(frozen=True)
class PdfChoice:
    url: str
    version: int
    host: str  # gcs | export
    md5: str = ""  # hex; "" when the host publishes none
    size: int = 0


def bucket_prefix(arxiv_id: str) -> str:
    """Object-name prefix of every version of a paper's PDF in the bucket."""
    if "/" in arxiv_id:
        archive, number = arxiv_id.split("/")
        return f"arxiv/{archive.split('.')[0]}/pdf/{yymm(arxiv_id)}/{number}v"
    return f"arxiv/arxiv/pdf/{yymm(arxiv_id)}/{arxiv_id}v"


def _md5_hex(value: str) -> str:
    """GCS publishes base64 MD5 digests."""
    try:
        return base64.b64decode(value).hex() if value else ""
    except ValueError:
        return ""


class PdfLocator:
    """Lists a paper's PDF objects in the bucket and applies the version policy."""

    def __init__(self, client: HttpClient, policy: str, storage: str | None = None,
                 bucket: str | None = None, export: str | None = None) -> None:
        self.client = client
        self.policy = policy  # one of POLICIES, checked with the configuration
        self.storage = (storage or STORAGE).rstrip("/")
        self.bucket = bucket or BUCKET
        self.export = (export or EXPORT).rstrip("/")

    def objects(self, arxiv_id: str) -> dict[int, PdfChoice]:
        """Every PDF version the bucket holds, by version number (JSON API, paged)."""
        url = f"{self.storage}/storage/v1/b/{self.bucket}/o"
        params: dict[str, str] = {"prefix": bucket_prefix(arxiv_id)}
        out: dict[int, PdfChoice] = {}
        while True:
            answer = self.client.get_json(url, params)
            for item in answer.get("items", []):
                name = str(item.get("name", ""))
                found = _OBJECT_VERSION.search(name)
                if found:
                    version = int(found.group(1))
                    out[version] = PdfChoice(
                        f"{self.storage}/{self.bucket}/{name}", version, "gcs",
                        _md5_hex(str(item.get("md5Hash", ""))), int(item.get("size", 0) or 0),
                    )
            token = answer.get("nextPageToken")
            if not token:
                return out
            params = {**params, "pageToken": str(token)}

    def choose(self, meta: ArxivMeta) -> PdfChoice:
        objects = self.objects(meta.id)
        if self.policy == "latest" and objects:
            return objects[max(objects)]
        if meta.version in objects:
            return objects[meta.version]
        return PdfChoice(f"{self.export}/pdf/{meta.id}v{meta.version}", meta.version, "export")
