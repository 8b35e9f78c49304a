"""Reading order of a page: recursive XY-cut over lines, footnotes last.

Lines are first expressed in the frame where the page's dominant text direction reads left
to right, so a landscape table on a /Rotate 90 page is ordered like an upright one. Lines
in another direction (margin stamps, rotated axis labels) follow the page's main text.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from loralay_build.parse.backend import Line
from loralay_build.parse.geometry import rotate_box
from loralay_build.records import Box

# A vertical whitespace band at least this many body font sizes wide separates columns.
COLUMN_GAP = 0.8
# A horizontal whitespace band at least this many body font sizes high separates blocks
# (measured on line boxes normalised to 1.1 font sizes around their centre).
BLOCK_GAP = 0.5
# Lines set smaller than this share of the body size, low on the page, with no body text
# below them, are footnotes.
FOOTNOTE_SIZE = 0.85
FOOTNOTE_TOP = 0.6


def order_page(lines: Sequence[Line], width: float, height: float) -> list[list[Line]]:
    """The page's lines grouped into blocks, blocks and lines in reading order."""
    if not lines:
        return []
    weight = [0, 0, 0, 0]
    for line in lines:
        weight[line.direction % 4] += len(line.words)
    main_dir = max(range(4), key=lambda d: (weight[d], -d))
    main = [line for line in lines if line.direction % 4 == main_dir]
    other = [line for line in lines if line.direction % 4 != main_dir]
    blocks = _order_main(main, main_dir, width, height)
    blocks.extend([line] for line in _order_other(other, width, height))
    return blocks


def _frame_box(line: Line, direction: int, width: float, height: float) -> Box:
    """Union of a line's word boxes in the frame of `direction`."""
    boxes = [rotate_box(b, direction, width, height) for b in line.boxes]
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _order_main(lines: list[Line], direction: int, width: float, height: float) -> list[list[Line]]:
    """XY-cut the lines of the dominant direction, then move footnote blocks last."""
    if not lines:
        return []
    frame_height = width if direction % 2 else height
    sizes = [median(line.sizes) for line in lines]
    body = _body_size(lines, sizes)
    rects: list[Box] = []
    for line, size in zip(lines, sizes, strict=True):
        x0, y0, x1, y1 = _frame_box(line, direction, width, height)
        centre, half = (y0 + y1) / 2, 0.55 * size
        rects.append((x0, centre - half, x1, centre + half))
    units = _units(lines)
    unit_rects = [_union([rects[i] for i in unit]) for unit in units]
    leaves = _xy_cut(list(range(len(units))), unit_rects, COLUMN_GAP * body, BLOCK_GAP * body)
    unit_sizes = [max(sizes[i] for i in unit) for unit in units]
    blocks: list[list[int]] = []
    for leaf in leaves:
        ordered = _rows(leaf, unit_rects, unit_sizes)
        blocks.append([i for u in ordered for i in units[u]])
    notes = _footnotes(blocks, rects, sizes, body, frame_height)
    kept = [b for k, b in enumerate(blocks) if k not in notes]
    moved = [b for k, b in enumerate(blocks) if k in notes]
    return [[lines[i] for i in block] for block in kept + moved]


def _body_size(lines: Sequence[Line], sizes: Sequence[float]) -> float:
    """Font size carrying most words on the page (median weighted by word count)."""
    pairs = sorted(zip(sizes, (len(line.words) for line in lines), strict=True))
    half = sum(n for _, n in pairs) / 2
    seen = 0
    for size, n in pairs:
        seen += n
        if seen >= half:
            return max(size, 1.0)
    return max(pairs[-1][0], 1.0)


def _units(lines: Sequence[Line]) -> list[list[int]]:
    """Lines the engine put in one block stay together; other lines stand alone."""
    units: list[list[int]] = []
    by_group: dict[int, int] = {}
    for i, line in enumerate(lines):
        if line.group < 0:
            units.append([i])
        elif line.group in by_group:
            units[by_group[line.group]].append(i)
        else:
            by_group[line.group] = len(units)
            units.append([i])
    return units


def _union(rects: Sequence[Box]) -> Box:
    return (
        min(r[0] for r in rects),
        min(r[1] for r in rects),
        max(r[2] for r in rects),
        max(r[3] for r in rects),
    )


