"""The compiled core's per-word kernels of the build give what their Python code gives.

A signature is stored in the state and compared with those of later runs, and word boxes
become published columns, so the two paths must agree to the bit: on generated values
(hyphenation marks before upper, lower and title case, words normalised to nothing,
non-ASCII, non-BMP, repeats, the fewest tokens a signature takes; NaN, infinities, signed
zeros, integers) and on the real PDFs.
"""

from __future__ import annotations

import json
import math
import os
import zlib
from pathlib import Path
from unittest import mock

import edlib
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from loralay_build.columns import Strings
from loralay_build.errors import Reject
from loralay_build.native import NATIVE_ENV, native_module
from loralay_build.parse import clean_document, parse_pdf
from loralay_build.records import Box, Document, Page, box_array, box_array_python
from loralay_build.run import process
from loralay_build.source_table import DocumentOptions
from loralay_build.text import match, minhash, normalize, prepare_abstract, strip_abstracts
from loralay_build.text.leakage import Leakage
from loralay_build.text.match import query_tokens
from loralay_build.text.settings import MatchSettings

NATIVE = native_module()
pytestmark = pytest.mark.skipif(NATIVE is None, reason="the compiled core is not built")

REALDOCS = Path(__file__).resolve().parents[3] / "shared" / "realdocs" / "pdf"
REALDOCS = REALDOCS if REALDOCS.is_dir() else Path("/work/shared/realdocs/pdf")
MANIFEST = REALDOCS.parent / "manifest.jsonl"

TEXTS = st.lists(
    st.sampled_from(["the", "model", "é", "straße", "数据", "\U0001d400x", "a_b", "0", "٣",
                     " ", "-", "'s", "\ud800", "x\u0301", "Ⅻ", "½"])
    | st.text(min_size=1, max_size=6),
    max_size=60,
).map("".join)


def _native_signature(text: str) -> list[int] | None:
    assert NATIVE is not None
    values = NATIVE.minhash(text, minhash._A_BYTES, minhash._B_BYTES, minhash.SHINGLE,
                            int(minhash._MULT))
    return None if values is None else np.frombuffer(values, dtype=np.uint32).tolist()


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_minhash_kernel_equals_regex_and_numpy(text: str) -> None:
    """Any text (surrogates, digits of other scripts, combining marks included): the same
    words as the regular expression, the same signature as numpy, None below five words."""
    tokens = minhash._WORD.findall(text)
    expected = minhash.signature_python(tokens) if len(tokens) >= minhash.SHINGLE else None
    native = _native_signature(text)
    if expected is None:
        assert native is None
    else:
        assert expected.dtype == np.uint32
        assert native == expected.tolist()


@settings(max_examples=100, deadline=None)
@given(TEXTS, st.integers(1, 19), st.integers(0, 2**32))
def test_minhash_kernel_takes_any_number_of_permutations(
        text: str, perms: int, seed: int) -> None:
    """Counts of permutations that are not a multiple of the kernel's block of eight."""
    assert NATIVE is not None
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 2**64 - 1, size=(2, perms), dtype=np.uint64)
    a |= np.uint64(1)
    values = NATIVE.minhash(text, a.tobytes(), b.tobytes(), minhash.SHINGLE, int(minhash._MULT))
    tokens = minhash._WORD.findall(text)
    if len(tokens) < minhash.SHINGLE:
        assert values is None
        return
    hashes = np.array([zlib.crc32(t.encode("utf-8", "surrogatepass")) for t in tokens],
                      dtype=np.uint64)
    count = len(tokens) - minhash.SHINGLE + 1
    shingles = np.zeros(count, dtype=np.uint64)
    for offset in range(minhash.SHINGLE):
        shingles = shingles * minhash._MULT + hashes[offset : offset + count]
    expected = ((a[:, None] * shingles[None, :] + b[:, None]) >> np.uint64(32)).min(axis=1)
    assert values is not None
    assert np.frombuffer(values, dtype=np.uint32).tolist() == expected.tolist()


def test_minhash_kernel_splits_words_at_each_ascii_character_as_the_regex() -> None:
    """The kernel answers ASCII characters itself: each of them, between two letters."""
    for code in range(128):
        text = f"w{chr(code)}x one two three four"
        expected = minhash.signature_python(minhash._WORD.findall(text))
        assert _native_signature(text) == expected.tolist(), code


