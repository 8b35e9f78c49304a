"""The one publisher of dataset folders (layout datasets and derived views alike).

A publication is, per split, a list of items: a row id and a key that changes whenever the
row's content does. Every shard records its items and the format it was written in (schema,
output settings, version) in its Parquet footer, so the shard set in place tells by itself
what it holds. Publishing keeps each shard whose items are all still wanted with the same
key, byte for byte, and writes only the rest (new items, and the remaining items of a shard
that lost or changed one) into new shards: a run costs what changed. Each split then holds
the same rows as a full republish of the same state; only which shard holds a row differs.

Publishing is two calls: `write_shards` writes the new set beside the one in use, then
`switch` makes it the set in use. The switch is atomic. Every shard of the new set gets a name
of a new generation that no listed file has: a kept shard is a hard link of its file under
that name (no byte written, and a Hub upload finds its content already stored), a new one is
written. Then the reports, the card (what `datasets` reads: one glob per split, which matches
that generation's names only) and build.json (what `verify` reads) are replaced atomically,
and only then are unlisted files removed. So the card's globs never match a stale shard or
one not yet switched to, a crash at any point leaves a complete set in use, and the same calls
afterwards finish the job with the same result.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

import loralay_build
from loralay_build.blobs import atomic_link, atomic_write_bytes, sha256_file
from loralay_build.config import OutputSettings
from loralay_build.corpus.encoder import EncodeError, GroupEncoder
from loralay_build.corpus.folder import BUILD_FILE, damaged_files, published_build, read_build
from loralay_build.corpus.split import SPLITS
from loralay_build.corpus.writer import GroupCopy, Segment, dict_rows_table, digest, write_shard
from loralay_build.digests import Digests, find
from loralay_build.errors import LoralayError

log = logging.getLogger(__name__)

CARD_FILE = "README.md"
MEMBERS_KEY = b"loralay.members"
FORMAT_KEY = b"loralay.format"


class PublishError(LoralayError):
    """New shards could not be written (disk full, quota); the previous set stays in use."""


@dataclass(frozen=True, slots=True)
class Item:
    """One published row: its id, and a key that changes whenever its content changes."""

    id: str
    key: str


class RowReader(Protocol):
    """Where the rows of new shards come from: the publisher asks for them shard by shard,
    so the caller's rows need never all be in memory."""

    def tables(self, items: Sequence[Item]) -> Iterable[pa.Table]:
        """Tables holding the rows of `items`, in the items' order."""
        ...


@dataclass(frozen=True)
class DictRows:
    """Rows held in memory as plain values by item id (a derived view's): one table a shard."""

    by_id: Mapping[str, dict[str, Any]]
    schema: pa.Schema

    def tables(self, items: Sequence[Item]) -> list[pa.Table]:
        return [dict_rows_table([self.by_id[item.id] for item in items], self.schema)]


@dataclass(frozen=True)
class ShardFile:
    name: str
    split: str
    rows: int
    bytes: int
    sha256: str


def shard_name(split: str, generation: str, index: int, count: int) -> str:
    """Shard file name; the generation keeps new shards from overwriting any file in use."""
    return f"{split}-{generation}-{index:05d}-of-{count:05d}.parquet"


def format_key(schema: pa.Schema, settings: OutputSettings) -> str:
    """What changes a shard's bytes besides its rows (a shard of another format is rewritten),
    readable back by `compact`. Shard sizes and the file rule change packing, not rows, and
    the work files' compression no shard byte: they are left out."""
    output = {k: v for k, v in asdict(settings).items()
              if k not in ("shard_rows", "rows_per_file", "recent_days", "work_compression")}
    return json.dumps({"schema": digest(str(named_schema(schema))), "output": output,
                       "version": loralay_build.__version__}, sort_keys=True)