def _split_x(items: list[int], rects: Sequence[Box], gap: float) -> tuple[list[int], list[int]] | None:
    """Split at the widest vertical whitespace band, or None when there is none."""
    ordered = sorted(items, key=lambda i: (rects[i][0], rects[i][2], i))
    best, best_at = gap, 0
    end = rects[ordered[0]][2]
    for k in range(1, len(ordered)):
        x0, x1 = rects[ordered[k]][0], rects[ordered[k]][2]
        if x0 - end >= best:
            best, best_at = x0 - end, k
        end = max(end, x1)
    if best_at == 0:
        return None
    return ordered[:best_at], ordered[best_at:]


def _bands_y(items: list[int], rects: Sequence[Box], gap: float) -> list[list[int]]:
    """Split at every horizontal whitespace band."""
    ordered = sorted(items, key=lambda i: (rects[i][1], rects[i][0], i))
    bands = [[ordered[0]]]
    end = rects[ordered[0]][3]
    for i in ordered[1:]:
        if rects[i][1] - end >= gap:
            bands.append([i])
        else:
            bands[-1].append(i)
        end = max(end, rects[i][3])
    return bands


def _xy_cut(items: list[int], rects: Sequence[Box], gap_x: float, gap_y: float) -> list[list[int]]:
    """Recursive XY-cut: columns first; bands of one column layout are merged back together.

    Cutting at every horizontal gap would slice a two-column region at gaps that happen
    to line up in both columns and read it band by band; merging consecutive bands while
    their union still has a column gutter keeps each column whole.
    """
    if len(items) <= 1:
        return [items]
    halves = _split_x(items, rects, gap_x)
    if halves is not None:
        return _xy_cut(halves[0], rects, gap_x, gap_y) + _xy_cut(halves[1], rects, gap_x, gap_y)
    bands = _bands_y(items, rects, gap_y)
    if len(bands) == 1:
        return [items]
    merged = [bands[0]]
    for band in bands[1:]:
        if _split_x(merged[-1] + band, rects, gap_x) is not None:
            merged[-1] = merged[-1] + band
        else:
            merged.append(band)
    if len(merged) == 1:
        return [items]
    return [leaf for band in merged for leaf in _xy_cut(band, rects, gap_x, gap_y)]


def _rows(items: list[int], rects: Sequence[Box], sizes: Sequence[float]) -> list[int]:
    """Units of a block top to bottom; those sharing a row left to right."""
    ordered = sorted(items, key=lambda i: ((rects[i][1] + rects[i][3]) / 2, rects[i][0], i))
    rows: list[list[int]] = []
    row_centre = 0.0
    for i in ordered:
        centre = (rects[i][1] + rects[i][3]) / 2
        if rows and centre - row_centre < 0.5 * sizes[i]:
            rows[-1].append(i)
        else:
            rows.append([i])
            row_centre = centre
    return [i for row in rows for i in sorted(row, key=lambda j: (rects[j][0], j))]


def _footnotes(
    blocks: list[list[int]], rects: Sequence[Box], sizes: Sequence[float], body: float, height: float
) -> set[int]:
    """Indices of blocks that are footnotes: small type, low, nothing of body size below."""
    small = []
    spans = []
    for block in blocks:
        box = _union([rects[i] for i in block])
        spans.append(box)
        small.append(median(sizes[i] for i in block) < FOOTNOTE_SIZE * body)
    notes = set()
    for k, box in enumerate(spans):
        if not small[k] or box[1] < FOOTNOTE_TOP * height:
            continue
        below = any(
            not small[j] and other[1] >= box[3] and other[0] < box[2] and box[0] < other[2]
            for j, other in enumerate(spans)
        )
        if not below:
            notes.add(k)
    return notes


def _order_other(lines: list[Line], width: float, height: float) -> list[Line]:
    """Lines off the main direction, grouped by direction, each in its own reading frame."""
    keyed = []
    for n, line in enumerate(lines):
        x0, y0, _, _ = _frame_box(line, line.direction % 4, width, height)
        keyed.append(((line.direction % 4, round(y0), x0, n), line))
    keyed.sort(key=lambda pair: pair[0])
    return [line for _, line in keyed]