def test_minhash_kernel_counts_words_not_characters() -> None:
    assert _native_signature("a b c d") is None
    assert _native_signature("a,b;c d_e") is None  # `_` joins a word
    assert _native_signature("a b c d e") is not None
    assert _native_signature("\ud800 a b c d e") == _native_signature("a b c d e")


@pytest.mark.skipif(not REALDOCS.is_dir(), reason="realdocs absent")
def test_signatures_of_real_documents_equal_on_both_paths(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for path in sorted(REALDOCS.glob("*.pdf"))[:12]:
        words = parse_pdf(path).words
        native = minhash.signature(words)
        with monkeypatch.context() as patch:
            patch.setenv("LORALAY_NATIVE", "0")
            python = minhash.signature(words)
        assert native is not None and python is not None, path.name
        assert native.tolist() == python.tolist(), path.name
        assert minhash.to_text(native) == minhash.to_text(python)


COORD = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(2**53), 2**53)
BOXES = st.lists(st.tuples(COORD, COORD, COORD, COORD), max_size=40)


@settings(max_examples=300, deadline=None)
@given(BOXES)
def test_box_array_kernel_equals_numpy(boxes: list[tuple[float, float, float, float]]) -> None:
    native, python = box_array(boxes), box_array_python(boxes)
    assert native.shape == python.shape == (len(boxes), 4)
    assert native.dtype == python.dtype
    assert native.tobytes() == python.tobytes()  # NaN and -0.0 compared by their bits
    assert native.flags.writeable


def test_box_array_kernel_leaves_odd_items_to_numpy() -> None:
    assert NATIVE is not None
    assert NATIVE.box_array([(1.0, 2.0, 3.0, 4.0), (1.0, 2.0, 3.0)]) is None
    with pytest.raises(ValueError):  # numpy's own refusal of a short box stays
        box_array([(1.0, 2.0, 3.0, 4.0), (1.0, 2.0, 3.0)])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        NATIVE.box_array([(1.0, 2.0, 3.0, None)])
    with pytest.raises(OverflowError):
        NATIVE.box_array([(1.0, 2.0, 3.0, 10**400)])
    with pytest.raises(OverflowError):
        box_array_python([(1.0, 2.0, 3.0, 10**400)])


@pytest.mark.skipif(not REALDOCS.is_dir(), reason="realdocs absent")
def test_box_arrays_of_real_documents_equal_on_both_paths() -> None:
    for path in sorted(REALDOCS.glob("*.pdf"))[:12]:
        boxes = parse_pdf(path).boxes
        assert box_array(boxes).tobytes() == box_array_python(boxes).tobytes(), path.name



def _box_columns_both(doc: Document) -> tuple[list[bytes] | str, list[bytes] | str]:
    """The row's box columns of a document by the core and by numpy alone: their bytes and
    dtypes, or the name of the exception raised."""
    def run() -> list[bytes] | str:
        try:
            return [a.dtype.str.encode() + a.tobytes() for a in process._box_columns(doc)]
        except (IndexError, ValueError, OverflowError) as exc:
            return type(exc).__name__
    native = run()
    with mock.patch.dict(os.environ, {NATIVE_ENV: "0"}):
        python = run()
    return native, python


SIZE = st.sampled_from([0.0, -0.0, 1.0, 595.0, 612.5, 1e-310, -3.0, math.inf]) | st.floats(
    allow_nan=False, min_value=-1e6, max_value=1e6)
BOX_COORD = st.sampled_from([0.5, 1.5, 2.5, -0.5, -0.0, 1e12, -1e12, math.inf, -math.inf,
                             2147483647.4, 2147483647.5, -2147483648.5, 4e-324]) | st.floats(
    allow_nan=False, min_value=-1e4, max_value=1e4)


@settings(max_examples=400, deadline=None)
@given(st.lists(SIZE, min_size=1, max_size=4).flatmap(lambda widths: st.tuples(
    st.just(widths), st.lists(SIZE, min_size=len(widths), max_size=len(widths)),
    st.lists(st.tuples(st.tuples(BOX_COORD, BOX_COORD, BOX_COORD, BOX_COORD),
                       st.integers(-2, len(widths) + 1) | st.sampled_from([40000, 2**70])),
             max_size=30))))
