"""Reading order of a page: recursive XY-cut over lines, footnotes last.

Lines are first expressed in the frame where the page's dominant text direction reads left
to right, so a landscape table on a /Rotate 90 page is ordered like an upright one. Lines
in another direction (margin stamps, rotated axis labels) follow the page's main text.

When the compiled core is built, `order_page` runs there (`_native.c`, same decisions, same
constants passed from here); the Python below is the reference it matches and the path of
installs without it.
"""

from __future__ import annotations

from collections.abc import Sequence

from loralay_build.native import native_module
from loralay_build.parse.backend import Line
from loralay_build.parse.geometry import rotate_box
from loralay_build.records import Box

# A vertical whitespace band at least this many body font sizes wide separates columns.
COLUMN_GAP = 0.8
# Two sides of such a band are columns when they share at least this share of the shorter
# one's height.
COLUMN_SHARE = 0.5
# A horizontal whitespace band at least this many body font sizes high separates blocks
# (measured on line boxes normalised to 1.1 font sizes around their centre).
BLOCK_GAP = 0.5
# Lines set smaller than this share of the body size, low on the page, with no body text
# below them, are footnotes.
FOOTNOTE_SIZE = 0.85
FOOTNOTE_TOP = 0.6
# Line boxes are normalised to at least this many font sizes around their centre.
MIN_STRETCH = 1.1
LIMITS = (COLUMN_GAP, COLUMN_SHARE, BLOCK_GAP, FOOTNOTE_SIZE, FOOTNOTE_TOP, MIN_STRETCH)


def order_page(
    lines: list[Line], width: float, height: float, infos: bytes | None = None
) -> list[list[Line]]:
    """The page's lines grouped into blocks, blocks and lines in reading order.

    `infos` are the compiled core's facts about these lines (`PageText.line_infos`).
    """
    native = native_module()
    if native is not None:
        blocks: list[list[Line]] | None = native.order_page(lines, width, height, LIMITS, infos)
        if blocks is not None:  # None: a line the core leaves to Python (a non-finite box)
            return blocks
    return order_page_python(lines, width, height)


def order_page_python(lines: Sequence[Line], width: float, height: float) -> list[list[Line]]:
    """`order_page` in Python."""
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
    boxes = line.boxes
    if len(boxes) == 1:
        box = boxes[0]
    else:
        x0, y0, x1, y1 = zip(*boxes, strict=True)
        box = (min(x0), min(y0), max(x1), max(y1))
    return box if direction == 0 else rotate_box(box, direction, width, height)


def _order_main(lines: list[Line], direction: int, width: float, height: float) -> list[list[Line]]:
    """XY-cut the lines of the dominant direction, then move footnote blocks last."""
    if not lines:
        return []
    frame_height = width if direction % 2 else height
    sizes = [max(line.sizes) for line in lines]
    body = _body_size(lines, sizes)
    boxes = [_frame_box(line, direction, width, height) for line in lines]
    stretch = max(MIN_STRETCH, _pitch(boxes) / body)
    rects: list[Box] = []
    for (x0, y0, x1, y1), size in zip(boxes, sizes, strict=True):
        centre, half = (y0 + y1) / 2, 0.5 * stretch * size
        rects.append((x0, centre - half, x1, centre + half))
    units = _units(lines)
    single = len(units) == len(lines)  # no engine blocks: unit k is line k
    if single:
        unit_rects, unit_sizes = rects, sizes
    else:
        unit_rects = [rects[u[0]] if len(u) == 1 else _union([rects[i] for i in u]) for u in units]
        unit_sizes = [sizes[u[0]] if len(u) == 1 else max(sizes[i] for i in u) for u in units]
    cut = _Cutter(unit_rects, COLUMN_GAP * body, BLOCK_GAP * body)
    blocks: list[list[int]] = []
    for leaf in cut.leaves(list(range(len(units)))):
        ordered = _rows(leaf, unit_rects, unit_sizes)
        blocks.append(ordered if single else [i for u in ordered for i in units[u]])
    notes = _footnotes(blocks, rects, sizes, body, frame_height)
    kept = [b for k, b in enumerate(blocks) if k not in notes]
    moved = [b for k, b in enumerate(blocks) if k in notes]
    return [[lines[i] for i in block] for block in kept + moved]


