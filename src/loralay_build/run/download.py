"""The download stage: each discovered or retried candidate's file stored in the blob store,
or the reason it is refused, deferred or retried later."""

from __future__ import annotations

from loralay_build.corpus.contamination import id_keys
from loralay_build.errors import Deferred, Reason, Reject, TransientError
from loralay_build.http import BodyTooLarge, HttpError, HttpStatusError
from loralay_build.licences import allowed, to_spdx
from loralay_build.progress import progress
from loralay_build.run.context import BuildContext
from loralay_build.state import DISCOVERED, FETCHED, RETRY, Row


def fetch(ctx: BuildContext) -> None:
    # Licence and exclusion rejects are judged again against today's lists: a widened
    # filter admits them without a flag, a narrower one rejects them without a request.
    ctx.state.requeue(ctx.dataset, [Reason.LICENCE.value, Reason.EXCLUDED.value])
    statuses = [DISCOVERED, RETRY]
    total = ctx.state.count(ctx.dataset, statuses)
    for row in progress(ctx.state.iter_rows(ctx.dataset, statuses), total, "download"):
        _fetch_one(ctx, row)


def _fetch_one(ctx: BuildContext, row: Row) -> None:
    state, dataset, stats = ctx.state, ctx.dataset, ctx.stats.download
    cand = row.candidate
    if not cand.abstracts.get(cand.language, "").strip():
        others = ", ".join(sorted(cand.abstracts))
        detail = (f"abstracts only in {others}, none in the declared language "
                  f"{cand.language or '(none declared)'}" if others else
                  f"no {cand.language or 'main-language'} abstract in the record")
        _reject(ctx, cand.id, Reason.ABSTRACT_MISSING_IN_METADATA, detail)
        return
    if not cand.file_url:
        _reject(ctx, cand.id, Reason.UNAVAILABLE,
                     "the record has no file")
        return
    refusal = refused(ctx, cand.id, cand.doi, to_spdx(cand.source, cand.licence))
    if refusal:
        _reject(ctx, cand.id, *refusal)
        return
    try:
        sha = ctx.source.fetch(cand, ctx.client, ctx.blobs)
    except Reject as exc:
        _reject(ctx, cand.id, exc.reason, exc.detail)
    except Deferred as exc:  # the server's own schedule: waits without using an attempt
        state.set_status(dataset, cand.id, RETRY, reason=None,
                         detail=str(exc)[:500])
        stats.deferred += 1
    except TransientError as exc:
        attempts = row.attempts + 1
        if attempts >= ctx.settings.run.max_attempts:
            _reject(ctx, cand.id, Reason.UNAVAILABLE,
                         f"{exc} (after {attempts} runs)", attempts=attempts)
        else:
            state.set_status(dataset, cand.id, RETRY, reason=None,
                             detail=str(exc)[:500], attempts=attempts)
        stats.failed += 1
    except BodyTooLarge as exc:
        _reject(ctx, cand.id, Reason.TOO_LARGE, str(exc))
    except HttpStatusError as exc:
        _reject(ctx, cand.id, Reason.UNAVAILABLE, str(exc))
    except HttpError as exc:  # refused redirect, scheme or host
        _reject(ctx, cand.id, Reason.UNAVAILABLE, f"refused: {exc}")
    else:
        state.set_status(dataset, cand.id, FETCHED, blob_sha=sha, reason=None,
                         detail=None)
        ctx.fetched.add(bytes.fromhex(sha))
        stats.downloaded += 1


def _reject(ctx: BuildContext, cid: str, reason: Reason, detail: str,
            attempts: int | None = None) -> None:
    """Record the reject, counted for the run (the filters' own, judged again every run,
    are not: a run that only confirms them did nothing new)."""
    extra = {} if attempts is None else {"attempts": attempts}
    ctx.state.reject(ctx.dataset, cid, reason, detail, **extra)
    if reason not in (Reason.LICENCE, Reason.EXCLUDED):
        ctx.stats.download.rejected[reason.value] += 1


def refused(ctx: BuildContext, cid: str, doi: str, spdx: str) -> tuple[Reason, str] | None:
    """Why an exclusion list or the licence filter keeps a candidate out (None: it
    passes). Checked before download, and again at publishing."""
    listed = id_keys(cid, doi) & ctx.excluded
    if listed:
        return Reason.EXCLUDED, f"listed as {min(listed)}"
    patterns = ctx.settings.filters.licences
    if not allowed(spdx, patterns):
        return Reason.LICENCE, f"{spdx} not in {', '.join(patterns)}"
    return None