def named_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` with every list's items named as Arrow names them: a schema read back from
    Parquet (by `compact`) names them `element`, and is the same schema."""
    return pa.schema([f.with_type(_item_names(f.type)) for f in schema])


def _item_names(type_: pa.DataType) -> pa.DataType:
    if isinstance(type_, pa.StructType):
        return pa.struct([f.with_type(_item_names(f.type)) for f in type_])
    if isinstance(type_, (pa.ListType, pa.LargeListType, pa.FixedSizeListType)):
        item = type_.value_field
        field = pa.field("item", _item_names(item.type), item.nullable, item.metadata)
        if isinstance(type_, pa.FixedSizeListType):
            return pa.list_(field, type_.list_size)
        return pa.large_list(field) if isinstance(type_, pa.LargeListType) else pa.list_(field)
    return type_


def output_settings(fmt: str, shard_rows: int) -> OutputSettings:
    """The output settings a shard of format `fmt` was written with."""
    return OutputSettings(shard_rows=shard_rows, **json.loads(fmt)["output"])


def shard_items(path: Path) -> tuple[str, list[Item]] | None:
    """The format and items recorded in a shard's footer; None when it records none."""
    try:
        meta = pq.read_metadata(path).metadata or {}
    except (OSError, pa.ArrowException):
        return None
    if MEMBERS_KEY not in meta or FORMAT_KEY not in meta:
        return None
    return meta[FORMAT_KEY].decode(), [Item(i, k) for i, k in json.loads(meta[MEMBERS_KEY])]


class Selection(Sequence[Item]):
    """The items at the given positions, each made when read by `item_at`: a plan holds
    positions (8 bytes an item), not items."""

    def __init__(self, item_at: Callable[[int], Item], positions: npt.NDArray[np.intp]) -> None:
        self.item_at, self.positions = item_at, positions

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, at: int) -> Item: ...
    @overload
    def __getitem__(self, at: slice) -> Selection: ...
    def __getitem__(self, at: int | slice) -> Item | Selection:
        if isinstance(at, slice):
            return Selection(self.item_at, self.positions[at])
        return self.item_at(int(self.positions[at]))

    def take(self, at: npt.NDArray[np.intp]) -> Selection:
        return Selection(self.item_at, self.positions[at])


class ItemIndex:
    """Where each id stands in a sequence of items: the ids' 64-bit hashes, sorted, beside
    their positions (16 bytes an item, where a dict of the ids took about 150)."""

    def __init__(self, items: Sequence[Item]) -> None:
        self.items = items
        hashes = np.fromiter((hash(item.id) for item in items), np.int64, len(items))
        self._order = np.argsort(hashes, kind="stable")
        self._hashes = hashes[self._order]

    def positions(self, found: Sequence[Item]) -> npt.NDArray[np.intp]:
        """The position of each of `found` with the same id and key; -1 where none."""
        wanted = np.fromiter((hash(item.id) for item in found), np.int64, len(found))
        out = np.full(len(found), -1, dtype=np.intp)
        for n, start in enumerate(np.searchsorted(self._hashes, wanted).tolist()):
            for at in range(start, len(self._hashes)):  # equal hashes lie together
                if self._hashes[at] != wanted[n]:
                    break
                position = int(self._order[at])
                if self.items[position].id == found[n].id:
                    out[n] = position if self.items[position].key == found[n].key else -1
                    break
        return out


@dataclass
class Plan:
    """Shards kept as they are, the items of each shard to write, per split, and the
    previous shards of this format that are not kept (their row groups may be copied)."""

    kept: list[dict[str, Any]]
    new: dict[str, list[Sequence[Item]]]
    rewritten: list[tuple[Path, list[Item]]]


def file_limit(rows: int, rows_per_file: int) -> int:
    """The most shards a split of `rows` rows may hold."""
    return max(1, rows // rows_per_file)


def fits(files: list[dict[str, Any]], rows_per_file: int) -> bool:
    """Whether every split of a shard set keeps the file rule (a folder of an older layout
    does not, and is merged even when its rows are up to date)."""
    return all(
        sum(f["split"] == split for f in files)
        <= file_limit(sum(f["rows"] for f in files if f["split"] == split), rows_per_file)
        for split in {f["split"] for f in files})


def plan(folder: Path, previous: list[dict[str, Any]], splits: Mapping[str, Sequence[Item]],
         fmt: str, shard_rows: int, repack: bool = False, rows_per_file: int = 0,
         recent: Mapping[str, npt.NDArray[np.bool_]] | None = None) -> Plan:
    """Keep every previous shard whose items all stay in its split with the same key; pack
    the other items, in the given order, into new shards of `shard_rows` (all of them when
    `repack`). With `rows_per_file`, a split holds at most `file_limit` shards: the smallest
    kept shards join the items to pack until it does, and the items are spread evenly over
    the shards allowed when full ones would be too many. `recent` marks, per split, the
    items likely to change again soon (`Tiers`). Only positions are held: `splits` may make
    its items when read."""
    covered = {split: np.zeros(len(items), dtype=bool) for split, items in splits.items()}
    indexes: dict[str, ItemIndex] = {}  # built for the splits previous shards hold
    candidates: dict[str, list[tuple[dict[str, Any], npt.NDArray[np.intp]]]] = {}
    same_format: dict[str, list[Item]] = {}
    for entry in previous:
        found = shard_items(folder / entry["name"])
        split = entry["split"]
        if found is None or found[0] != fmt or len(found[1]) != entry["rows"]:
            continue
        same_format[entry["name"]] = found[1]
        if split not in splits or repack:
            continue
        if split not in indexes:
            indexes[split] = ItemIndex(splits[split])
        at = indexes[split].positions(found[1])
        if (at >= 0).all() and not covered[split][at].any():
            candidates.setdefault(split, []).append((entry, at))
            covered[split][at] = True
    per_shard = max(1, shard_rows)
    kept: list[dict[str, Any]] = []
    new: dict[str, list[Sequence[Item]]] = {}
    for split, items in splits.items():
        held = sorted(candidates.get(split, []), key=lambda c: c[0]["rows"], reverse=True)
        limit = file_limit(len(items), rows_per_file) if rows_per_file else len(items) + 1
        young = (recent or {}).get(split, np.zeros(len(items), dtype=bool))
        tiers = Tiers(young, per_shard, limit)
        while held and len(held) + tiers.shards(~covered[split]) > limit:
            covered[split][held.pop()[1]] = False  # the smallest joins the repack
        kept += [entry for entry, _ in held]
        new[split] = tiers.pack(Selection(items.__getitem__, np.flatnonzero(~covered[split])),
                                limit - len(held))
    order = {id(entry): at for at, entry in enumerate(previous)}
    kept.sort(key=lambda entry: order[id(entry)])  # the previous order, for the names
    for entry in kept:
        del same_format[entry["name"]]
    return Plan(kept, new, [(folder / name, found) for name, found in same_format.items()])


class Tiers:
    """How a split's items to write are cut into shards: items likely to change again
    (recent ones: revisions cluster on them) in shards as small as the file rule leaves room
    for, so a revision rewrites few rows; the others in shards of `per_shard` rows. The
    recent shards share what the old ones leave of `limit` (later nights' new shards make
    the smallest merge), and hold at least an eighth of `per_shard` rows."""

    def __init__(self, young: npt.NDArray[np.bool_], per_shard: int, limit: int) -> None:
        self.young, self.per_shard = young, per_shard
        room = max(1, limit - -(-int((~young).sum()) // per_shard))
        self.young_rows = max(max(1, per_shard // 8), -(-int(young.sum()) // room))

    def count(self, old: int, young: int) -> int:
        """How many shards `old` and `young` items take."""
        return -(-old // self.per_shard) + -(-young // self.young_rows)

    def shards(self, todo: npt.NDArray[np.bool_]) -> int:
        """How many shards the items `todo` marks take."""
        young = int((todo & self.young).sum())
        return self.count(int(todo.sum()) - young, young)

    def pack(self, todo: Selection, room: int) -> list[Sequence[Item]]:
        """`todo` cut into at most `room` shards (evenly, tiers mixed, when the tiers' shards
        would be more)."""
        young = self.young[todo.positions]
        recent = int(young.sum())
        if self.count(len(todo) - recent, recent) > room:
            return _even(todo, max(self.per_shard, -(-len(todo) // max(1, room))))
        young_shards = -(-recent // self.young_rows)
        old = todo.take(np.flatnonzero(~young))
        return (_even(old, max(self.per_shard, -(-len(old) // max(1, room - young_shards))))
                + _even(todo.take(np.flatnonzero(young)), -(-recent // max(1, young_shards))))


def _even(todo: Selection, size: int) -> list[Sequence[Item]]:
    return [todo[i : i + size] for i in range(0, len(todo), max(1, size))]


@dataclass(frozen=True)
class Shards:
    """A new shard set written beside the one in use, not yet switched to: the file entries
    of the whole set, the files it added (removed when the switch fails) and how many shards
    it kept and rows it wrote."""

    folder: Path
    files: list[dict[str, Any]]
    written: list[Path]
    kept: int
    rows: int


def write_shards(folder: Path, fingerprint: str, splits: Mapping[str, Sequence[Item]],
                 rows: RowReader, schema: pa.Schema, settings: OutputSettings,
                 repack: bool = False,
                 recent: Mapping[str, npt.NDArray[np.bool_]] | None = None,
                 encoder: GroupEncoder | None = None) -> Shards | None:
    """Write the shards `splits` needs beside the set in place, keeping every unchanged one;
    None (nothing written) when the set in place has this fingerprint. `repack` rewrites
    every shard, packed full. The set is in use only once `switch` names it. `encoder`
    encodes the row groups (in this process unless given)."""
    for name, problem in damaged_files(folder, read_build(folder)):
        log.warning("%s: %s; every shard of the dataset is written again", folder / name,
                    problem)
    previous = published_build(folder)
    if previous.get("fingerprint") == fingerprint and not repack and fits(
            previous["files"], settings.rows_per_file):
        log.info("%s is up to date", folder)
        remove_stale(folder, previous["files"])  # left by a run stopped after the switch
        return None
    folder.mkdir(parents=True, exist_ok=True)
    fmt = format_key(schema, settings)
    in_use = sorted(f["name"] for f in previous.get("files", []))
    layout = plan(folder, previous.get("files", []), splits, fmt, settings.shard_rows, repack,
                  settings.rows_per_file, recent)
    generation = digest([fingerprint, in_use, repack])[:8]
    written: list[Path] = []
    try:
        files = write_new(folder, layout, generation, in_use, rows, schema, settings, fmt,
                          written, encoder)
    except (OSError, EncodeError) as exc:  # disk full, quota, a worker lost
        raise _failed(folder, written, exc, switched=False) from exc
    count = sum(len(group) for groups in layout.new.values() for group in groups)
    return Shards(folder, files, written, len(layout.kept), count)


def switch(shards: Shards, build: dict[str, Any], card: str,
           reports: Mapping[str, bytes] | None = None) -> None:
    """Make `shards` the set in use: `reports` (rejects.jsonl), the card, then build.json,
    each replaced atomically; only then are unlisted files removed."""
    folder = shards.folder
    switched = False
    try:
        for name, data in (reports or {}).items():
            atomic_write_bytes(folder / name, data)
        atomic_write_bytes(folder / CARD_FILE, card.encode())
        switched = True
        atomic_write_bytes(folder / BUILD_FILE,
                           (json.dumps(build, indent=2, sort_keys=True) + "\n").encode())
    except OSError as exc:  # disk full, quota
        raise _failed(folder, shards.written, exc, switched) from exc
    remove_stale(folder, shards.files)  # only once the card and record name the new set
    log.info("%s: %d shard(s) kept, %d row(s) written", folder, shards.kept, shards.rows)


def _failed(folder: Path, written: list[Path], exc: OSError | EncodeError,
            switched: bool) -> PublishError:
    """The error of a publication that failed; before the switch, the old set stays in use
    and nothing may look half-published: the files `written` for the new one go."""
    if not switched:
        for path in written:
            path.unlink(missing_ok=True)
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
    return PublishError(f"{folder}: publishing failed ({reason}); "
                        + ("run again to finish the switch" if switched
                           else "the previous version is kept"))


def write_new(folder: Path, layout: Plan, generation: str, in_use: Collection[str],
              rows: RowReader, schema: pa.Schema, settings: OutputSettings, fmt: str,
              written: list[Path], encoder: GroupEncoder | None = None) -> list[dict[str, Any]]:
    """The shards of a plan under names of `generation` (asserted free), split by split, the
    kept ones first: each kept shard linked to its new name, each new one written recording
    its items and format, its runs of row groups that a rewritten shard holds unchanged
    copied from it. `written` collects each path as soon as it exists, so a failed
    publication can remove them. Returns the file entries of the whole set."""
    files = []
    runs = GroupRuns(layout.rewritten, settings.row_group_rows)
    for split in SPLITS:  # `datasets` refuses an empty shard: an empty split has no file
        kept = [entry for entry in layout.kept if entry["split"] == split]
        groups = layout.new.get(split, [])
        count = len(kept) + len(groups)
        for index, entry in enumerate(kept):
            name = shard_name(split, generation, index, count)
            assert name not in in_use, f"generation {generation} would overwrite {name}"
            atomic_link(folder / entry["name"], folder / name)
            written.append(folder / name)
            files.append({**entry, "name": name})
        for index, items in enumerate(groups, len(kept)):
            name = shard_name(split, generation, index, count)
            assert name not in in_use, f"generation {generation} would overwrite {name}"
            path = folder / name
            members = json.dumps([[item.id, item.key] for item in items]).encode()
            write_shard(path, schema, runs.segments(items, rows), settings,
                        {MEMBERS_KEY: members, FORMAT_KEY: fmt.encode()}, encoder)
            written.append(path)
            files.append(_entry(path, split, len(items)))
    if runs.copied:
        log.info("%s: %d row(s) copied in their row groups", folder, runs.copied)
    return files


def runs_of(items: Sequence[Item], rows: int) -> list[Sequence[Item]]:
    """A shard's items cut into runs of row groups by their ids alone, so that a run comes
    back whole wherever its items come back in a rewritten shard: once a run holds half
    `rows` items, it ends after an item whose id's hash picks one item in `rows` - half + 1,
    or at four times `rows` items, so runs hold `rows` items on average. (A CRC would not
    do: it is linear, and on ids that count up its low bits repeat patterns that leave long
    stretches without a cut.)"""
    half = max(1, rows // 2)
    odds = max(1, rows - half + 1)
    out: list[Sequence[Item]] = []
    start = 0
    for at in range(len(items)):
        size = at + 1 - start
        if size >= 4 * rows or (size >= half and _id_hash(items[at].id) % odds == 0):
            out.append(items[start : at + 1])
            start = at + 1
    if start < len(items):
        out.append(items[start:])
    return out


class GroupRuns:
    """The runs of row groups of the shards a publication rewrites, by their items: a new
    shard copies a run that holds the same items with the same keys instead of decoding and
    encoding its rows again."""

    def __init__(self, shards: list[tuple[Path, list[Item]]], rows: int) -> None:
        self.rows = rows
        self.copied = 0
        self._runs: dict[bytes, GroupCopy] = {}
        for path, items in shards:
            try:
                meta = pq.read_metadata(path)
            except (OSError, pa.ArrowException):
                continue
            sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
            bounds = dict(zip(np.cumsum([0, *sizes]).tolist(), range(len(sizes) + 1),
                              strict=True))
            start = 0
            for run in runs_of(items, rows):
                end = start + len(run)
                if start in bounds and end in bounds:  # not so in an older layout's shard
                    self._runs.setdefault(_run_key(run), GroupCopy(
                        path, bounds[start], bounds[end] - bounds[start]))
                start = end

    def segments(self, items: Sequence[Item], rows: RowReader) -> Iterator[Segment]:
        """The segments of a new shard of `items`: copied runs, and rows to encode."""
        for run in runs_of(items, self.rows):
            found = self._runs.get(_run_key(run))
            if found is None:
                yield rows.tables(run)
            else:
                self.copied += len(run)
                yield found


def _id_hash(cid: str) -> int:
    return int.from_bytes(hashlib.blake2b(cid.encode(), digest_size=8).digest(), "little")


def _run_key(items: Sequence[Item]) -> bytes:
    return hashlib.sha256(json.dumps([[item.id, item.key] for item in items]).encode()).digest()


class PublishedRows:
    """The rows of the shard set in place, by content key: where a document's work file was
    deleted once published (`[store] keep_work = false`), its row is read back from its shard
    when that shard is rewritten. The index is two arrays, each key's sha256 sorted beside
    its (shard, row) position: about 40 bytes a document instead of a dict of strings. Rows
    are read through a `RowStream`: a few rows in memory at a time, not a row group."""

    def __init__(self, folder: Path) -> None:
        self.shards: list[Path] = []
        digests: list[Digests] = []
        places: list[npt.NDArray[np.int64]] = []
        for entry in published_build(folder).get("files", []):
            found = shard_items(folder / entry["name"])
            if not found:
                continue
            shard = len(self.shards) << 32
            self.shards.append(folder / entry["name"])
            digests.append(np.array([_digest(item.key) for item in found[1]], dtype="S32"))
            places.append(np.arange(shard, shard + len(found[1]), dtype=np.int64))
        keys = np.concatenate(digests) if digests else np.empty(0, dtype="S32")
        order = np.argsort(keys, kind="stable")
        self._keys = keys[order]
        self._places = (np.concatenate(places) if places else np.empty(0, np.int64))[order]
        self._stream: RowStream | None = None

    def _place(self, key: str) -> int | None:
        at = find(self._keys, _digest(key))
        return None if at is None else int(self._places[at])

    def __contains__(self, key: str) -> bool:
        return self._place(key) is not None

    def read(self, key: str) -> pa.Table:
        """The one-row table of `key`. Rows wanted in their shard's order (a rewritten
        shard's) are decoded once, in one pass over the shard."""
        place = self._place(key)
        assert place is not None, f"{key} is in no published shard"
        path, index = self.shards[place >> 32], place & 0xFFFFFFFF
        if self._stream is None or not self._stream.reaches(path, index):
            self._stream = RowStream(path, index)
        return self._stream.row(index)


class RowStream:
    """The rows of a shard from a given row on, decoded `BATCH_ROWS` at a time.

    A whole row group of 200 ten-page rows (34 MB of values) decodes into about 85 MB of
    Arrow buffers, which a build's parent would hold beside the new shard's row group it is
    encoding; read a batch at a time, with column chunks read a MiB at a time, the reader
    holds about 20 MB. A row is a slice of its batch, not a copy: a rewritten shard's rows
    are read in order, so a batch is held only while its rows wait in the new shard's row
    group, and a copy would hold them twice (in a 2,000-document increment, copies took the
    parent's peak from 230 to 294 MiB). Row groups between the rows asked for (runs the new
    shard copies as they are) are skipped, not decoded."""

    BATCH_ROWS = 16

    def __init__(self, path: Path, index: int) -> None:
        self.path = path
        self._shard = pq.ParquetFile(path, buffer_size=1 << 20)
        meta = self._shard.metadata
        self._starts = np.cumsum([0] + [meta.row_group(g).num_rows
                                        for g in range(meta.num_row_groups)]).tolist()
        self._seek(index)

    def _group(self, index: int) -> int:
        return bisect.bisect_right(self._starts, index) - 1

    def _seek(self, index: int) -> None:
        """Read on from the start of the row group that holds row `index`."""
        group = self._group(index)
        self._batches = self._shard.iter_batches(
            self.BATCH_ROWS, range(group, len(self._starts) - 1), use_threads=False)
        self._batch: pa.Table | None = None
        self._start = self._end = self._starts[group]  # the rows of `_batch`

    def reaches(self, path: Path, index: int) -> bool:
        """Whether row `index` of `path` is in the current batch or after it."""
        return path == self.path and index >= self._start

    def row(self, index: int) -> pa.Table:
        if index >= self._end and self._group(index) > self._group(self._end):
            self._seek(index)
        while self._batch is None or index >= self._end:
            batch = next(self._batches)
            self._batch = pa.Table.from_batches([batch]).replace_schema_metadata(None)
            self._start, self._end = self._end, self._end + batch.num_rows
        return self._batch.slice(index - self._start, 1)


def _digest(key: str) -> bytes:
    """A content key as 32 bytes (its sha256: keys are any text)."""
    return hashlib.sha256(key.encode()).digest()


def _entry(path: Path, split: str, rows: int) -> dict[str, Any]:
    return asdict(ShardFile(path.name, split, rows, path.stat().st_size, sha256_file(path)))


def remove_stale(folder: Path, files: list[dict[str, Any]]) -> None:
    """Delete shards no longer listed and temporary files of interrupted writes."""
    names = {f["name"] for f in files}
    for stale in [*folder.glob("*-of-*.parquet"), *folder.glob(".*.tmp")]:
        if stale.name not in names:
            stale.unlink()