def test_box_columns_kernel_equals_numpy(
        case: tuple[list[float], list[float], list[tuple[Box, int]]]) -> None:
    """Any boxes and page sizes (zero, negative, subnormal and infinite sizes, halves, values
    past int32, page indices outside the pages or past int16): the same three columns, or
    the same refusal."""
    widths, heights, words = case
    pages = [Page(i, w, h) for i, (w, h) in enumerate(zip(widths, heights, strict=True))]
    doc = Document(pages=pages, words=["w"] * len(words), boxes=[b for b, _ in words],
                   word_pages=[p for _, p in words])
    with np.errstate(all="ignore"):
        native, python = _box_columns_both(doc)
    assert native == python


def test_box_columns_kernel_leaves_undefined_casts_to_numpy() -> None:
    """A NaN after scaling or a coordinate past int32 is not reproduced in C: numpy decides."""
    assert NATIVE is not None
    width = np.array([0.0, 1.0])
    for boxes, page in (([0.0, 1.0, 1.0, 1.0], 0), ([3e9, 1.0, 1.0, 1.0], 1),
                        ([1.0, 1.0, 1.0, 1.0], 2), ([1.0, 1.0, 1.0, 1.0], -1),
                        ([1.0, 1.0, 1.0, 1.0], 2**70)):
        assert NATIVE.box_columns(np.array(boxes), [page], width, width) is None
    made = NATIVE.box_columns(np.array([2.5, -0.5, 3.5, 600.0]), [1], width, np.array([1.0, 300.0]))
    assert made is not None
    assert np.frombuffer(made[0], dtype=np.int32).tolist() == [2, 0, 4, 600]
    assert np.frombuffer(made[1], dtype=np.int16).tolist() == [1000, 0, 1000, 1000]


@pytest.mark.skipif(not REALDOCS.is_dir(), reason="realdocs absent")
def test_box_columns_of_real_documents_equal_on_both_paths() -> None:
    for path in sorted(REALDOCS.glob("*.pdf"))[:12]:
        native, python = _box_columns_both(parse_pdf(path))
        assert isinstance(native, list) and native == python, path.name

WORDS = st.lists(
    st.sampled_from(["associ-", "ated", "Franco-", "Italian", "x\x02", "\x02", "-", "a\u2010",
                     "b\u2011", "c\u00ad", "\u00ad", "ǅx", "ßa", "ÉTÉ", "été", "ﬁn", "", "a\nb",
                     "\u200b", "12", "(cid:3)", "Ⅻ", "\ud800-", "ab-"])
    | st.text(max_size=4),
    max_size=40,
)


@settings(max_examples=400, deadline=None)
@given(WORDS)
def test_tokens_kernel_equals_python(words: list[str]) -> None:
    assert normalize.normalise_words(words) == normalize.normalise_words_python(words)


# ASCII words, whose keys the kernel makes itself: every character, case, hyphens and
# PDFium's mark, the backquote, control characters and spaces, "(cid:N)" whole, cut, in
# capitals, nested and next to characters that are dropped.
ASCII_WORDS = st.lists(
    st.sampled_from(["(cid:3)", "(CID:12)", "(cid:)", "(cid:3", "(cid:(cid:7)", "(ci-d:4)",
                     "(cid:1\x022)", "(cid:1 2)", "(cid:\n5)", "x(cid:9)y", "ab-", "Ab\x02",
                     "`A`", "A B", "\x7f", "\t", "-", "", "theory", "Long-(cid:5)" * 30])
    | st.text(st.characters(max_codepoint=127), max_size=8),
    max_size=30,
)


@settings(max_examples=400, deadline=None)
@given(ASCII_WORDS)
def test_tokens_kernel_makes_the_keys_of_ascii_words_as_python(words: list[str]) -> None:
    assert NATIVE is not None
    expected = normalize.normalise_words_python(words)
    assert NATIVE.tokens(words, {}) == (expected.texts, expected.first_word, expected.end_word)


def test_tokens_kernel_learns_new_words_and_survives_a_cache_reset(
        monkeypatch: pytest.MonkeyPatch) -> None:
    words = ["Inter-", "national", "associ-", "ated", "-", "Straße", "x\x02", "Y", "Straße"]
    expected = normalize.normalise_words_python(words)
    monkeypatch.setattr(normalize, "_KEYS", normalize._Keys())
    monkeypatch.setattr(normalize, "_CACHE_LIMIT", 0)  # every new word restarts the cache
    # Only the words outside ASCII are asked of the caller, once each.
    assert NATIVE is not None and NATIVE.tokens(words, normalize._KEYS.known) == ["Straße"]
    assert normalize.normalise_words(words) == expected
    assert normalize.normalise_words(["other", "words", *words]).texts[2:] == expected.texts
    assert expected.texts[:3] == ["international", "associated", "strasse"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.characters(exclude_categories=["Cs"])), max_size=30))