def _pitch(boxes: Sequence[Box]) -> float:
    """Typical distance between the centres of a line and the next one below it."""
    order = sorted(range(len(boxes)), key=lambda i: boxes[i][1] + boxes[i][3])
    steps = []
    for k, i in enumerate(order):
        x0, y0, x1, y1 = boxes[i]
        for j in order[k + 1 : k + 6]:
            u0, v0, u1, v1 = boxes[j]
            if u0 < x1 and x0 < u1 and v0 + v1 > y0 + y1:
                steps.append((v0 + v1 - y0 - y1) / 2)
                break
    return sorted(steps)[len(steps) // 2] if steps else 0.0


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
    x0, y0, x1, y1 = zip(*rects, strict=True)
    return (min(x0), min(y0), max(x1), max(y1))


Spans = list[tuple[float, float]]


class _Cutter:
    """Recursive XY-cut: columns first; bands of one column layout are merged back together.

    Cutting at every horizontal gap would slice a two-column region at gaps that happen to
    line up in both columns and read it band by band; consecutive bands are merged while
    their union still has a column gutter and the next band continues one of the columns
    so far, so each column stays whole. A band that only sits beside the ones above (a
    left-aligned "Abstract" heading under a centred title) is not a column of theirs. Text
    above without columns is one of the columns below only when it lines up with one (a
    centred author line over the first row of two columns is not the right column's start).
    """

    def __init__(self, rects: Sequence[Box], gap_x: float, gap_y: float) -> None:
        self.rects = rects
        self.gap_x = gap_x
        self.gap_y = gap_y
        self.x0 = [r[0] for r in rects]
        self.y0 = [r[1] for r in rects]

    def leaves(self, items: list[int]) -> list[list[int]]:
        if len(items) <= 1:
            return [items]
        halves = self._split_x(items)
        if halves is not None:
            return self.leaves(halves[0]) + self.leaves(halves[1])
        bands = self._bands_y(items)
        if len(bands) == 1:
            return [items]
        merged = [bands[0]]
        covered = self._cover(bands[0])
        for band in bands[1:]:
            cover = self._cover(band)
            joined = _merge_spans(covered + cover, self.gap_x)
            if (len(joined) > 1 and _overlap(covered, cover)
                    and (len(covered) > 1 or _aligned(covered[0], cover, self.gap_x))):
                merged[-1] = merged[-1] + band
                covered = joined
            else:
                merged.append(band)
                covered = self._cover(band)
        if len(merged) == 1:
            return [items]
        return [leaf for band in merged for leaf in self.leaves(band)]

    def _cover(self, items: list[int]) -> Spans:
        """x-extent of the items as disjoint spans at least `gap_x` apart."""
        return _merge_spans([(self.rects[i][0], self.rects[i][2]) for i in items], self.gap_x)

    def _split_x(self, items: list[int]) -> tuple[list[int], list[int]] | None:
        """Split at the widest vertical whitespace band, or None when there is none."""
        ordered = sorted(items, key=self.x0.__getitem__)
        rects = self.rects
        best, best_at = self.gap_x, 0
        end = rects[ordered[0]][2]
        for k in range(1, len(ordered)):
            x0, x1 = rects[ordered[k]][0], rects[ordered[k]][2]
            if x0 - end >= best:
                best, best_at = x0 - end, k
            if x1 > end:
                end = x1
        if best_at == 0:
            return None
        left, right = ordered[:best_at], ordered[best_at:]
        return (left, right) if self._side_by_side(left, right) else None

    def _side_by_side(self, left: list[int], right: list[int]) -> bool:
        """Columns share most of their height; a narrow heading below a centred title and
        touching it (line boxes are stretched) only looks like a column beside it."""
        top_l, bottom_l = self._extent(left)
        top_r, bottom_r = self._extent(right)
        shared = min(bottom_l, bottom_r) - max(top_l, top_r)
        return shared >= COLUMN_SHARE * min(bottom_l - top_l, bottom_r - top_r)

    def _extent(self, items: list[int]) -> tuple[float, float]:
        return min(self.rects[i][1] for i in items), max(self.rects[i][3] for i in items)

    def _bands_y(self, items: list[int]) -> list[list[int]]:
        """Split at every horizontal whitespace band."""
        ordered = sorted(items, key=self.y0.__getitem__)
        rects = self.rects
        bands = [[ordered[0]]]
        end = rects[ordered[0]][3]
        for i in ordered[1:]:
            if rects[i][1] - end >= self.gap_y:
                bands.append([i])
            else:
                bands[-1].append(i)
            if rects[i][3] > end:
                end = rects[i][3]
        return bands


def _overlap(a: Spans, b: Spans) -> bool:
    """Some span of `a` shares x-extent with some span of `b`."""
    return any(a0 < b1 and b0 < a1 for a0, a1 in a for b0, b1 in b)


def _aligned(span: tuple[float, float], columns: Spans, gap: float) -> bool:
    """Whether `span` starts where a column it overlaps starts, or lies inside that column."""
    a0, a1 = span
    return any(abs(a0 - c0) < gap or (a0 > c0 - gap and a1 < c1 + gap)
               for c0, c1 in columns if a0 < c1 and c0 < a1)


def _merge_spans(spans: Spans, gap: float) -> Spans:
    """Union of intervals, joining those closer than `gap`."""
    spans = sorted(spans)
    merged = [spans[0]]
    for a, b in spans[1:]:
        last_a, last_b = merged[-1]
        if a - last_b < gap:
            if b > last_b:
                merged[-1] = (last_a, b)
        else:
            merged.append((a, b))
    return merged


def _rows(items: list[int], rects: Sequence[Box], sizes: Sequence[float]) -> list[int]:
    """Units of a block top to bottom; those sharing a row left to right."""
    if len(items) == 1:
        return items
    ordered = sorted(items, key=lambda i: (rects[i][1] + rects[i][3], rects[i][0]))
    rows: list[list[int]] = []
    row_centre = 0.0
    for i in ordered:
        centre = (rects[i][1] + rects[i][3]) / 2
        if rows and centre - row_centre < 0.5 * sizes[i]:
            rows[-1].append(i)
        else:
            rows.append([i])
            row_centre = centre
    ordered = []
    for row in rows:
        if len(row) > 1:
            row.sort(key=lambda j: rects[j][0])
        ordered.extend(row)
    return ordered


def _footnotes(
    blocks: list[list[int]],
    rects: Sequence[Box],
    sizes: Sequence[float],
    body: float,
    height: float,
) -> set[int]:
    """Indices of blocks that are footnotes: small type, low, nothing of body size below."""
    limit = FOOTNOTE_SIZE * body
    small = [sorted(sizes[i] for i in block)[len(block) // 2] < limit for block in blocks]
    if not any(small):
        return set()
    spans = [_union([rects[i] for i in block]) for block in blocks]
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