def test_pack_kernel_equals_python(values: list[str]) -> None:
    packed = Strings.pack(values)
    assert packed == Strings.pack_python(values)
    assert packed.unpack() == values


def test_pack_kernel_refuses_what_python_refuses() -> None:
    for bad, error in ((["a", "\ud800"], UnicodeEncodeError), (["a", 3], TypeError)):
        with pytest.raises(error):
            Strings.pack(bad)  # type: ignore[arg-type]
        with pytest.raises(error):
            Strings.pack_python(bad)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "\u00e9", "a\ud800", "ab", ""]), max_size=60),
       st.lists(st.sampled_from(["a", "b", "c", "\u00e9", "a\ud800", "d"]), max_size=12),
       st.integers(1, 6))
def test_leakage_kernel_equals_python(body: list[str], abstract: list[str], n: int) -> None:
    """Repeated n-grams on both sides, tokens equal as strings but not as objects, a body
    shorter than n."""
    copied = ["".join(list(token)) for token in body]
    audit = Leakage(copied, n, [abstract])
    assert audit.share(abstract) == audit.share_python(abstract)


@pytest.mark.skipif(not MANIFEST.is_file(), reason="realdocs absent")
def test_abstracts_of_real_documents_are_stripped_alike_on_both_paths(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kernel of the abstract search together: the same kept words and match records,
    and the same leakage of each abstract in the whole body."""
    options = DocumentOptions()
    for line in MANIFEST.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        lang = entry.get("language") or "en"
        abstracts = {k: prepare_abstract(v, options.abstract_format)
                     for k, v in (entry.get("abstracts") or {}).items()}
        abstracts = {k: v for k, v in abstracts.items() if v}
        if lang not in abstracts:
            continue
        doc = clean_document(parse_pdf(REALDOCS.parent / entry["file"], languages=[lang]),
                             options.cleaners, {})
        results: list[object] = []
        for native in ("1", "0"):
            with monkeypatch.context() as patch:
                patch.setenv(NATIVE_ENV, native)
                patch.setattr(normalize, "_KEYS", normalize._Keys())
                try:
                    results.append(strip_abstracts(doc.words, doc.word_pages, abstracts, lang,
                                                   MatchSettings()))
                except Reject as exc:
                    results.append((exc.reason, exc.detail))
        assert results[0] == results[1], entry["id"]
        body = normalize.normalise_words(list(doc.words)).texts
        audit = Leakage(body, 5)
        for text in abstracts.values():
            query = query_tokens(text)
            assert audit.share(query) == audit.share_python(query), entry["id"]


SYMBOL_TEXTS = st.lists(st.sampled_from("ab e\u00e9\u0100\u03a9\uc694\U0001d400")
                        | st.integers(0x100, 0x250).map(chr), max_size=200).map("".join)


@settings(max_examples=400, deadline=None)
@given(SYMBOL_TEXTS, SYMBOL_TEXTS)
@example("".join(map(chr, range(0x100, 0x180))), "".join(map(chr, range(0x140, 0x200))))
@example("\U0001d400" + "".join(map(chr, range(0x100, 0x1ff))), "\uc694")
def test_symbol_bytes_number_each_character_once(query: str, window: str) -> None:
    """One byte per character, equal bytes exactly for equal characters across both texts,
    None beyond 256 characters; edlib then aligns them as the Python numbering."""
    assert NATIVE is not None
    coded = NATIVE.symbol_bytes(query, window)
    symbols = set(query) | set(window)
    if len(symbols) > 256:
        assert coded is None
        return
    assert coded is not None
    pairs = set(zip(query + window, coded[0] + coded[1], strict=True))
    assert len(pairs) == len(symbols) == len({code for _, code in pairs})
    with mock.patch.dict(os.environ, {NATIVE_ENV: "0"}):
        python = match._as_bytes(query, window)
    if query:
        assert edlib.align(*coded, mode="HW", task="path") == edlib.align(
            *python, mode="HW", task="path")
