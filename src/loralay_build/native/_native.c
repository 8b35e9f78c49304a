/* Compiled core of the PDFium backend: one call turns a PDFium text page into lines.
 *
 * The FPDFText_* entry points are taken at run time from the PDFium library pypdfium2 has
 * already loaded (`bind` receives their addresses), so nothing is linked and there is one
 * copy of PDFium in the process. `read_text` mirrors the pure-Python loop of
 * loralay_build/parse/pdfium.py step by step (same text recovery, same word cut, same
 * double arithmetic and comparison order, Python's min/max semantics), so both paths give
 * identical words, boxes, sizes and lines; tests compare them on real and hostile PDFs.
 * It also holds per-word kernels of the later build steps that a profile of a whole build
 * named (the tokens of a body's normalised words, the MinHash of a body, word boxes as an
 * array, words in Arrow's string layout), each equal to its Python code bit for bit.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { float left, top, right, bottom; } RectF;
typedef struct { float a, b, c, d, e, f; } MatrixF;
typedef struct { double x0, y0, x1, y1; } Rect;
/* What `order_page` reads of each Line: word count, union box, largest size, direction
 * (mod 4) and group. `read_text` returns them for the lines it makes, so the ordering does
 * not read every word's box back from its Python objects. */
typedef struct { Py_ssize_t words; Rect box; double size; int direction; long group; } LineInfo;

typedef int (*GetTextFn)(void *, int, int, unsigned short *);
typedef unsigned int (*GetUnicodeFn)(void *, int);
typedef int (*CharIndexFn)(void *, int);
typedef int (*LooseBoxFn)(void *, int, RectF *);
typedef float (*CharAngleFn)(void *, int);
typedef double (*FontSizeFn)(void *, int);
typedef int (*MatrixFn)(void *, int, MatrixF *);
typedef int (*FontWeightFn)(void *, int);
typedef unsigned long (*FontInfoFn)(void *, int, void *, unsigned long, int *);

static GetTextFn get_text;
static GetUnicodeFn get_unicode;
static CharIndexFn char_index;
static LooseBoxFn loose_box;
static CharAngleFn char_angle;
static FontSizeFn font_size;
static MatrixFn get_matrix;
static FontWeightFn font_weight;
static FontInfoFn font_info;

/* pdfium.font_is_bold: the character's font is bold by its name ("Times-Bold",
 * "TimesNewRoman,Bold", "CMBX10", "Arial-Black"); a name that names another face
 * ("Times-Roman", "Optima-Italic") is not; else by its weight (600 or more). PDFium reports
 * the standard fonts' weight as 0 and derives others' from the stem width, which some
 * producers set wide for regular faces. */
static int font_is_bold(void *tp, int ch) {
    char name[128];
    int flags = 0;
    unsigned long len = font_info(tp, ch, name, sizeof name, &flags);
    if (len > 0) {
        name[len < sizeof name ? len : sizeof name - 1] = 0;
        for (char *c = name; *c; c++)
            if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
        static const char *bold[] = {"bold", "black", "heavy", "cmbx", "semibd", "-bd", ",bd",
                                     "demi"};
        for (size_t i = 0; i < sizeof bold / sizeof *bold; i++)
            if (strstr(name, bold[i])) return 1;
        static const char *other[] = {"roman", "regu", "book", "light", "ital", "oblique",
                                      "medium", "normal", "cmr", "cmti", "cmsy", "cmmi"};
        for (size_t i = 0; i < sizeof other / sizeof *other; i++)
            if (strstr(name, other[i])) return 0;
    }
    return font_weight(tp, ch) >= 600;
}

#define HALF_PI (3.141592653589793 / 2)

/* Interned names of Line's fields, and "" (made when the module loads). */
static PyObject *s_words, *s_boxes, *s_sizes, *s_direction, *s_group, *s_empty;

/* Python's min(x, y) and max(x, y): the first argument unless the second compares below
 * (above) it, which fixes the result when one is NaN. */
static inline double pmin(double x, double y) { return y < x ? y : x; }
static inline double pmax(double x, double y) { return y > x ? y : x; }

/* `\s` of Python's re on str patterns. */
static inline int is_space(uint32_t c) {
    if (c <= 0x20) return c == 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
    if (c < 0x85) return 0;
    return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
           c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* PDFium's mark of a hyphen breaking a word at a line end. */
static inline int is_marker(uint32_t c) { return c == 0xfffe || c == 0x02; }

/* words.CONTROLS: replaced by U+FFFD before anything else. */
static inline int is_control(uint32_t c) {
    return c == 0x00 || c == 0x01 || (c >= 0x03 && c <= 0x08) || (c >= 0x0e && c <= 0x1f) ||
           c == 0x7f;
}

/* words.GARBAGE. */
static inline int is_garbage(uint32_t c) {
    return c == 0xfffd || c == 0x00 || c == 0x01 || (c >= 0x03 && c <= 0x08) ||
           (c >= 0x0e && c <= 0x1f) || (c >= 0xe000 && c <= 0xf8ff);
}

/* accents.COMBINING: the combining mark a spacing accent stands for, 0 for other characters
 * (accents.ACCENT). */
static inline Py_UCS4 combining_of(uint32_t c) {
    switch (c) {
    case 0xb4: case 0x2ca: return 0x301;
    case 0x60: case 0x2cb: return 0x300;
    case 0xa8: return 0x308;
    case 0x2c6: return 0x302;
    case 0x2dc: return 0x303;
    case 0xb8: return 0x327;
    case 0x2da: return 0x30a;
    case 0x2c7: return 0x30c;
    case 0x2d8: return 0x306;
    case 0x2d9: return 0x307;
    case 0x2dd: return 0x30b;
    case 0x2db: return 0x328;
    case 0xaf: case 0x2c9: return 0x304;
    default: return 0;
    }
}

static inline uint32_t one_char(void *tp, int index) {
    uint32_t code = get_unicode(tp, index);
    return (code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)) ? code : 0xfffd;
}

/* A growing array's storage with room for item `len`: `items` itself while it has room, else
 * reallocated to twice `*cap` items of `size` bytes (`first` for an empty one) and `*cap`
 * updated; NULL when out of memory (`items` unchanged). */
static void *with_room(void *items, Py_ssize_t len, Py_ssize_t *cap, size_t size,
                       Py_ssize_t first) {
    if (len < *cap) return items;
    Py_ssize_t grown = *cap ? 2 * *cap : first;
    void *more = realloc(items, (size_t)grown * size);
    if (more) *cap = grown;
    return more;
}

typedef struct { int *items; Py_ssize_t len, cap; } IntList;

static int push(IntList *list, int value) {
    int *items = with_room(list->items, list->len, &list->cap, sizeof(int), 64);
    if (!items) return -1;
    list->items = items;
    list->items[list->len++] = value;
    return 0;
}

/* Indices of the characters missing from the page text, as `_missing_chars`: 1 when the
 * engine's answers are inconsistent, -1 when out of memory, 0 with `missing` filled. */
static int missing_chars(void *tp, int units, int count, IntList *missing) {
    /* Offsets in 64 bits: the engine may answer anything, and Python's ints do not wrap. */
    long long first = char_index(tp, 0);
    long long last = (long long)char_index(tp, units - 1) - (units - 1);
    if (!(0 <= first && first <= last && last <= count - units)) return 1;
    for (int i = 0; i < first; i++)
        if (push(missing, i)) return -1;
    int stack[4 * 64];
    int top = 0;
    stack[top++] = 0; stack[top++] = units - 1; stack[top++] = (int)first; stack[top++] = (int)last;
    while (top) {
        top -= 4;
        int lo = stack[top], hi = stack[top + 1], lo_off = stack[top + 2], hi_off = stack[top + 3];
        if (lo_off == hi_off) continue;
        if (hi - lo == 1) {
            for (int i = lo + lo_off + 1; i < hi + hi_off; i++)
                if (push(missing, i)) return -1;
            continue;
        }
        int mid = lo + (hi - lo) / 2;
        long long mid_off = (long long)char_index(tp, mid) - mid;
        if (!(lo_off <= mid_off && mid_off <= hi_off)) return 1;
        if (top + 8 > (int)(sizeof stack / sizeof stack[0])) return 1;
        stack[top++] = mid; stack[top++] = hi; stack[top++] = (int)mid_off; stack[top++] = hi_off;
        stack[top++] = lo; stack[top++] = mid; stack[top++] = lo_off; stack[top++] = (int)mid_off;
    }
    for (long long i = units + last; i < count; i++)
        if (push(missing, (int)i)) return -1;
    return 0;
}

/* Python's s[a:b] bounds for a string of length n. */
static void slice_bounds(Py_ssize_t n, Py_ssize_t *a, Py_ssize_t *b) {
    if (*a < 0) *a = *a + n < 0 ? 0 : *a + n;
    if (*b < 0) *b = *b + n < 0 ? 0 : *b + n;
    if (*a > n) *a = n;
    if (*b > n) *b = n;
    if (*b < *a) *b = *a;
}

/* The page text as `_page_text` builds it, one code point per entry; NULL on no memory. */
static uint32_t *page_text(void *tp, int count, Py_ssize_t *length) {
    unsigned short *buffer = calloc(2 * (size_t)count + 2, sizeof(unsigned short));
    uint32_t *text = NULL;
    IntList missing = {0};
    if (!buffer) return NULL;
    int written = get_text(tp, 0, count, buffer);
    int units = written - 1 > 0 ? written - 1 : 0;
    if (units == count) {
        text = malloc(((size_t)count + 1) * sizeof(uint32_t));
        if (text) {
            for (int i = 0; i < units; i++)
                text[i] = (buffer[i] >= 0xd800 && buffer[i] <= 0xdfff) ? 0xfffd : buffer[i];
            *length = units;
        }
        free(buffer);
        return text;
    }
    int state = (units > 0 && units < count) ? missing_chars(tp, units, count, &missing) : 1;
    if (state < 0) goto done;
    if (state > 0) {
        text = malloc(((size_t)count + 1) * sizeof(uint32_t));
        if (!text) goto done;
        for (int i = 0; i < count; i++) text[i] = one_char(tp, i);
        *length = count;
        goto done;
    }
    text = malloc(((size_t)units + (size_t)missing.len + 1) * sizeof(uint32_t));
    if (!text) goto done;
    Py_ssize_t n = 0, done_at = 0;
    for (Py_ssize_t k = 0; k < missing.len; k++) {
        Py_ssize_t a = done_at, b = missing.items[k] - k;
        slice_bounds(units, &a, &b);
        for (Py_ssize_t i = a; i < b; i++)
            text[n++] = (buffer[i] >= 0xd800 && buffer[i] <= 0xdfff) ? 0xfffd : buffer[i];
        text[n++] = one_char(tp, missing.items[k]);
        done_at = missing.items[k] - k;
    }
    Py_ssize_t a = done_at, b = units;
    slice_bounds(units, &a, &b);
    for (Py_ssize_t i = a; i < b; i++)
        text[n++] = (buffer[i] >= 0xd800 && buffer[i] <= 0xdfff) ? 0xfffd : buffer[i];
    *length = n;
done:
    free(buffer);
    free(missing.items);
    return text;
}

/* geometry.to_display: a user-space rectangle (y up) in display space. */
static void to_display(const double *frame, int quarter, double x0, double y0, double x1,
                       double y1, double *out) {
    double left = frame[0], bottom = frame[1], right = frame[2], top = frame[3];
    double a, b, c, d;
    if (quarter == 0) {
        a = x0 - left; b = top - y1; c = x1 - left; d = top - y0;
    } else if (quarter == 1) {
        a = y0 - bottom; b = x0 - left; c = y1 - bottom; d = x1 - left;
    } else if (quarter == 2) {
        a = right - x1; b = y0 - bottom; c = right - x0; d = y1 - bottom;
    } else {
        a = top - y1; b = right - x1; c = top - y0; d = right - x0;
    }
    out[0] = pmin(a, c); out[1] = pmin(b, d); out[2] = pmax(a, c); out[3] = pmax(b, d);
}

/* Display box from the loose boxes of a word's first and last characters (`_display_boxes`
 * and geometry.to_display). */
static void display_box(const RectF *p, const RectF *q, const double *frame, int quarter,
                        double *out) {
    double a = p->left, b = p->top, c = p->right, d = p->bottom;
    double e = q->left, f = q->top, g = q->right, h = q->bottom;
    if (quarter == 0) {  /* `_display_boxes` inlines the upright case */
        out[0] = (a < e ? a : e) - frame[0];
        out[1] = frame[3] - (b > f ? b : f);
        out[2] = (c > g ? c : g) - frame[0];
        out[3] = frame[3] - (d < h ? d : h);
        return;
    }
    to_display(frame, quarter, pmin(a, e), pmin(d, h), pmax(c, g), pmax(b, f), out);
}

/* geometry.clean_box: 0 when a coordinate is not finite, else 1 with `box` clamped. */
static int clean_box(double *box, double width, double height) {
    double x0 = box[0], y0 = box[1], x1 = box[2], y1 = box[3];
    if (!(isfinite(x0) && isfinite(y0) && isfinite(x1) && isfinite(y1))) return 0;
    if (x0 > x1) { double t = x0; x0 = x1; x1 = t; }
    if (y0 > y1) { double t = y0; y0 = y1; y1 = t; }
    box[0] = pmin(pmax(x0, 0.0), width);
    box[1] = pmin(pmax(y0, 0.0), height);
    box[2] = pmin(pmax(x1, 0.0), width);
    box[3] = pmin(pmax(y1, 0.0), height);
    return 1;
}

/* words.line_spans: starts of the real lines within boxes[0:n], written to `cuts`
 * (0, the cut points, n); returns the number of entries. */
static Py_ssize_t line_spans(const double *boxes, Py_ssize_t n, double size, int direction,
                             Py_ssize_t *cuts) {
    static const int axes[4][4] = {{0, 2, 1, 3}, {1, 3, 0, 2}, {2, 0, 1, 3}, {3, 1, 0, 2}};
    Py_ssize_t k = 0;
    cuts[k++] = 0;
    if (n >= 2) {
        const int *ax = axes[direction % 4];
        double sign = direction % 4 >= 2 ? -1.0 : 1.0;
        size = pmax(size, 1.0);
        double far = 1.5 * size, back = -0.5 * size, cross = 2.0 * 0.6 * size;
        for (Py_ssize_t i = 1; i < n; i++) {
            const double *p = boxes + 4 * (i - 1), *c = boxes + 4 * i;
            double along = sign * (c[ax[0]] - p[ax[1]]);
            double across = fabs(c[ax[2]] + c[ax[3]] - p[ax[2]] - p[ax[3]]);
            if (!(back <= along && along <= far) || across > cross) cuts[k++] = i;
        }
    }
    cuts[k++] = n;
    return k;
}

/* api._junk's per-word test: the word's length when no character is a letter or digit
 * (`[^\W_]`, str.isalnum) and it holds two different characters, else 0. A final hyphen
 * mark counts as the "-" it becomes. */
static int letterless_length(const uint32_t *chars, Py_ssize_t n, int hyphen) {
    int mixed = 0;
    uint32_t first = hyphen && n == 1 ? '-' : chars[0];
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t c = hyphen && i == n - 1 ? '-' : chars[i];
        if (Py_UNICODE_ISALNUM(c)) return 0;
        if (c != first) mixed = 1;
    }
    return mixed ? (int)n : 0;
}

typedef struct {
    PyObject **words;   /* owned references */
    double *boxes;      /* 4 per word */
    int *starts;        /* index of each word's first character */
    int *letterless;    /* the word's length if it has no letter or digit and two marks */
    IntList runs;       /* (first word, end word) pairs */
    Py_ssize_t n;
} Words;

static void free_words(Words *w) {
    if (w->words)
        for (Py_ssize_t i = 0; i < w->n; i++) Py_XDECREF(w->words[i]);
    free(w->words);
    free(w->boxes);
    free(w->starts);
    free(w->letterless);
    free(w->runs.items);
}

/* Cut the text into words and engine lines, as the loop of `_read_text`. */
static int cut_words(void *tp, uint32_t *text, Py_ssize_t length, const double *frame,
                     int quarter, Words *w, long long *chars) {
    Py_ssize_t cap = length + 1; /* consecutive hyphen marks are words of one char */
    w->words = calloc((size_t)cap, sizeof(PyObject *));
    w->boxes = malloc((size_t)cap * 4 * sizeof(double));
    w->starts = malloc((size_t)cap * sizeof(int));
    w->letterless = malloc((size_t)cap * sizeof(int));
    if (!w->words || !w->boxes || !w->starts || !w->letterless) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t pos = 0, line_word = 0;
    while (pos < length) {
        Py_ssize_t start = pos;
        int breaks = 0;
        while (start < length && is_space(text[start])) {
            if (text[start] == '\n' || text[start] == '\r') breaks = 1;
            start++;
        }
        if (start == length) break;
        Py_ssize_t end = start;
        if (is_marker(text[end])) {
            end++;
        } else {
            while (end < length && !is_space(text[end]) && !is_marker(text[end])) end++;
            if (end < length && is_marker(text[end])) end++;
        }
        pos = end;
        if (breaks && w->n > line_word) {
            if (push(&w->runs, (int)line_word) || push(&w->runs, (int)w->n)) {
                PyErr_NoMemory();
                return -1;
            }
            line_word = w->n;
        }
        RectF first = {0}, last = {0};
        if (!loose_box(tp, (int)start, &first)) continue;
        if (end - start == 1 || !loose_box(tp, (int)(end - 1), &last))
            loose_box(tp, (int)start, &last);
        uint32_t mark = text[end - 1];
        int hyphen = is_marker(mark);
        if (hyphen) text[end - 1] = '-';
        PyObject *word = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, text + start,
                                                   end - start);
        if (hyphen) text[end - 1] = mark;
        if (!word) return -1;
        if (w->n == cap) { Py_DECREF(word); PyErr_SetString(PyExc_SystemError, "word overflow"); return -1; }
        display_box(&first, &last, frame, quarter, w->boxes + 4 * w->n);
        w->starts[w->n] = (int)start;
        w->letterless[w->n] = letterless_length(text + start, end - start, hyphen);
        w->words[w->n++] = word;
        *chars += end - start;
        if (hyphen) {
            if (push(&w->runs, (int)line_word) || push(&w->runs, (int)w->n)) {
                PyErr_NoMemory();
                return -1;
            }
            line_word = w->n;
        }
    }
    if (w->n > line_word)
        if (push(&w->runs, (int)line_word) || push(&w->runs, (int)w->n)) {
            PyErr_NoMemory();
            return -1;
        }
    return 0;
}

static PyObject *bytes_of(const void *data, Py_ssize_t size) {
    return PyBytes_FromStringAndSize((const char *)data, size);
}

/* One finished line: (words, boxes, sizes, direction), as the fields of a Line. */
static PyObject *line_tuple(Words *w, const int *index, const double *boxes, Py_ssize_t n,
                            double size, int direction, int bold) {
    PyObject *words = PyList_New(n), *box_list = PyList_New(n), *sizes = PyList_New(n);
    PyObject *value = PyFloat_FromDouble(size);  /* one object, as `[size] * n` */
    PyObject *prev = NULL;  /* the previous box: a coordinate it shares is shared */
    if (!words || !box_list || !sizes || !value) goto fail;
    for (Py_ssize_t j = 0; j < n; j++) {
        const double *b = boxes + 4 * j;
        PyObject *box = PyTuple_New(4);
        if (!box) goto fail;
        for (int q = 0; q < 4; q++) {
            PyObject *coordinate;
            if (prev && memcmp(&b[q - 4], &b[q], sizeof(double)) == 0) {
                coordinate = PyTuple_GET_ITEM(prev, q);
                Py_INCREF(coordinate);
            } else if (!(coordinate = PyFloat_FromDouble(b[q]))) {
                Py_DECREF(box);
                goto fail;
            }
            PyTuple_SET_ITEM(box, q, coordinate);
        }
        prev = box;
        PyObject_GC_UnTrack(box);  /* floats only: the collector would untrack it anyway */
        PyList_SET_ITEM(box_list, j, box);
        Py_INCREF(value);
        PyList_SET_ITEM(sizes, j, value);
        Py_INCREF(w->words[index[j]]);
        PyList_SET_ITEM(words, j, w->words[index[j]]);
    }
    Py_DECREF(value);
    return Py_BuildValue("(NNNiiN)", words, box_list, sizes, direction, -1,
                         PyBool_FromLong(bold));
fail:
    Py_XDECREF(words); Py_XDECREF(box_list); Py_XDECREF(sizes); Py_XDECREF(value);
    return NULL;
}

/* Phase two of `_read_text` (`_add_lines`): clamp, direction and size per line, line spans.
 * Returns (lines, bad_boxes, letterless, infos), lines as `line_tuple`s and infos their
 * `LineInfo`s as bytes. */
static PyObject *build_lines(void *tp, Words *w, int quarter, double width, double height) {
    Py_ssize_t n = w->n;
    int clamp = 0;
    for (Py_ssize_t i = 0; i < 4 * n && !clamp; i++)
        if (!isfinite(w->boxes[i])) clamp = 1;
    for (Py_ssize_t i = 0; i < n && !clamp; i++) {
        const double *b = w->boxes + 4 * i;
        if (b[0] < 0.0 || b[1] < 0.0 || b[2] > width || b[3] > height) clamp = 1;
    }
    PyObject *lines = PyList_New(0);
    double *boxes = malloc(((size_t)n + 1) * 4 * sizeof(double));
    int *index = malloc(((size_t)n + 1) * sizeof(int)); /* word of each kept box */
    Py_ssize_t *cuts = malloc(((size_t)n + 2) * sizeof(Py_ssize_t));
    LineInfo *infos = malloc(((size_t)n + 1) * sizeof(LineInfo));  /* a line per word at most */
    PyObject *result = NULL;
    Py_ssize_t kept = 0, n_lines = 0;
    long bad = 0;
    long long junk = 0;
    if (!lines || !boxes || !index || !cuts || !infos) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t r = 0; r + 1 < w->runs.len; r += 2) {
        Py_ssize_t first = w->runs.items[r], end = w->runs.items[r + 1];
        Py_ssize_t base = kept;
        int changed = 0;
        if (clamp) {
            const double *b0 = w->boxes + 4 * first;
            double m0 = b0[0], m1 = b0[1], m2 = b0[2], m3 = b0[3];
            int finite = 1;
            for (Py_ssize_t i = first; i < end; i++) {
                const double *b = w->boxes + 4 * i;
                if (b[0] < m0) m0 = b[0];
                if (b[1] < m1) m1 = b[1];
                if (b[2] > m2) m2 = b[2];
                if (b[3] > m3) m3 = b[3];
                for (int k = 0; k < 4; k++)
                    if (!isfinite(b[k])) finite = 0;
            }
            /* a non-finite coordinate passes the range test (-inf <= height): checked apart */
            changed = !(m0 >= 0.0 && m1 >= 0.0 && m2 <= width && m3 <= height && finite);
        }
        Py_ssize_t line_start = kept;
        for (Py_ssize_t i = first; i < end; i++) {
            double *box = boxes + 4 * kept;
            memcpy(box, w->boxes + 4 * i, 4 * sizeof(double));
            if (changed && !clean_box(box, width, height)) { bad++; continue; }
            index[kept] = (int)i;
            junk += w->letterless[i];
            kept++;
        }
        if (kept == base) continue;
        int start_char = w->starts[first];
        double angle = char_angle(tp, start_char);
        int direction;
        if (angle == 0.0) {
            direction = quarter;
        } else {
            double turns = isfinite(angle) && angle >= 0 ? nearbyint(angle / HALF_PI) : 0.0;
            direction = ((int)fmod(turns, 4.0) + quarter) % 4;
        }
        double size = font_size(tp, start_char);
        int bold = font_is_bold(tp, start_char);
        MatrixF m;
        if (get_matrix(tp, start_char, &m)) {
            double a = m.a, b = m.b, c = m.c, d = m.d;
            size *= sqrt(fabs(a * d - b * c));
        }
        if (!(isfinite(size) && 0.0 < size && size < 10000.0)) {
            const double *box = boxes + 4 * line_start;
            size = direction % 2 == 0 ? box[3] - box[1] : box[2] - box[0];
        }
        Py_ssize_t k = line_spans(boxes + 4 * line_start, kept - line_start, size, direction,
                                  cuts);
        for (Py_ssize_t j = 0; j + 1 < k; j++) {
            Py_ssize_t lo = line_start + cuts[j], hi = line_start + cuts[j + 1];
            PyObject *line = line_tuple(w, index + lo, boxes + 4 * lo, hi - lo, size, direction,
                                        bold);
            if (!line) goto done;
            LineInfo *info = &infos[n_lines++];
            const double *b = boxes + 4 * lo;
            info->words = hi - lo;
            info->box = (Rect){b[0], b[1], b[2], b[3]};
            for (Py_ssize_t i = lo + 1; i < hi; i++) {
                b = boxes + 4 * i;
                info->box.x0 = pmin(info->box.x0, b[0]); info->box.y0 = pmin(info->box.y0, b[1]);
                info->box.x1 = pmax(info->box.x1, b[2]); info->box.y1 = pmax(info->box.y1, b[3]);
            }
            info->size = size;
            info->direction = direction;
            info->group = -1;
            int failed = PyList_Append(lines, line);
            Py_DECREF(line);
            if (failed) goto done;
        }
    }
    result = Py_BuildValue("(OlLN)", lines, bad, junk,
                           bytes_of(infos, n_lines * (Py_ssize_t)sizeof(LineInfo)));
done:
    Py_XDECREF(lines);
    free(boxes);
    free(index);
    free(cuts);
    free(infos);
    return result;
}

/* ---- Accent composition (parse/accents.py), on the words of one page in `read_text`. ----
 *
 * The same decisions as `_Composer` with PDFium's character boxes: the same search order,
 * the same float comparisons, Python's min/max semantics. Marks and dropped accents are
 * keyed by the text position of their character (a word is one run of the page text). */

/* accents._DOTLESS: TeX puts accents over a dotless i or j. */
static inline Py_UCS4 dotted(Py_UCS4 c) { return c == 0x131 ? 'i' : c == 0x237 ? 'j' : c; }

typedef struct { Py_ssize_t key, seq; Py_UCS4 mark; double box[4]; } Piece;
typedef struct { Piece *items; Py_ssize_t len, cap; } Pieces;

static int add_piece(Pieces *list, Py_ssize_t key, Py_UCS4 mark, const double *box) {
    Piece *items = with_room(list->items, list->len, &list->cap, sizeof(Piece), 16);
    if (!items) return -1;
    list->items = items;
    Piece *p = &list->items[list->len];
    p->key = key;
    p->seq = list->len++;
    p->mark = mark;
    if (box) memcpy(p->box, box, sizeof p->box);
    return 0;
}

static int cmp_pieces(const void *pa, const void *pb) {
    const Piece *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The pieces of `key`, in the order they were added (the list sorted by cmp_pieces). */
static const Piece *pieces_of(const Pieces *list, Py_ssize_t key, Py_ssize_t *n) {
    *n = 0;
    if (!list->len) return NULL;
    Py_ssize_t lo = 0, hi = list->len;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (list->items[mid].key < key) lo = mid + 1; else hi = mid;
    }
    Py_ssize_t end = lo;
    while (end < list->len && list->items[end].key == key) end++;
    *n = end - lo;
    return list->items + lo;
}

typedef struct {
    void *tp;
    const double *frame;
    int quarter;
    Words *w;
    double **cache;            /* display boxes of each word's characters, once read */
    unsigned char *dropped;    /* per text position: an accent composed away */
    unsigned char *touched;    /* per word: holds an accent or was given one */
    Py_ssize_t *run_first, *run_end;
    Pieces marks;              /* key: the letter's text position */
    Pieces extra;              /* key: the word given the accent's box */
    long count;
} Composer;

/* `_CharBoxes`: the display box of each character of word i (read once). */
static const double *char_boxes(Composer *c, Py_ssize_t i) {
    if (!c->cache[i]) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(c->w->words[i]);
        double *boxes = malloc((size_t)(n ? n : 1) * 4 * sizeof(double));
        if (!boxes) { PyErr_NoMemory(); return NULL; }
        for (Py_ssize_t k = 0; k < n; k++) {
            RectF r = {0};
            loose_box(c->tp, c->w->starts[i] + (int)k, &r);
            double a = r.left, b = r.top, cc = r.right, d = r.bottom;
            to_display(c->frame, c->quarter, pmin(a, cc), pmin(b, d), pmax(a, cc), pmax(b, d),
                       boxes + 4 * k);
        }
        c->cache[i] = boxes;
    }
    return c->cache[i];
}

/* `_letter_under`: 1 with the (word, char) of the letter the accent overlaps most, 0 when
 * none overlaps enough, -1 on error. */
static int letter_under(Composer *c, const double *accent, const Py_ssize_t *targets,
                        Py_ssize_t n, Py_ssize_t *word, Py_ssize_t *at) {
    int found = 0;
    double best = 0.0, width = accent[2] - accent[0];
    for (Py_ssize_t t = 0; t < n; t++) {
        Py_ssize_t j = targets[t];
        PyObject *text = c->w->words[j];
        const double *boxes = char_boxes(c, j);
        if (!boxes) return -1;
        for (Py_ssize_t m = 0; m < PyUnicode_GET_LENGTH(text); m++) {
            Py_UCS4 ch = PyUnicode_READ_CHAR(text, m);
            if (!Py_UNICODE_ISALPHA(ch) || combining_of(ch) || c->dropped[c->w->starts[j] + m])
                continue;
            const double *box = boxes + 4 * m;
            double overlap = pmin(accent[2], box[2]) - pmax(accent[0], box[0]);
            double need = 0.4 * pmin(width, box[2] - box[0]);  /* MIN_OVERLAP */
            double reach = 0.5 * (box[3] - box[1]);
            if (overlap > best && overlap >= need && accent[3] >= box[1] - reach
                    && accent[1] <= box[3] + reach) {
                found = 1;
                best = overlap;
                *word = j;
                *at = m;
            }
        }
    }
    return found;
}

/* `_compose_word` (WINDOW words each side of a stand-alone accent). */
static int compose_word(Composer *c, Py_ssize_t i) {
    Words *w = c->w;
    PyObject *word = w->words[i];
    Py_ssize_t len = PyUnicode_GET_LENGTH(word), n = 0;
    int alone = 1;
    for (Py_ssize_t k = 0; k < len; k++)
        if (!combining_of(PyUnicode_READ_CHAR(word, k))) alone = 0;
    Py_ssize_t first = c->run_first[i], end = c->run_end[i];
    Py_ssize_t targets[121];
    if (alone) {
        Py_ssize_t lo = i - 60 > first ? i - 60 : first, hi = i + 61 < end ? i + 61 : end;
        for (Py_ssize_t j = lo; j < hi; j++)
            if (j != i && !combining_of(PyUnicode_READ_CHAR(w->words[j], 0))) targets[n++] = j;
    } else {
        for (Py_ssize_t j = i - 1; j <= i + 1; j++)
            if (first <= j && j < end) targets[n++] = j;
    }
    for (Py_ssize_t k = 0; k < len; k++) {
        Py_UCS4 mark = combining_of(PyUnicode_READ_CHAR(word, k));
        if (!mark) continue;
        const double *accent = w->boxes + 4 * i;
        if (len != 1) {
            const double *boxes = char_boxes(c, i);
            if (!boxes) return -1;
            accent = boxes + 4 * k;
        }
        Py_ssize_t j = 0, m = 0;
        int found = letter_under(c, accent, targets, n, &j, &m);
        if (found < 0) return -1;
        if (!found) continue;
        if (add_piece(&c->marks, w->starts[j] + m, mark, NULL)
                || (j != i && add_piece(&c->extra, j, 0, accent))) {
            PyErr_NoMemory();
            return -1;
        }
        c->dropped[w->starts[i] + k] = 1;
        c->touched[j] = 1;
        c->count++;
    }
    return 0;
}

/* `_text`: word i without its dropped accents, its letters composed with their marks. */
static PyObject *composed_text(Composer *c, Py_ssize_t i, PyObject *nfc) {
    PyObject *word = c->w->words[i];
    Py_ssize_t len = PyUnicode_GET_LENGTH(word), start = c->w->starts[i];
    PyObject *pieces = PyList_New(0), *result = NULL;
    if (!pieces) return NULL;
    for (Py_ssize_t m = 0; m < len; m++) {
        if (c->dropped[start + m]) continue;
        Py_UCS4 ch = PyUnicode_READ_CHAR(word, m);
        Py_ssize_t n;
        const Piece *marks = pieces_of(&c->marks, start + m, &n);
        PyObject *piece;
        if (n) {  /* the letter (dotted) and its marks in the order they were found */
            Py_UCS4 *chars = malloc((size_t)(n + 1) * sizeof(Py_UCS4));
            if (!chars) { PyErr_NoMemory(); goto done; }
            chars[0] = dotted(ch);
            for (Py_ssize_t k = 0; k < n; k++) chars[k + 1] = marks[k].mark;
            PyObject *raw = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, chars, n + 1);
            free(chars);
            if (!raw) goto done;
            piece = PyObject_CallFunction(nfc, "sO", "NFC", raw);
            Py_DECREF(raw);
        } else {
            piece = PyUnicode_FromOrdinal((int)ch);
        }
        if (!piece || PyList_Append(pieces, piece)) { Py_XDECREF(piece); goto done; }
        Py_DECREF(piece);
    }
    result = PyUnicode_Join(s_empty, pieces);
done:
    Py_DECREF(pieces);
    return result;
}

static void union_into(double *into, const double *box) {
    into[0] = pmin(into[0], box[0]); into[1] = pmin(into[1], box[1]);
    into[2] = pmax(into[2], box[2]); into[3] = pmax(into[3], box[3]);
}

/* `_box`: the union of word i's remaining characters and of the accents given to it. */
static int composed_box(Composer *c, Py_ssize_t i, double *out) {
    Py_ssize_t len = PyUnicode_GET_LENGTH(c->w->words[i]), start = c->w->starts[i], n;
    int any = 0, first = 1;
    for (Py_ssize_t m = 0; m < len; m++) any |= c->dropped[start + m];
    memcpy(out, c->w->boxes + 4 * i, 4 * sizeof(double));
    if (any) {
        const double *boxes = char_boxes(c, i);
        if (!boxes) return -1;
        for (Py_ssize_t m = 0; m < len; m++) {
            if (c->dropped[start + m]) continue;
            if (first) memcpy(out, boxes + 4 * m, 4 * sizeof(double)); else union_into(out, boxes + 4 * m);
            first = 0;
        }
    }
    const Piece *extra = pieces_of(&c->extra, i, &n);
    for (Py_ssize_t k = 0; k < n; k++) union_into(out, extra[k].box);
    return 0;
}

/* `_joinable`: two word halves on one baseline with no space between them. */
static int joinable(const double *left, const double *right) {
    double height = left[3] - left[1], gap = right[0] - left[2];
    double shared = pmin(left[3], right[3]) - pmax(left[1], right[1]);
    return -0.1 * height <= gap && gap <= 0.1 * height && shared > 0.5 * height;
}

/* `_rebuild`: the words after composition replace those of `w` (their first characters,
 * boxes and engine lines with them; letterless recounted on the new words). */
static int rebuild(Composer *c) {
    Words *w = c->w, out = {0};
    Py_ssize_t n = w->n, cap = n + 1;
    Py_ssize_t *new_index = malloc((size_t)cap * sizeof(Py_ssize_t));
    unsigned char *run_start = calloc((size_t)cap, 1);
    PyObject *nfc = NULL;
    int status = -1;
    out.words = calloc((size_t)cap, sizeof(PyObject *));
    out.boxes = malloc((size_t)cap * 4 * sizeof(double));
    out.starts = malloc((size_t)cap * sizeof(int));
    out.letterless = malloc((size_t)cap * sizeof(int));
    if (!new_index || !run_start || !out.words || !out.boxes || !out.starts || !out.letterless) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *unicodedata = PyImport_ImportModule("unicodedata");
    if (!unicodedata) goto done;
    nfc = PyObject_GetAttrString(unicodedata, "normalize");
    Py_DECREF(unicodedata);
    if (!nfc) goto done;
    for (Py_ssize_t r = 0; r + 1 < w->runs.len; r += 2) run_start[w->runs.items[r]] = 1;
    int split = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        new_index[i] = out.n;
        PyObject *word = w->words[i];
        Py_ssize_t len = PyUnicode_GET_LENGTH(word), start = w->starts[i];
        if (!split && !c->touched[i]) {
            Py_INCREF(word);
            out.words[out.n] = word;
            memcpy(out.boxes + 4 * out.n, w->boxes + 4 * i, 4 * sizeof(double));
            out.starts[out.n++] = (int)start;
            continue;
        }
        if (run_start[i]) split = 0;
        PyObject *text = word;
        double box[4];
        if (c->touched[i]) {
            if (!(text = composed_text(c, i, nfc))) goto done;
        } else {
            Py_INCREF(text);
        }
        if (PyUnicode_GET_LENGTH(text) == 0) {
            Py_DECREF(text);
            split = split || out.n > 0;
            continue;
        }
        if (!c->touched[i]) {
            memcpy(box, w->boxes + 4 * i, sizeof box);
        } else if (composed_box(c, i, box)) {
            Py_DECREF(text);
            goto done;
        }
        split = split || c->dropped[start];
        double *last = out.n ? out.boxes + 4 * (out.n - 1) : NULL;
        if (split && last && joinable(last, box)) {
            PyObject *joined = PyUnicode_Concat(out.words[out.n - 1], text);
            Py_DECREF(text);
            if (!joined) goto done;
            Py_SETREF(out.words[out.n - 1], joined);
            union_into(last, box);
        } else {
            out.words[out.n] = text;
            memcpy(out.boxes + 4 * out.n, box, sizeof box);
            out.starts[out.n++] = (int)start;
        }
        split = c->dropped[start + len - 1];
    }
    new_index[n] = out.n;
    /* Joins never cross an engine line, so one ends where its end word's new word starts. */
    for (Py_ssize_t r = 0; r + 1 < w->runs.len; r += 2) {
        Py_ssize_t s = new_index[w->runs.items[r]], e = new_index[w->runs.items[r + 1]];
        if (e > s && (push(&out.runs, (int)s) || push(&out.runs, (int)e))) {
            PyErr_NoMemory();
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < out.n; i++) {
        Py_UCS4 *chars = PyUnicode_AsUCS4Copy(out.words[i]);
        if (!chars) goto done;
        out.letterless[i] = letterless_length(chars, PyUnicode_GET_LENGTH(out.words[i]), 0);
        PyMem_Free(chars);
    }
    free_words(w);
    *w = out;
    out = (Words){0};
    status = 0;
done:
    free_words(&out);
    free(new_index);
    free(run_start);
    Py_XDECREF(nfc);
    return status;
}

/* `compose_accents` over the page's words: they are replaced by the composed ones and the
 * number of accents composed is added to `count`. */
static int compose_accents(void *tp, Words *w, Py_ssize_t length, const double *frame,
                           int quarter, long *count) {
    Py_ssize_t n = w->n;
    Composer c = {.tp = tp, .frame = frame, .quarter = quarter, .w = w};
    int status = -1;
    c.cache = calloc((size_t)n + 1, sizeof(double *));
    c.dropped = calloc((size_t)length + 1, 1);
    c.touched = calloc((size_t)n + 1, 1);
    c.run_first = malloc(((size_t)n + 1) * sizeof(Py_ssize_t));
    c.run_end = malloc(((size_t)n + 1) * sizeof(Py_ssize_t));
    if (!c.cache || !c.dropped || !c.touched || !c.run_first || !c.run_end) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) { c.run_first[i] = i; c.run_end[i] = i + 1; }
    for (Py_ssize_t r = 0; r + 1 < w->runs.len; r += 2)
        for (Py_ssize_t i = w->runs.items[r]; i < w->runs.items[r + 1]; i++) {
            c.run_first[i] = w->runs.items[r];
            c.run_end[i] = w->runs.items[r + 1];
        }
    for (Py_ssize_t i = 0; i < n; i++) {  /* every word holding an accent, in order */
        PyObject *word = w->words[i];
        for (Py_ssize_t k = 0; k < PyUnicode_GET_LENGTH(word) && !c.touched[i]; k++)
            c.touched[i] = combining_of(PyUnicode_READ_CHAR(word, k)) != 0;
        if (c.touched[i] && compose_word(&c, i)) goto done;
    }
    if (c.marks.len > 1) qsort(c.marks.items, (size_t)c.marks.len, sizeof(Piece), cmp_pieces);
    if (c.extra.len > 1) qsort(c.extra.items, (size_t)c.extra.len, sizeof(Piece), cmp_pieces);
    if (rebuild(&c)) goto done;
    *count += c.count;
    status = 0;
done:
    if (c.cache)
        for (Py_ssize_t i = 0; i < n; i++) free(c.cache[i]);
    free(c.cache);
    free(c.dropped);
    free(c.touched);
    free(c.run_first);
    free(c.run_end);
    free(c.marks.items);
    free(c.extra.items);
    return status;
}

/* read_text(textpage, count, frame, quarter, width, height, compose)
 *
 * `textpage` is the FPDF_TEXTPAGE address, `frame` (left, bottom, right, top) the page's
 * bounding box. Returns (chars, garbage, composed, lines, bad_boxes, letterless, infos):
 * `composed` counts the spacing accents composed with their letter (when `compose`),
 * `lines` holds the finished lines as (words, boxes, sizes, direction) tuples (the fields
 * of a Line), `letterless` counts the characters of words without a letter or digit
 * (api._junk), or is -1 when no word is kept, and `infos` holds each line's `LineInfo` for
 * `order_page`. */
static PyObject *read_text(PyObject *self, PyObject *args) {
    unsigned long long address;
    int count, quarter, compose;
    double frame[4], width, height;
    (void)self;
    if (!PyArg_ParseTuple(args, "Ki(dddd)iddp", &address, &count, &frame[0], &frame[1],
                          &frame[2], &frame[3], &quarter, &width, &height, &compose))
        return NULL;
    if (!get_text) {
        PyErr_SetString(PyExc_RuntimeError, "PDFium entry points not bound");
        return NULL;
    }
    if (count <= 0 || quarter < 0 || quarter > 3) {
        PyErr_SetString(PyExc_ValueError, "count must be positive and quarter in 0..3");
        return NULL;
    }
    void *tp = (void *)(uintptr_t)address;
    Py_ssize_t length = 0;
    uint32_t *text = page_text(tp, count, &length);
    if (!text) return PyErr_NoMemory();
    long long garbage = 0, chars = 0;
    int accents = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        if (is_control(text[i])) text[i] = 0xfffd;
        if (is_garbage(text[i])) garbage++;
        if (combining_of(text[i])) accents = 1;
    }
    Words w = {0};
    PyObject *result = NULL;
    if (cut_words(tp, text, length, frame, quarter, &w, &chars)) goto done;
    long composed = 0;
    if (compose && accents && w.n && compose_accents(tp, &w, length, frame, quarter, &composed))
        goto done;
    PyObject *lines = build_lines(tp, &w, quarter, width, height);
    if (!lines) goto done;
    PyObject *items, *infos;
    long bad;
    long long junk;
    if (!PyArg_ParseTuple(lines, "OlLO", &items, &bad, &junk, &infos)) {
        Py_DECREF(lines);
        goto done;
    }
    result = Py_BuildValue("(LLlOlLO)", chars, garbage, composed, items, bad,
                           PyList_GET_SIZE(items) ? junk : -1LL, infos);
    Py_DECREF(lines);
done:
    free(text);
    free_words(&w);
    return result;
}

/* ---- Reading order (parse/order.py), on the Line objects of one page. ----
 *
 * The same recursive XY-cut as `order_page`, decision for decision: Python's sorts are
 * stable, so every sort here breaks ties by the position in its input; min and max chains
 * run in the same order. Work lists live on an explicit stack (no C recursion). Only
 * finite boxes and sizes are handled: for anything else `order_page` returns None and the
 * Python code runs, so both give the same answer or the same error. */

typedef struct { double a, b; } Span;
typedef struct { double k1, k2, k3; Py_ssize_t pos; int item; } SortKey;
typedef struct { int *items; Py_ssize_t n; } Node;
typedef struct { Node *nodes; Py_ssize_t len, cap; } Nodes;

/* Constants of parse/order.py, passed by it. */
typedef struct { double column_gap, column_share, block_gap, footnote_size, footnote_top,
                 min_stretch; } Limits;

static int cmp_keys(const void *pa, const void *pb) {
    const SortKey *a = pa, *b = pb;
    if (a->k1 != b->k1) return a->k1 < b->k1 ? -1 : 1;
    if (a->k2 != b->k2) return a->k2 < b->k2 ? -1 : 1;
    if (a->k3 != b->k3) return a->k3 < b->k3 ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Sort `keys[0:n]` (filled by the caller, pos = input position) and write the items back. */
static void sort_into(SortKey *keys, Py_ssize_t n, int *out) {
    qsort(keys, (size_t)n, sizeof(SortKey), cmp_keys);
    for (Py_ssize_t k = 0; k < n; k++) out[k] = keys[k].item;
}

static int cmp_spans(const void *pa, const void *pb) {
    const Span *a = pa, *b = pb;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    if (a->b != b->b) return a->b < b->b ? -1 : 1;
    return 0;
}

/* `_merge_spans`: sorts `spans[0:n]` in place and writes the union to `out`. */
static Py_ssize_t merge_spans(Span *spans, Py_ssize_t n, double gap, Span *out) {
    qsort(spans, (size_t)n, sizeof(Span), cmp_spans);
    Py_ssize_t m = 0;
    out[m++] = spans[0];
    for (Py_ssize_t i = 1; i < n; i++) {
        if (spans[i].a - out[m - 1].b < gap) {
            if (spans[i].b > out[m - 1].b) out[m - 1].b = spans[i].b;
        } else {
            out[m++] = spans[i];
        }
    }
    return m;
}

typedef struct {
    const Rect *rects;
    Py_ssize_t n;
    double gap_x, gap_y, share;
    SortKey *keys;        /* n */
    Span *tmp, *covered, *cover, *joined;  /* 2n each */
} Cutter;

static Py_ssize_t cover_of(Cutter *c, const int *items, Py_ssize_t n, Span *out) {
    for (Py_ssize_t k = 0; k < n; k++) {
        c->tmp[k].a = c->rects[items[k]].x0;
        c->tmp[k].b = c->rects[items[k]].x1;
    }
    return merge_spans(c->tmp, n, c->gap_x, out);
}

static int overlap(const Span *a, Py_ssize_t na, const Span *b, Py_ssize_t nb) {
    for (Py_ssize_t i = 0; i < na; i++)
        for (Py_ssize_t j = 0; j < nb; j++)
            if (a[i].a < b[j].b && b[j].a < a[i].b) return 1;
    return 0;
}

static int aligned(Span span, const Span *cols, Py_ssize_t n, double gap) {
    for (Py_ssize_t i = 0; i < n; i++) {
        double c0 = cols[i].a, c1 = cols[i].b;
        if (!(span.a < c1 && c0 < span.b)) continue;
        if (fabs(span.a - c0) < gap || (span.a > c0 - gap && span.b < c1 + gap)) return 1;
    }
    return 0;
}

static void extent(const Cutter *c, const int *items, Py_ssize_t n, double *top, double *bottom) {
    double t = c->rects[items[0]].y0, b = c->rects[items[0]].y1;
    for (Py_ssize_t k = 1; k < n; k++) {
        t = pmin(t, c->rects[items[k]].y0);
        b = pmax(b, c->rects[items[k]].y1);
    }
    *top = t;
    *bottom = b;
}

/* `_split_x`: `ordered` gets the items by x0; returns where the right half starts, or 0. */
static Py_ssize_t split_x(Cutter *c, const int *items, Py_ssize_t n, int *ordered) {
    for (Py_ssize_t k = 0; k < n; k++) {
        SortKey key = {c->rects[items[k]].x0, 0.0, 0.0, k, items[k]};
        c->keys[k] = key;
    }
    sort_into(c->keys, n, ordered);
    double best = c->gap_x, end = c->rects[ordered[0]].x1;
    Py_ssize_t best_at = 0;
    for (Py_ssize_t k = 1; k < n; k++) {
        double x0 = c->rects[ordered[k]].x0, x1 = c->rects[ordered[k]].x1;
        if (x0 - end >= best) { best = x0 - end; best_at = k; }
        if (x1 > end) end = x1;
    }
    if (best_at == 0) return 0;
    double tl, bl, tr, br;
    extent(c, ordered, best_at, &tl, &bl);
    extent(c, ordered + best_at, n - best_at, &tr, &br);
    double shared = pmin(bl, br) - pmax(tl, tr);
    return shared >= c->share * pmin(bl - tl, br - tr) ? best_at : 0;
}

static int push_node(Nodes *s, const int *items, Py_ssize_t n) {
    Node *nodes = with_room(s->nodes, s->len, &s->cap, sizeof(Node), 16);
    if (!nodes) return -1;
    s->nodes = nodes;
    int *copy = malloc(((size_t)n + 1) * sizeof(int));
    if (!copy) return -1;
    if (n) memcpy(copy, items, (size_t)n * sizeof(int));
    s->nodes[s->len].items = copy;
    s->nodes[s->len].n = n;
    s->len++;
    return 0;
}

static void free_nodes(Nodes *s) {
    for (Py_ssize_t i = 0; i < s->len; i++) free(s->nodes[i].items);
    free(s->nodes);
}

/* `_Cutter.leaves` over units 0..n-1: the leaves, in order, appended to `leaves`. */
static int cut_leaves(Cutter *c, Nodes *leaves) {
    Nodes stack = {0};
    int *ordered = malloc(((size_t)c->n + 1) * sizeof(int));
    Py_ssize_t *starts = malloc(((size_t)c->n + 2) * sizeof(Py_ssize_t));
    int status = -1;
    if (!ordered || !starts) goto done;
    for (Py_ssize_t i = 0; i < c->n; i++) ordered[i] = (int)i;
    if (push_node(&stack, ordered, c->n)) goto done;
    while (stack.len) {
        Node node = stack.nodes[--stack.len];
        int *items = node.items;
        Py_ssize_t n = node.n;
        if (n <= 1) goto leaf;
        Py_ssize_t half = split_x(c, items, n, ordered);
        if (half) {
            if (push_node(&stack, ordered + half, n - half) || push_node(&stack, ordered, half)) {
                free(items);
                goto done;
            }
            free(items);
            continue;
        }
        /* `_bands_y`: band b is ordered[starts[b]:starts[b + 1]]. */
        for (Py_ssize_t k = 0; k < n; k++) {
            SortKey key = {c->rects[items[k]].y0, 0.0, 0.0, k, items[k]};
            c->keys[k] = key;
        }
        sort_into(c->keys, n, ordered);
        Py_ssize_t bands = 0;
        starts[bands++] = 0;
        double end = c->rects[ordered[0]].y1;
        for (Py_ssize_t k = 1; k < n; k++) {
            const Rect *r = &c->rects[ordered[k]];
            if (r->y0 - end >= c->gap_y) starts[bands++] = k;
            if (r->y1 > end) end = r->y1;
        }
        starts[bands] = n;
        if (bands == 1) goto leaf;
        /* Consecutive bands merged: merged band m is ordered[starts[kept[m]]:...]; the kept
         * starts overwrite `starts` in place (m <= b). */
        Py_ssize_t merged = 1;
        Py_ssize_t ncovered = cover_of(c, ordered, starts[1], c->covered);
        for (Py_ssize_t b = 1; b < bands; b++) {
            Py_ssize_t ncover = cover_of(c, ordered + starts[b], starts[b + 1] - starts[b],
                                         c->cover);
            memcpy(c->tmp, c->covered, (size_t)ncovered * sizeof(Span));
            memcpy(c->tmp + ncovered, c->cover, (size_t)ncover * sizeof(Span));
            Py_ssize_t njoined = merge_spans(c->tmp, ncovered + ncover, c->gap_x, c->joined);
            if (njoined > 1 && overlap(c->covered, ncovered, c->cover, ncover) &&
                (ncovered > 1 || aligned(c->covered[0], c->cover, ncover, c->gap_x))) {
                memcpy(c->covered, c->joined, (size_t)njoined * sizeof(Span));
                ncovered = njoined;
            } else {
                starts[merged++] = starts[b];
                memcpy(c->covered, c->cover, (size_t)ncover * sizeof(Span));
                ncovered = ncover;
            }
        }
        starts[merged] = n;
        if (merged == 1) goto leaf;
        for (Py_ssize_t m = merged - 1; m >= 0; m--)
            if (push_node(&stack, ordered + starts[m], starts[m + 1] - starts[m])) {
                free(items);
                goto done;
            }
        free(items);
        continue;
    leaf:
        if (push_node(leaves, items, n)) { free(items); goto done; }
        free(items);
    }
    status = 0;
done:
    free_nodes(&stack);
    free(ordered);
    free(starts);
    return status;
}

/* `_rows`: the leaf's units reordered in place (`keys` holds n). */
static void rows(int *items, Py_ssize_t n, const Rect *rects, const double *sizes,
                 SortKey *keys) {
    if (n == 1) return;
    for (Py_ssize_t k = 0; k < n; k++) {
        SortKey key = {rects[items[k]].y0 + rects[items[k]].y1, rects[items[k]].x0, 0.0, k,
                       items[k]};
        keys[k] = key;
    }
    sort_into(keys, n, items);
    Py_ssize_t row = 0;
    double row_centre = 0.0;
    for (Py_ssize_t k = 0; k <= n; k++) {
        double centre = k < n ? (rects[items[k]].y0 + rects[items[k]].y1) / 2 : 0.0;
        if (k < n && k > 0 && centre - row_centre < 0.5 * sizes[items[k]]) continue;
        if (k - row > 1) {  /* close the row [row, k): left to right */
            for (Py_ssize_t j = row; j < k; j++) {
                SortKey key = {rects[items[j]].x0, 0.0, 0.0, j, items[j]};
                keys[j - row] = key;
            }
            sort_into(keys, k - row, items + row);
        }
        row = k;
        row_centre = centre;
    }
}

static Rect rect_union(const Rect *rects, const int *items, Py_ssize_t n) {
    Rect u = rects[items[0]];
    for (Py_ssize_t k = 1; k < n; k++) {
        const Rect *r = &rects[items[k]];
        u.x0 = pmin(u.x0, r->x0); u.y0 = pmin(u.y0, r->y0);
        u.x1 = pmax(u.x1, r->x1); u.y1 = pmax(u.y1, r->y1);
    }
    return u;
}

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* `_footnotes`: note[k] set for the footnote blocks; -1 when out of memory. */
static int footnotes(const Nodes *blocks, const Rect *rects, const double *sizes, double body,
                     double height, const Limits *lim, char *note) {
    Py_ssize_t nb = blocks->len, most = 1;
    for (Py_ssize_t k = 0; k < nb; k++) if (blocks->nodes[k].n > most) most = blocks->nodes[k].n;
    char *small = calloc((size_t)nb + 1, 1);
    double *tmp = malloc((size_t)most * sizeof(double));
    Rect *spans = malloc(((size_t)nb + 1) * sizeof(Rect));
    int any = 0, status = -1;
    if (!small || !tmp || !spans) goto done;
    double limit = lim->footnote_size * body;
    for (Py_ssize_t k = 0; k < nb; k++) {
        const Node *b = &blocks->nodes[k];
        for (Py_ssize_t i = 0; i < b->n; i++) tmp[i] = sizes[b->items[i]];
        qsort(tmp, (size_t)b->n, sizeof(double), cmp_double);
        small[k] = tmp[b->n / 2] < limit;
        any |= small[k];
        spans[k] = rect_union(rects, b->items, b->n);
    }
    status = 0;
    if (!any) goto done;
    for (Py_ssize_t k = 0; k < nb; k++) {
        const Rect *box = &spans[k];
        if (!small[k] || box->y0 < lim->footnote_top * height) continue;
        int below = 0;
        for (Py_ssize_t j = 0; j < nb && !below; j++) {
            const Rect *o = &spans[j];
            below = !small[j] && o->y0 >= box->y1 && o->x0 < box->x1 && box->x0 < o->x1;
        }
        note[k] = !below;
    }
done:
    free(small);
    free(tmp);
    free(spans);
    return status;
}

/* `rotate_box` */
static Rect rotate(Rect b, int direction, double width, double height) {
    Rect r = b;
    if (direction == 1) { r.x0 = b.y0; r.y0 = width - b.x1; r.x1 = b.y1; r.y1 = width - b.x0; }
    else if (direction == 2) {
        r.x0 = width - b.x1; r.y0 = height - b.y1; r.x1 = width - b.x0; r.y1 = height - b.y0;
    } else if (direction == 3) {
        r.x0 = height - b.y1; r.y0 = b.x0; r.x1 = height - b.y0; r.y1 = b.x1;
    }
    return r;
}


/* 1 when read, 0 when the line is not one the C code handles (Python decides), -1 on error. */
static int line_info(PyObject *line, LineInfo *info) {
    PyObject *words = NULL, *boxes = NULL, *sizes = NULL, *dir = NULL, *group = NULL;
    int status = -1;
    if (!(words = PyObject_GetAttr(line, s_words)) || !(boxes = PyObject_GetAttr(line, s_boxes)) ||
        !(sizes = PyObject_GetAttr(line, s_sizes)) ||
        !(dir = PyObject_GetAttr(line, s_direction)) || !(group = PyObject_GetAttr(line, s_group)))
        goto done;
    status = 0;
    if (!PyList_Check(words) || !PyList_Check(boxes) || !PyList_Check(sizes) ||
        !PyLong_CheckExact(dir) || !PyLong_CheckExact(group) || PyList_GET_SIZE(boxes) == 0 ||
        PyList_GET_SIZE(sizes) == 0)
        goto done;
    info->words = PyList_GET_SIZE(words);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(boxes); i++) {
        PyObject *box = PyList_GET_ITEM(boxes, i);
        double v[4];
        if (!PyTuple_CheckExact(box) || PyTuple_GET_SIZE(box) != 4) goto done;
        for (int j = 0; j < 4; j++) {
            PyObject *item = PyTuple_GET_ITEM(box, j);
            if (!PyFloat_CheckExact(item)) goto done;
            v[j] = PyFloat_AS_DOUBLE(item);
            if (!isfinite(v[j])) goto done;
        }
        if (i == 0) {
            info->box.x0 = v[0]; info->box.y0 = v[1]; info->box.x1 = v[2]; info->box.y1 = v[3];
        } else {
            info->box.x0 = pmin(info->box.x0, v[0]); info->box.y0 = pmin(info->box.y0, v[1]);
            info->box.x1 = pmax(info->box.x1, v[2]); info->box.y1 = pmax(info->box.y1, v[3]);
        }
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sizes); i++) {
        PyObject *item = PyList_GET_ITEM(sizes, i);
        if (!PyFloat_CheckExact(item) || !isfinite(PyFloat_AS_DOUBLE(item))) goto done;
        info->size = i ? pmax(info->size, PyFloat_AS_DOUBLE(item)) : PyFloat_AS_DOUBLE(item);
    }
    int overflow = 0;
    long d = PyLong_AsLongAndOverflow(dir, &overflow);
    if (overflow) goto done;
    info->group = PyLong_AsLongAndOverflow(group, &overflow);
    if (overflow || info->group > (1L << 52)) goto done;  /* groups compare as doubles */
    info->direction = (int)(((d % 4) + 4) % 4);
    status = 1;
done:
    Py_XDECREF(words); Py_XDECREF(boxes); Py_XDECREF(sizes); Py_XDECREF(dir); Py_XDECREF(group);
    return status;
}

/* `_pitch` over the frame boxes of the main lines. */
static double pitch(const Rect *boxes, Py_ssize_t n, SortKey *keys, int *order, double *steps) {
    for (Py_ssize_t i = 0; i < n; i++) {
        SortKey key = {boxes[i].y0 + boxes[i].y1, 0.0, 0.0, i, (int)i};
        keys[i] = key;
    }
    sort_into(keys, n, order);
    Py_ssize_t m = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        const Rect *b = &boxes[order[k]];
        for (Py_ssize_t j = k + 1; j < n && j < k + 6; j++) {
            const Rect *o = &boxes[order[j]];
            if (o->x0 < b->x1 && b->x0 < o->x1 && o->y0 + o->y1 > b->y0 + b->y1) {
                steps[m++] = (o->y0 + o->y1 - b->y0 - b->y1) / 2;
                break;
            }
        }
    }
    if (!m) return 0.0;
    qsort(steps, (size_t)m, sizeof(double), cmp_double);
    return steps[m / 2];
}

/* `_body_size` */
static double body_size(const LineInfo *info, const int *main, Py_ssize_t n, SortKey *keys) {
    double total = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        SortKey key = {info[main[i]].size, (double)info[main[i]].words, 0.0, i, (int)i};
        keys[i] = key;
        total += (double)info[main[i]].words;
    }
    qsort(keys, (size_t)n, sizeof(SortKey), cmp_keys);
    double half = total / 2, seen = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        seen += keys[i].k2;
        if (seen >= half) return pmax(keys[i].k1, 1.0);
    }
    return pmax(keys[n - 1].k1, 1.0);
}

typedef struct {
    Rect *boxes, *rects, *unit_rects;
    double *sizes, *unit_sizes, *steps;
    int *order, *unit_of, *unit_start, *unit_lines;
    SortKey *keys;
    Span *spans;
    char *note;
} MainWork;

static void free_main(MainWork *w) {
    free(w->boxes); free(w->rects); free(w->unit_rects); free(w->sizes); free(w->unit_sizes);
    free(w->steps); free(w->order); free(w->unit_of); free(w->unit_start); free(w->unit_lines);
    free(w->keys); free(w->spans); free(w->note);
}

/* `_order_main`: the blocks (lists of indices into `main`), in reading order, appended to
 * `out`. */
static int order_main(const LineInfo *info, const int *main, Py_ssize_t n, int direction,
                      double width, double height, const Limits *lim, Nodes *out) {
    MainWork w = {0};
    Nodes leaves = {0}, blocks = {0};
    int status = -1;
    size_t m = (size_t)n + 1;
    if (n == 0) return 0;
    w.boxes = malloc(m * sizeof(Rect)); w.rects = malloc(m * sizeof(Rect));
    w.unit_rects = malloc(m * sizeof(Rect)); w.sizes = malloc(m * sizeof(double));
    w.unit_sizes = malloc(m * sizeof(double)); w.steps = malloc(m * sizeof(double));
    w.order = malloc(m * sizeof(int)); w.unit_of = malloc(m * sizeof(int));
    w.unit_start = malloc((m + 1) * sizeof(int)); w.unit_lines = malloc(m * sizeof(int));
    w.keys = malloc(m * sizeof(SortKey)); w.spans = malloc(8 * m * sizeof(Span));
    if (!w.boxes || !w.rects || !w.unit_rects || !w.sizes || !w.unit_sizes || !w.steps ||
        !w.order || !w.unit_of || !w.unit_start || !w.unit_lines || !w.keys || !w.spans)
        goto done;
    double frame_height = direction % 2 ? width : height;
    for (Py_ssize_t i = 0; i < n; i++) {
        w.sizes[i] = info[main[i]].size;
        w.boxes[i] = rotate(info[main[i]].box, direction, width, height);
    }
    double body = body_size(info, main, n, w.keys);
    double stretch = pmax(lim->min_stretch, pitch(w.boxes, n, w.keys, w.order, w.steps) / body);
    for (Py_ssize_t i = 0; i < n; i++) {
        double centre = (w.boxes[i].y0 + w.boxes[i].y1) / 2, half = 0.5 * stretch * w.sizes[i];
        Rect r = {w.boxes[i].x0, centre - half, w.boxes[i].x1, centre + half};
        w.rects[i] = r;
    }
    /* `_units`: lines of one engine block (group >= 0) form one unit, numbered by their
     * first line; unit u holds lines unit_lines[unit_start[u]:unit_start[u + 1]], in order.
     * unit_lines first holds, per line, the first line of its group. */
    Py_ssize_t grouped = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        w.unit_lines[i] = (int)i;
        if (info[main[i]].group >= 0) {
            SortKey key = {(double)info[main[i]].group, 0.0, 0.0, i, (int)i};
            w.keys[grouped++] = key;
        }
    }
    qsort(w.keys, (size_t)grouped, sizeof(SortKey), cmp_keys);
    for (Py_ssize_t k = 1; k < grouped; k++)
        if (w.keys[k].k1 == w.keys[k - 1].k1) w.unit_lines[w.keys[k].item] = w.unit_lines[w.keys[k - 1].item];
    Py_ssize_t units = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        w.unit_of[i] = w.unit_lines[i] == i ? (int)units++ : w.unit_of[w.unit_lines[i]];
        w.order[i] = 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) w.order[w.unit_of[i]]++;  /* lines per unit */
    w.unit_start[0] = 0;
    for (Py_ssize_t u = 0; u < units; u++) w.unit_start[u + 1] = w.unit_start[u] + w.order[u];
    for (Py_ssize_t u = 0; u < units; u++) w.order[u] = w.unit_start[u];
    for (Py_ssize_t i = 0; i < n; i++) w.unit_lines[w.order[w.unit_of[i]]++] = (int)i;
    for (Py_ssize_t u = 0; u < units; u++) {
        const int *ls = w.unit_lines + w.unit_start[u];
        Py_ssize_t k = w.unit_start[u + 1] - w.unit_start[u];
        w.unit_rects[u] = rect_union(w.rects, ls, k);
        double s = w.sizes[ls[0]];
        for (Py_ssize_t j = 1; j < k; j++) s = pmax(s, w.sizes[ls[j]]);
        w.unit_sizes[u] = s;
    }
    Cutter cut = {w.unit_rects, units, lim->column_gap * body, lim->block_gap * body,
                  lim->column_share, w.keys, w.spans, w.spans + 2 * m, w.spans + 4 * m,
                  w.spans + 6 * m};
    if (cut_leaves(&cut, &leaves)) goto done;
    for (Py_ssize_t b = 0; b < leaves.len; b++) {
        Node *leaf = &leaves.nodes[b];
        rows(leaf->items, leaf->n, w.unit_rects, w.unit_sizes, w.keys);
        Py_ssize_t k = 0;
        for (Py_ssize_t j = 0; j < leaf->n; j++) {
            int u = leaf->items[j];
            for (int q = w.unit_start[u]; q < w.unit_start[u + 1]; q++) w.order[k++] = w.unit_lines[q];
        }
        if (push_node(&blocks, w.order, k)) goto done;
    }
    w.note = calloc((size_t)blocks.len + 1, 1);
    if (!w.note) goto done;
    if (footnotes(&blocks, w.rects, w.sizes, body, frame_height, lim, w.note)) goto done;
    for (int moved = 0; moved < 2; moved++)
        for (Py_ssize_t b = 0; b < blocks.len; b++)
            if (w.note[b] == moved && push_node(out, blocks.nodes[b].items, blocks.nodes[b].n))
                goto done;
    status = 0;
done:
    free_main(&w);
    free_nodes(&leaves);
    free_nodes(&blocks);
    return status;
}

static PyObject *order_lines(PyObject *lines, double width, double height, const Limits *limits,
                             const Py_buffer *infos);

/* order_page(lines, width, height, limits, infos=None) -> list of blocks of lines, or None
 *
 * parse/order.py's `order_page` on a list of Line objects; `limits` are its constants
 * (COLUMN_GAP, COLUMN_SHARE, BLOCK_GAP, FOOTNOTE_SIZE, FOOTNOTE_TOP, MIN_STRETCH), `infos`
 * the lines' facts as `read_text` returned them (ignored unless one per line). None when
 * a line holds something other than finite float boxes and sizes: Python then decides. */
static PyObject *order_page(PyObject *self, PyObject *args) {
    PyObject *lines, *result = NULL;
    double width, height;
    Limits lim;
    Py_buffer infos = {0};
    (void)self;
    if (!PyArg_ParseTuple(args, "O!dd(dddddd)|z*", &PyList_Type, &lines, &width, &height,
                          &lim.column_gap, &lim.column_share, &lim.block_gap,
                          &lim.footnote_size, &lim.footnote_top, &lim.min_stretch, &infos))
        return NULL;
    result = order_lines(lines, width, height, &lim, infos.buf ? &infos : NULL);
    PyBuffer_Release(&infos);
    return result;
}

/* The facts of line i: from `infos` (what `read_text` made for these lines) when it holds
 * one valid `LineInfo` per line, else read from the Line object. */
static int line_facts(PyObject *lines, Py_ssize_t i, const Py_buffer *infos, LineInfo *info) {
    if (infos) {
        *info = ((const LineInfo *)infos->buf)[i];
        const Rect *b = &info->box;
        if (info->words > 0 && info->direction >= 0 && info->direction < 4
                && isfinite(b->x0) && isfinite(b->y0) && isfinite(b->x1) && isfinite(b->y1)
                && isfinite(info->size) && info->group <= (1L << 52))
            return 1;
    }
    return line_info(PyList_GET_ITEM(lines, i), info);
}

static PyObject *order_lines(PyObject *lines, double width, double height, const Limits *limits,
                             const Py_buffer *infos) {
    PyObject *result = NULL;
    Limits lim = *limits;
    Py_ssize_t n = PyList_GET_SIZE(lines);
    if (infos && infos->len != n * (Py_ssize_t)sizeof(LineInfo)) infos = NULL;
    if (n == 0) return PyList_New(0);
    if (!isfinite(width) || !isfinite(height)) Py_RETURN_NONE;
    LineInfo *info = malloc((size_t)n * sizeof(LineInfo));
    int *main = malloc((size_t)n * sizeof(int)), *other = malloc((size_t)n * sizeof(int));
    SortKey *keys = malloc((size_t)n * sizeof(SortKey));
    Nodes blocks = {0};
    if (!info || !main || !other || !keys) { PyErr_NoMemory(); goto done; }
    double weight[4] = {0, 0, 0, 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        int got = line_facts(lines, i, infos, &info[i]);
        if (got < 0) goto done;
        if (got == 0) { result = Py_None; Py_INCREF(result); goto done; }
        weight[info[i].direction] += (double)info[i].words;
    }
    int main_dir = 0;
    for (int d = 1; d < 4; d++) if (weight[d] > weight[main_dir]) main_dir = d;
    Py_ssize_t n_main = 0, n_other = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (info[i].direction == main_dir) main[n_main++] = (int)i;
        else other[n_other++] = (int)i;
    }
    if (order_main(info, main, n_main, main_dir, width, height, &lim, &blocks)) {
        PyErr_NoMemory();
        goto done;
    }
    /* `_order_other`: by direction, rounded top, left, then position. */
    for (Py_ssize_t k = 0; k < n_other; k++) {
        const LineInfo *li = &info[other[k]];
        Rect box = rotate(li->box, li->direction, width, height);
        SortKey key = {(double)li->direction, nearbyint(box.y0), box.x0, k, other[k]};
        keys[k] = key;
    }
    qsort(keys, (size_t)n_other, sizeof(SortKey), cmp_keys);
    result = PyList_New(blocks.len + n_other);
    if (!result) goto done;
    for (Py_ssize_t b = 0; b < blocks.len; b++) {
        PyObject *block = PyList_New(blocks.nodes[b].n);
        if (!block) { Py_CLEAR(result); goto done; }
        for (Py_ssize_t j = 0; j < blocks.nodes[b].n; j++) {
            PyObject *line = PyList_GET_ITEM(lines, main[blocks.nodes[b].items[j]]);
            Py_INCREF(line);
            PyList_SET_ITEM(block, j, line);
        }
        PyList_SET_ITEM(result, b, block);
    }
    for (Py_ssize_t k = 0; k < n_other; k++) {
        PyObject *line = PyList_GET_ITEM(lines, keys[k].item);
        PyObject *block = PyList_New(1);
        if (!block) { Py_CLEAR(result); goto done; }
        Py_INCREF(line);
        PyList_SET_ITEM(block, 0, line);
        PyList_SET_ITEM(result, blocks.len + k, block);
    }
done:
    free(info);
    free(main);
    free(other);
    free(keys);
    free_nodes(&blocks);
    return result;
}

/* ---- Document assembly (api._assemble): a page's ordered blocks onto the columns. ---- */

/* The line's words, boxes and sizes (new references) when all three are lists of one
 * length; 0 when not (Python decides), -1 on error. */
static int line_lists(PyObject *line, PyObject **words, PyObject **boxes, PyObject **sizes) {
    *words = PyObject_GetAttr(line, s_words);
    *boxes = *words ? PyObject_GetAttr(line, s_boxes) : NULL;
    *sizes = *boxes ? PyObject_GetAttr(line, s_sizes) : NULL;
    if (!*sizes) { Py_XDECREF(*words); Py_XDECREF(*boxes); return -1; }
    if (PyList_Check(*words) && PyList_Check(*boxes) && PyList_Check(*sizes) &&
        PyList_GET_SIZE(*boxes) == PyList_GET_SIZE(*words) &&
        PyList_GET_SIZE(*sizes) == PyList_GET_SIZE(*words))
        return 1;
    Py_DECREF(*words); Py_DECREF(*boxes); Py_DECREF(*sizes);
    return 0;
}

static int extend_list(PyObject *target, PyObject *items) {
    Py_ssize_t end = PyList_GET_SIZE(target);
    return PyList_SetSlice(target, end, end, items);
}

static int append_times(PyObject *target, PyObject *value, Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++)
        if (PyList_Append(target, value)) return -1;
    return 0;
}

/* extend_document(blocks, page, line_id, block_id, columns) -> (line_id, block_id) or None
 *
 * `columns` are the Document's words, boxes, font_sizes, word_pages, line_ids and block_ids
 * lists; every line of every block is appended, numbered from `line_id` and `block_id`.
 * None, with nothing appended, when a block or line is not made of lists (Python then
 * appends). */
static PyObject *extend_document(PyObject *self, PyObject *args) {
    PyObject *blocks, *col[6];
    long page, line_id, block_id;
    (void)self;
    if (!PyArg_ParseTuple(args, "Olll(O!O!O!O!O!O!)", &blocks, &page, &line_id, &block_id,
                          &PyList_Type, &col[0], &PyList_Type, &col[1], &PyList_Type, &col[2],
                          &PyList_Type, &col[3], &PyList_Type, &col[4], &PyList_Type, &col[5]))
        return NULL;
    if (!PyList_Check(blocks)) Py_RETURN_NONE;
    for (Py_ssize_t b = 0; b < PyList_GET_SIZE(blocks); b++) {
        PyObject *block = PyList_GET_ITEM(blocks, b);
        if (!PyList_Check(block)) Py_RETURN_NONE;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(block); j++) {
            PyObject *words, *boxes, *sizes;
            int got = line_lists(PyList_GET_ITEM(block, j), &words, &boxes, &sizes);
            if (got < 0) return NULL;
            if (got == 0) Py_RETURN_NONE;
            Py_DECREF(words); Py_DECREF(boxes); Py_DECREF(sizes);
        }
    }
    PyObject *page_value = PyLong_FromLong(page);
    if (!page_value) return NULL;
    for (Py_ssize_t b = 0; b < PyList_GET_SIZE(blocks); b++) {
        PyObject *block = PyList_GET_ITEM(blocks, b);
        PyObject *block_value = PyLong_FromLong(block_id);
        if (!block_value) goto fail;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(block); j++) {
            PyObject *words, *boxes, *sizes, *line_value = PyLong_FromLong(line_id);
            if (!line_value) { Py_DECREF(block_value); goto fail; }
            if (line_lists(PyList_GET_ITEM(block, j), &words, &boxes, &sizes) != 1) {
                Py_DECREF(line_value); Py_DECREF(block_value);
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_RuntimeError, "a line changed while appended");
                goto fail;
            }
            Py_ssize_t n = PyList_GET_SIZE(words);
            int failed = extend_list(col[0], words) || extend_list(col[1], boxes) ||
                         extend_list(col[2], sizes) || append_times(col[3], page_value, n) ||
                         append_times(col[4], line_value, n) ||
                         append_times(col[5], block_value, n);
            Py_DECREF(words); Py_DECREF(boxes); Py_DECREF(sizes); Py_DECREF(line_value);
            if (failed) { Py_DECREF(block_value); goto fail; }
            line_id++;
        }
        Py_DECREF(block_value);
        block_id++;
    }
    Py_DECREF(page_value);
    return Py_BuildValue("(ll)", line_id, block_id);
fail:
    Py_DECREF(page_value);
    return NULL;
}

/* non_ascii(words) -> the words holding a character outside ASCII, in order: the only
 * ones `nfc.nfc_words` must look at (an ASCII string is NFC). */
static PyObject *non_ascii(PyObject *self, PyObject *words) {
    (void)self;
    if (!PyList_Check(words)) {
        PyErr_SetString(PyExc_TypeError, "words must be a list");
        return NULL;
    }
    PyObject *result = PyList_New(0);
    if (!result) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(words); i++) {
        PyObject *word = PyList_GET_ITEM(words, i);
        if (!PyUnicode_Check(word)) {
            Py_DECREF(result);
            PyErr_SetString(PyExc_TypeError, "words must be str");
            return NULL;
        }
        if (!PyUnicode_IS_ASCII(word) && PyList_Append(result, word)) {
            Py_DECREF(result);
            return NULL;
        }
    }
    return result;
}

/* box_array(boxes) -> bytearray | None: the coordinates of a list of 4-tuples as native doubles,
 * as records.box_array reads them (float() of each); None when an item is not a 4-tuple,
 * which the numpy code then handles (or refuses) itself. */
static PyObject *box_array(PyObject *self, PyObject *boxes) {
    (void)self;
    if (!PyList_Check(boxes)) {
        PyErr_SetString(PyExc_TypeError, "boxes must be a list");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(boxes);
    PyObject *result = PyByteArray_FromStringAndSize(NULL, 4 * n * (Py_ssize_t)sizeof(double));
    if (!result) return NULL;
    double *out = (double *)PyByteArray_AS_STRING(result);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *box = PyList_GET_ITEM(boxes, i);
        if (!PyTuple_CheckExact(box) || PyTuple_GET_SIZE(box) != 4) {
            Py_DECREF(result);
            Py_RETURN_NONE;
        }
        for (int k = 0; k < 4; k++) {
            PyObject *value = PyTuple_GET_ITEM(box, k);
            double x = PyFloat_CheckExact(value) ? PyFloat_AS_DOUBLE(value)
                                                 : PyFloat_AsDouble(value);
            if (x == -1.0 && PyErr_Occurred()) {
                Py_DECREF(result);
                return NULL;
            }
            out[4 * i + k] = x;
        }
    }
    return result;
}

/* int_array(values) -> bytearray | None: a list of ints as native int64, as
 * records.int_array reads them; None when an item is not an int or does not fit, which the
 * numpy code then handles (or refuses) itself. */
static PyObject *int_array(PyObject *self, PyObject *values) {
    (void)self;
    if (!PyList_Check(values)) {
        PyErr_SetString(PyExc_TypeError, "values must be a list");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values);
    PyObject *result = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (!result) return NULL;
    int64_t *out = (int64_t *)PyByteArray_AS_STRING(result);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = PyList_GET_ITEM(values, i);
        if (!PyLong_CheckExact(value)) goto refuse;
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) goto refuse;
        out[i] = (int64_t)x;
    }
    return result;
refuse:
    PyErr_Clear();
    Py_DECREF(result);
    Py_RETURN_NONE;
}

/* box_columns(boxes, pages, widths, heights) -> (int32 boxes, int16 normalised boxes, int16
 * pages) as bytearrays | None: run/process.py's _box_columns for `boxes` (n x 4 doubles),
 * `pages` (a list of n page indices) and the page sizes by index. The same arithmetic as
 * its numpy code: rint (half to even), then trunc(1000 * x / size) clamped to 0-1000 and
 * the corners ordered. None when a value would take numpy outside what C reproduces
 * exactly (a page index outside the sizes, a coordinate outside int32 after rounding, a
 * NaN after scaling), which the numpy code then handles itself. */
static PyObject *box_columns(PyObject *self, PyObject *args) {
    PyObject *pages, *result = NULL;
    Py_buffer boxes = {0}, widths = {0}, heights = {0};
    (void)self;
    if (!PyArg_ParseTuple(args, "y*O!y*y*", &boxes, &PyList_Type, &pages, &widths, &heights))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(pages), count = widths.len / (Py_ssize_t)sizeof(double);
    if (boxes.len != 4 * n * (Py_ssize_t)sizeof(double) ||
        heights.len != widths.len || widths.len % (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "box_columns: sizes of the buffers do not agree");
        goto done;
    }
    PyObject *ints = PyByteArray_FromStringAndSize(NULL, 4 * n * (Py_ssize_t)sizeof(int32_t));
    PyObject *norm = PyByteArray_FromStringAndSize(NULL, 4 * n * (Py_ssize_t)sizeof(int16_t));
    PyObject *index = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int16_t));
    if (!ints || !norm || !index) goto fail;
    const double *box = boxes.buf, *width = widths.buf, *height = heights.buf;
    int32_t *out_int = (int32_t *)PyByteArray_AS_STRING(ints);
    int16_t *out_norm = (int16_t *)PyByteArray_AS_STRING(norm);
    int16_t *out_page = (int16_t *)PyByteArray_AS_STRING(index);
    for (Py_ssize_t i = 0; i < n; i++) {
        long long page = PyLong_AsLongLong(PyList_GET_ITEM(pages, i));
        if (page == -1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) goto fail;
            PyErr_Clear();  /* numpy's conversion decides how to refuse it */
            goto fallback;
        }
        if (page < 0 || page >= count) goto fallback;
        out_page[i] = (int16_t)(uint16_t)(unsigned long long)page;  /* numpy's wrap-around */
        double scaled[4];
        for (int k = 0; k < 4; k++) {
            double x = box[4 * i + k];
            double rounded = nearbyint(x);
            if (!(rounded >= -2147483648.0 && rounded <= 2147483647.0)) goto fallback;
            out_int[4 * i + k] = (int32_t)rounded;
            double v = trunc(1000.0 * x / (k % 2 ? height[page] : width[page]));
            if (v != v) goto fallback;
            scaled[k] = v < 0.0 ? 0.0 : (v > 1000.0 ? 1000.0 : v);
        }
        for (int k = 0; k < 2; k++) {
            out_norm[4 * i + k] = (int16_t)pmin(scaled[k], scaled[k + 2]);
            out_norm[4 * i + k + 2] = (int16_t)pmax(scaled[k], scaled[k + 2]);
        }
    }
    result = PyTuple_Pack(3, ints, norm, index);
    goto release;
fallback:
    result = Py_NewRef(Py_None);
    goto release;
fail:
    result = NULL;
release:
    Py_XDECREF(ints);
    Py_XDECREF(norm);
    Py_XDECREF(index);
done:
    PyBuffer_Release(&boxes);
    PyBuffer_Release(&widths);
    PyBuffer_Release(&heights);
    return result;
}

/* Whether a word ends in a mark that joins it to the next word (text/normalize.py's
 * _JOIN_MARKS: hyphen, U+2010, U+2011, soft hyphen, PDFium's line-end mark U+0002). */
static inline int ends_in_join_mark(PyObject *word, Py_UCS4 *last) {
    Py_ssize_t size = PyUnicode_GET_LENGTH(word);
    if (!size) return 0;
    *last = PyUnicode_READ_CHAR(word, size - 1);
    return *last == '-' || *last == 0x2010 || *last == 0x2011 || *last == 0xad || *last == 0x02;
}

/* Whether word i joins word i + 1 (text/normalize.py's _join_runs): a word ending in
 * PDFium's mark always does; one ending in another join mark does when it is longer than
 * the mark and the next word starts in lower case. */
static int joins(PyObject *words, Py_ssize_t i) {
    PyObject *word = PyList_GET_ITEM(words, i), *next = PyList_GET_ITEM(words, i + 1);
    Py_UCS4 last;
    if (!ends_in_join_mark(word, &last)) return 0;
    if (last == 0x02) return 1;
    return PyUnicode_GET_LENGTH(word) > 1 && PyUnicode_GET_LENGTH(next) > 0 &&
           Py_UNICODE_ISLOWER(PyUnicode_READ_CHAR(next, 0));
}

/* The key text/normalize.py's normalise_lines gives an ASCII word (newlines taken out):
 * hyphens, newlines and PDFium's mark U+0002 dropped, the backquote made a quote, upper
 * case folded; then each "(cid:N)" becomes U+FFFD, and spaces and control characters go,
 * in that order, as in the Python code. Most words are their own key: those are returned
 * without a copy. */
static PyObject *ascii_key(PyObject *word) {
    const Py_UCS1 *in = PyUnicode_1BYTE_DATA(word);
    Py_ssize_t n = PyUnicode_GET_LENGTH(word), m = 0, out = 0, cids = 0;
    Py_ssize_t same = 0;
    while (same < n && in[same] > 0x20 && in[same] < 0x7f && in[same] != '-' &&
           in[same] != '`' && in[same] != '(' && !(in[same] >= 'A' && in[same] <= 'Z'))
        same++;
    if (same == n) return Py_NewRef(word);
    char small[128];
    char *buf = n <= (Py_ssize_t)sizeof small ? small : PyMem_Malloc((size_t)n);
    if (!buf) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = (char)in[i];
        if (c == '-' || c == '\n' || c == 0x02) continue;
        if (c == '`') c = '\'';
        else if (c >= 'A' && c <= 'Z') c = (char)(c + ('a' - 'A'));
        buf[m++] = c;
    }
    /* "(cid:" digits ")" collapses to one marker byte (0x80, no ASCII character). */
    for (Py_ssize_t i = 0; i < m;) {
        Py_ssize_t j = i + 5;
        if (m - i >= 7 && !memcmp(buf + i, "(cid:", 5)) {
            while (j < m && buf[j] >= '0' && buf[j] <= '9') j++;
            if (j > i + 5 && j < m && buf[j] == ')') {
                buf[out++] = (char)0x80;
                cids++;
                i = j + 1;
                continue;
            }
        }
        char c = buf[i++];
        if ((unsigned char)c > 0x20 && c != 0x7f) buf[out++] = c;
    }
    PyObject *key;
    if (!cids) {
        key = PyUnicode_FromStringAndSize(buf, out);
    } else {
        key = PyUnicode_New(out, 0xfffd);
        if (key) {
            int kind = PyUnicode_KIND(key);
            void *data = PyUnicode_DATA(key);
            for (Py_ssize_t i = 0; i < out; i++) {
                unsigned char c = (unsigned char)buf[i];
                PyUnicode_WRITE(kind, data, i, c == 0x80 ? 0xfffd : c);
            }
        }
    }
    if (buf != small) PyMem_Free(buf);
    return key;
}

/* tokens(words, keys) -> (texts, first, end) | list[str]: text/normalize.py's
 * normalise_words. The key of an ASCII word is made here (ascii_key); that of another word
 * is taken from `keys` (word -> key), and the words not there are returned, without
 * repeats, when there are any (the caller normalises them and asks again). Hyphenated runs
 * are joined into one token, and empty tokens dropped, as the Python code does. */
static PyObject *tokens(PyObject *self, PyObject *args) {
    PyObject *words, *keys;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &words, &PyDict_Type, &keys)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(words);
    PyObject *texts = NULL, *first = NULL, *end = NULL, *result = NULL, *pending = NULL;
    PyObject *keyed = PyList_New(n);  /* each word's key, held while the tokens are made */
    if (!keyed) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *word = PyList_GET_ITEM(words, i);
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "words must be str");
            goto done;
        }
        if (PyUnicode_IS_ASCII(word)) {
            PyObject *made = ascii_key(word);
            if (!made) goto done;
            PyList_SET_ITEM(keyed, i, made);
            continue;
        }
        PyObject *key = PyDict_GetItemWithError(keys, word);
        if (!key) {
            if (PyErr_Occurred()) goto done;
            if (!pending && !(pending = PySet_New(NULL))) goto done;
            if (PySet_Add(pending, word)) goto done;
            continue;
        }
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "keys must be str");
            goto done;
        }
        PyList_SET_ITEM(keyed, i, Py_NewRef(key));
    }
    if (pending) {
        result = PySequence_List(pending);
        goto done;
    }
    /* At most one token per word: the lists are made that long and cut to the tokens made.
     * A token's end is the next token's first word unless an empty token lay between, so
     * the same int object serves both. */
    texts = PyList_New(n);
    first = PyList_New(n);
    end = PyList_New(n);
    if (!texts || !first || !end) goto done;
    Py_ssize_t made = 0;
    PyObject *stop = NULL;  /* the previous token's end (held by `end`), at word stop_at */
    Py_ssize_t stop_at = -1;
    for (Py_ssize_t i = 0; i < n;) {
        Py_ssize_t last = i;
        while (last < n - 1 && joins(words, last)) last++;
        PyObject *text;
        if (last == i) {  /* the key moves from `keyed` to the token */
            text = PyList_GET_ITEM(keyed, i);
            PyList_SET_ITEM(keyed, i, NULL);
        } else {
            PyObject *parts = PyList_GetSlice(keyed, i, last + 1);
            if (!parts) goto done;
            text = PyUnicode_Join(s_empty, parts);
            Py_DECREF(parts);
            if (!text) goto done;
        }
        if (!PyUnicode_GET_LENGTH(text)) {
            Py_DECREF(text);
        } else {
            PyObject *at = stop_at == i ? Py_NewRef(stop) : PyLong_FromSsize_t(i);
            stop = PyLong_FromSsize_t(last + 1);
            stop_at = last + 1;
            if (!at || !stop) {
                Py_XDECREF(at);
                Py_XDECREF(stop);
                Py_DECREF(text);
                goto done;
            }
            PyList_SET_ITEM(texts, made, text);
            PyList_SET_ITEM(first, made, at);
            PyList_SET_ITEM(end, made, stop);
            made++;
        }
        i = last + 1;
    }
    if (PyList_SetSlice(texts, made, n, NULL) || PyList_SetSlice(first, made, n, NULL) ||
        PyList_SetSlice(end, made, n, NULL))
        goto done;
    result = PyTuple_Pack(3, texts, first, end);
done:
    Py_DECREF(keyed);
    Py_XDECREF(pending);
    Py_XDECREF(texts);
    Py_XDECREF(first);
    Py_XDECREF(end);
    return result;
}

/* The hash of tokens[at .. at + n) as one n-gram: the tokens' own str hashes, combined
 * as a polynomial (mod 2**64) so that the next n-gram's follows in O(1). */
#define GRAM_BASE 0x100000001b3ull

/* Whether tokens a[i .. i + n) and b[j .. j + n) are equal strings; -1 on an error. */
static int same_gram(PyObject **a, Py_ssize_t i, PyObject **b, Py_ssize_t j, int n) {
    for (int t = 0; t < n; t++) {
        int eq = PyObject_RichCompareBool(a[i + t], b[j + t], Py_EQ);
        if (eq != 1) return eq;
    }
    return 1;
}

/* leaked(body, abstract, n) -> (found, total): text/leakage.py's audit, the count of
 * distinct word n-grams of the abstract (total) and of those among the body's n-grams
 * (found). The abstract's n-grams go in an open-addressing table keyed by hash and checked
 * by string equality, and every n-gram of the body is looked up in it once. */
static PyObject *leaked(PyObject *self, PyObject *args) {
    PyObject *body, *abstract;
    int n;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!i", &PyList_Type, &body, &PyList_Type, &abstract, &n))
        return NULL;
    Py_ssize_t nb = PyList_GET_SIZE(body), na = PyList_GET_SIZE(abstract);
    if (n < 1 || n > na) {
        PyErr_SetString(PyExc_ValueError, "leaked: need 1 <= n <= len(abstract)");
        return NULL;
    }
    Py_ssize_t grams = na - n + 1, size = 2, total = 0, found = 0;
    while (size < 2 * grams) size *= 2;
    PyObject **a = ((PyListObject *)abstract)->ob_item, **b = ((PyListObject *)body)->ob_item;
    Py_ssize_t *slots = PyMem_Malloc((size_t)size * sizeof(Py_ssize_t));  /* gram start, -1 */
    uint64_t *keys = PyMem_Malloc((size_t)size * sizeof(uint64_t));
    char *seen = PyMem_Calloc((size_t)size, 1);
    uint64_t *ha = PyMem_Malloc((size_t)(na + nb) * sizeof(uint64_t)), *hb = ha + na;
    PyObject *result = NULL;
    if (!slots || !keys || !seen || !ha) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < na + nb; i++) {
        PyObject *token = i < na ? a[i] : b[i - na];
        if (!PyUnicode_Check(token)) {
            PyErr_SetString(PyExc_TypeError, "tokens must be str");
            goto done;
        }
        Py_hash_t h = PyObject_Hash(token);
        if (h == -1) goto done;
        ha[i] = (uint64_t)h;
    }
    uint64_t top = 1;  /* GRAM_BASE ** (n - 1), to take the first token out */
    for (int t = 1; t < n; t++) top *= GRAM_BASE;
    for (Py_ssize_t i = 0; i < size; i++) slots[i] = -1;
    int shift = 64;
    for (Py_ssize_t s = size; s > 1; s /= 2) shift--;
    for (int pass = 0; pass < 2; pass++) {
        uint64_t *h = pass ? hb : ha;
        PyObject **tokens_of = pass ? b : a;
        Py_ssize_t count = pass ? nb - n + 1 : grams;
        uint64_t key = 0;
        for (int t = 0; t < n - 1 && t < (pass ? nb : na); t++) key = key * GRAM_BASE + h[t];
        for (Py_ssize_t i = 0; i < count; i++) {
            key = key * GRAM_BASE + h[i + n - 1];
            Py_ssize_t slot = (Py_ssize_t)((key * 0x9e3779b97f4a7c15ull) >> shift);
            for (;; slot = (slot + 1) & (size - 1)) {
                if (slots[slot] < 0) {
                    if (!pass) {
                        slots[slot] = i;
                        keys[slot] = key;
                        total++;
                    }
                    break;
                }
                if (keys[slot] != key) continue;
                int eq = same_gram(a, slots[slot], tokens_of, i, n);
                if (eq < 0) goto done;
                if (eq) {
                    if (pass && !seen[slot]) {
                        seen[slot] = 1;
                        found++;
                    }
                    break;
                }
            }
            key -= top * h[i];
        }
    }
    result = Py_BuildValue("nn", found, total);
done:
    PyMem_Free(slots);
    PyMem_Free(keys);
    PyMem_Free(seen);
    PyMem_Free(ha);
    return result;
}

/* Seed lookups of text/seeds.py. A k-gram index of a text is a bytes object of uint32:
 * the group bits and k, the start of each group's positions (2**bits + 1 of them), then the start
 * positions of all k-grams, grouped by bits of a polynomial hash of their code points and
 * ascending within a group (a counting sort). Any hash gives the same answers: every
 * position is checked against the text. */
#define SEED_BASE 0x100000001b3ull
#define SEED_MIX 0x9e3779b97f4a7c15ull

static inline uint32_t seed_group(uint64_t hash, int bits) {
    return (uint32_t)((hash * SEED_MIX) >> (64 - bits));
}

/* kgram_index(text, k) -> bytes | None: the index of the k-grams of a text; None when the
 * text is too long for 32-bit positions (the Python index is used then). */
static PyObject *kgram_index(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t k;
    (void)self;
    if (!PyArg_ParseTuple(args, "Un", &text, &k)) return NULL;
    if (k < 1 || k > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "kgram_index: k must be at least 1");
        return NULL;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (length >= ((Py_ssize_t)1 << 31)) Py_RETURN_NONE;
    Py_ssize_t count = length >= k ? length - k + 1 : 0;
    int bits = 4;
    while (bits < 20 && ((Py_ssize_t)1 << bits) < count) bits++;
    Py_ssize_t groups = (Py_ssize_t)1 << bits;
    PyObject *index = PyBytes_FromStringAndSize(NULL, (3 + groups + count) * 4);
    uint32_t *hashes = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(uint32_t));
    if (!index || !hashes) {
        Py_XDECREF(index);
        PyMem_Free(hashes);
        return PyErr_NoMemory();
    }
    uint32_t *out = (uint32_t *)PyBytes_AS_STRING(index), *starts = out + 2,
             *order = starts + groups + 1;
    out[0] = (uint32_t)bits;
    out[1] = (uint32_t)k;
    memset(starts, 0, (size_t)(groups + 1) * sizeof(uint32_t));
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    uint64_t top = 1, hash = 0;  /* top: SEED_BASE ** (k - 1) */
    for (Py_ssize_t j = 1; j < k; j++) top *= SEED_BASE;
    for (Py_ssize_t j = 0; j < k - 1 && j < length; j++)
        hash = hash * SEED_BASE + PyUnicode_READ(kind, data, j);
    for (Py_ssize_t i = 0; i < count; i++) {
        hash = hash * SEED_BASE + PyUnicode_READ(kind, data, i + k - 1);
        hashes[i] = seed_group(hash, bits);
        starts[hashes[i] + 1]++;
        hash -= top * PyUnicode_READ(kind, data, i);
    }
    for (Py_ssize_t g = 0; g < groups; g++) starts[g + 1] += starts[g];
    /* Each group filled in ascending positions; its start then points at the next group's
     * start, and the starts are moved back by one. */
    for (Py_ssize_t i = 0; i < count; i++) order[starts[hashes[i]]++] = (uint32_t)i;
    memmove(starts + 1, starts, (size_t)groups * sizeof(uint32_t));
    starts[0] = 0;
    PyMem_Free(hashes);
    return index;
}

/* seed_hits(text, index, seeds, limit) -> list[list[int]]: the first `limit` positions of
 * each seed in the text, ascending, overlapping ones included (repeated str.find), through
 * the text's kgram_index; every seed must be k characters long. */
static PyObject *seed_hits(PyObject *self, PyObject *args) {
    PyObject *text, *seeds;
    Py_buffer index;
    Py_ssize_t limit;
    (void)self;
    if (!PyArg_ParseTuple(args, "Uy*O!n", &text, &index, &PyList_Type, &seeds, &limit))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), n = PyList_GET_SIZE(seeds);
    const uint32_t *words = index.buf;
    Py_ssize_t size = index.len / 4, bits = size > 1 ? words[0] : 0, k = size > 1 ? words[1] : 0;
    Py_ssize_t groups = (Py_ssize_t)1 << bits, count = size - 3 - groups;
    if (index.len % 4 || bits < 4 || bits > 20 || k < 1 || count < 0 ||
        count != (length >= k ? length - k + 1 : 0) || words[2 + groups] != (uint32_t)count) {
        PyErr_SetString(PyExc_ValueError, "seed_hits: not the k-gram index of this text");
        goto done;
    }
    const uint32_t *starts = words + 2, *order = starts + groups + 1;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (!(result = PyList_New(n))) goto done;
    for (Py_ssize_t s = 0; s < n; s++) {
        PyObject *seed = PyList_GET_ITEM(seeds, s), *found = PyList_New(0);
        if (!found) goto fail;
        PyList_SET_ITEM(result, s, found);
        if (!PyUnicode_Check(seed)) {
            PyErr_SetString(PyExc_TypeError, "seeds must be str");
            goto fail;
        }
        if (PyUnicode_GET_LENGTH(seed) != k) {
            PyErr_SetString(PyExc_ValueError, "seed_hits: seeds must be k characters long");
            goto fail;
        }
        int seed_kind = PyUnicode_KIND(seed);
        const void *seed_data = PyUnicode_DATA(seed);
        uint64_t hash = 0;
        for (Py_ssize_t j = 0; j < k; j++) hash = hash * SEED_BASE + PyUnicode_READ(seed_kind, seed_data, j);
        uint32_t group = seed_group(hash, (int)bits);
        for (uint32_t e = starts[group]; e < starts[group + 1] && PyList_GET_SIZE(found) < limit; e++) {
            Py_ssize_t at = order[e], j = 0;
            while (j < k && PyUnicode_READ(kind, data, at + j) == PyUnicode_READ(seed_kind, seed_data, j)) j++;
            if (j < k) continue;
            PyObject *position = PyLong_FromSsize_t(at);
            if (!position || PyList_Append(found, position)) {
                Py_XDECREF(position);
                goto fail;
            }
            Py_DECREF(position);
        }
    }
    goto done;
fail:
    Py_CLEAR(result);
done:
    PyBuffer_Release(&index);
    return result;
}

/* runs(keep, size) -> list[tuple[int, int]] | None: records.py's _runs of a list of int
 * indices, the [start, stop) runs of consecutive ascending values in order; None when an
 * item is not an int or lies outside 0 .. size - 1 (numpy decides, and raises, then). */
static PyObject *runs(PyObject *self, PyObject *args) {
    PyObject *keep;
    Py_ssize_t size;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!n", &PyList_Type, &keep, &size)) return NULL;
    PyObject *result = PyList_New(0);
    if (!result) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(keep), start = 0, prev = 0;
    for (Py_ssize_t i = 0; i <= n; i++) {
        Py_ssize_t value = 0;
        if (i < n) {
            PyObject *item = PyList_GET_ITEM(keep, i);
            if (!PyLong_Check(item)) goto refuse;
            value = PyLong_AsSsize_t(item);
            if (value == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                goto refuse;
            }
            if (value < 0 || value >= size) goto refuse;
        }
        if (i && (i == n || value != prev + 1)) {
            PyObject *run = Py_BuildValue("(nn)", start, prev + 1);
            if (!run || PyList_Append(result, run)) {
                Py_XDECREF(run);
                Py_DECREF(result);
                return NULL;
            }
            Py_DECREF(run);
        }
        if (!i || value != prev + 1) start = value;
        prev = value;
    }
    return result;
refuse:
    Py_DECREF(result);
    Py_RETURN_NONE;
}

/* pick(values, runs) -> list | None: records.py's _pick_python, the items of `values` in each
 * [start, stop) run, in order, each run clamped to the list as a slice is; None when a run is
 * not a pair of non-negative ints, which the Python code then handles itself. Copying the
 * pointers once, instead of a slice per run then the extend, is most of Document.select. */
static PyObject *pick(PyObject *self, PyObject *args) {
    PyObject *values, *runs;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &values, &PyList_Type, &runs)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(values), count = PyList_GET_SIZE(runs), total = 0;
    Py_ssize_t *bounds = PyMem_New(Py_ssize_t, 2 * count + 2);
    if (!bounds) return PyErr_NoMemory();
    for (Py_ssize_t r = 0; r < count; r++) {
        PyObject *run = PyList_GET_ITEM(runs, r);
        if (!PyTuple_CheckExact(run) || PyTuple_GET_SIZE(run) != 2) goto refuse;
        for (int k = 0; k < 2; k++) {
            PyObject *item = PyTuple_GET_ITEM(run, k);
            if (!PyLong_CheckExact(item)) goto refuse;
            Py_ssize_t value = PyLong_AsSsize_t(item);
            if (value == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                goto refuse;
            }
            if (value < 0) goto refuse;
            bounds[2 * r + k] = value < n ? value : n;
        }
        if (bounds[2 * r + 1] < bounds[2 * r]) bounds[2 * r + 1] = bounds[2 * r];
        total += bounds[2 * r + 1] - bounds[2 * r];
    }
    PyObject *result = PyList_New(total);
    if (!result) {
        PyMem_Free(bounds);
        return NULL;
    }
    Py_ssize_t at = 0;
    for (Py_ssize_t r = 0; r < count; r++) {
        for (Py_ssize_t i = bounds[2 * r]; i < bounds[2 * r + 1]; i++) {
            PyList_SET_ITEM(result, at++, Py_NewRef(PyList_GET_ITEM(values, i)));
        }
    }
    PyMem_Free(bounds);
    return result;
refuse:
    PyMem_Free(bounds);
    Py_RETURN_NONE;
}

/* symbol_bytes(query, window) -> (bytes, bytes) | None: text/match.py's _as_bytes for
 * texts beyond Latin-1: one byte per character, each distinct character of the two texts
 * its own byte (numbered in order of first appearance), None beyond 256 of them. Only the
 * equality of characters counts in an alignment, so any such numbering aligns alike. */
#define SYMBOL_SLOTS 1024 /* a power of two, four times the symbols a result can hold */
static PyObject *symbol_bytes(PyObject *self, PyObject *args) {
    PyObject *texts[2];
    (void)self;
    if (!PyArg_ParseTuple(args, "UU", &texts[0], &texts[1])) return NULL;
    Py_UCS4 keys[SYMBOL_SLOTS];
    unsigned char codes[SYMBOL_SLOTS];
    unsigned char used[SYMBOL_SLOTS] = {0};
    int symbols = 0;
    PyObject *out[2] = {NULL, NULL};
    for (int t = 0; t < 2; t++) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(texts[t]);
        int kind = PyUnicode_KIND(texts[t]);
        const void *data = PyUnicode_DATA(texts[t]);
        out[t] = PyBytes_FromStringAndSize(NULL, n);
        if (!out[t]) goto fail;
        unsigned char *bytes = (unsigned char *)PyBytes_AS_STRING(out[t]);
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            size_t slot = ((uint32_t)c * 2654435761u >> 22) & (SYMBOL_SLOTS - 1);
            while (used[slot] && keys[slot] != c) slot = (slot + 1) & (SYMBOL_SLOTS - 1);
            if (!used[slot]) {
                if (symbols == 256) {
                    Py_DECREF(out[0]);
                    Py_XDECREF(out[1]);
                    Py_RETURN_NONE;
                }
                used[slot] = 1;
                keys[slot] = c;
                codes[slot] = (unsigned char)symbols++;
            }
            bytes[i] = codes[slot];
        }
    }
    PyObject *result = PyTuple_Pack(2, out[0], out[1]);
    Py_DECREF(out[0]);
    Py_DECREF(out[1]);
    return result;
fail:
    Py_XDECREF(out[0]);
    return NULL;
}

/* thrift_struct(data, at, Struct, ThriftList) -> (Struct, end) | None: corpus/thrift.py's
 * read_struct, the compact protocol decoded into the same objects. Only what reads cleanly
 * is answered here: on any error, a varint beyond 64 bits or deep nesting, None is returned
 * and the Python reader decodes the bytes (and raises its own error). */
#define THRIFT_DEPTH 64
typedef struct {
    const unsigned char *data;
    Py_ssize_t at, size;
    PyObject *struct_type, *list_type;
    int declined; /* set when the bytes are left to the Python reader */
} Thrift;

static int thrift_byte(Thrift *t, unsigned *out) {
    if (t->at >= t->size) return t->declined = 1, -1;
    *out = t->data[t->at++];
    return 0;
}

static int thrift_varint(Thrift *t, uint64_t *out) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        unsigned byte;
        if (thrift_byte(t, &byte)) return -1;
        if (shift == 63 && byte > 1) break; /* more than 64 bits */
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (byte < 0x80) {
            *out = value;
            return 0;
        }
    }
    t->declined = 1;
    return -1;
}

static int thrift_zigzag(Thrift *t, int64_t *out) {
    uint64_t raw;
    if (thrift_varint(t, &raw)) return -1;
    *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
    return 0;
}

static PyObject *thrift_read_struct(Thrift *t, int depth);

static PyObject *thrift_bytes(Thrift *t, uint64_t size) {
    if (size > (uint64_t)(t->size - t->at)) return t->declined = 1, NULL;
    PyObject *out = PyBytes_FromStringAndSize((const char *)t->data + t->at, (Py_ssize_t)size);
    t->at += (Py_ssize_t)size;
    return out;
}

static PyObject *thrift_value(Thrift *t, unsigned kind, int depth) {
    unsigned byte;
    uint64_t size;
    int64_t number;
    switch (kind) {
    case 1: case 2: /* a bool in a list: one byte */
        if (thrift_byte(t, &byte)) return NULL;
        return PyBool_FromLong(byte == 1);
    case 3:
        if (thrift_byte(t, &byte)) return NULL;
        return PyLong_FromLong((long)byte);
    case 4: case 5: case 6:
        if (thrift_zigzag(t, &number)) return NULL;
        return PyLong_FromLongLong(number);
    case 7:
        return thrift_bytes(t, 8);
    case 8:
        if (thrift_varint(t, &size)) return NULL;
        return thrift_bytes(t, size);
    case 9: case 10: {
        if (thrift_byte(t, &byte)) return NULL;
        unsigned inner = byte & 0x0f;
        size = byte >> 4;
        if (size == 15 && thrift_varint(t, &size)) return NULL;
        if (size > (uint64_t)(t->size - t->at) || depth >= THRIFT_DEPTH)
            return t->declined = 1, NULL; /* every item takes a byte at least */
        PyObject *items = PyList_New((Py_ssize_t)size);
        if (!items) return NULL;
        for (Py_ssize_t i = 0; i < (Py_ssize_t)size; i++) {
            PyObject *item = thrift_value(t, inner, depth + 1);
            if (!item) {
                Py_DECREF(items);
                return NULL;
            }
            PyList_SET_ITEM(items, i, item);
        }
        return PyObject_CallFunction(t->list_type, "IN", inner, items);
    }
    case 12:
        return thrift_read_struct(t, depth + 1);
    default:
        return t->declined = 1, NULL;
    }
}

static PyObject *thrift_read_struct(Thrift *t, int depth) {
    if (depth >= THRIFT_DEPTH) return t->declined = 1, NULL;
    PyObject *fields = PyList_New(0);
    if (!fields) return NULL;
    int64_t last = 0;
    unsigned head = 1;
    while (!thrift_byte(t, &head) && head != 0) {
        unsigned kind = head & 0x0f, delta = head >> 4;
        if (last > INT64_MAX - 15) {
            t->declined = 1;
            break;
        }
        int64_t fid = last + delta;
        if (!delta && thrift_zigzag(t, &fid)) break;
        PyObject *value = kind == 1 || kind == 2 ? PyBool_FromLong(kind == 1)
                                                 : thrift_value(t, kind, depth);
        if (!value) break;
        PyObject *field = Py_BuildValue("(LIN)", (long long)fid, kind, value);
        if (!field || PyList_Append(fields, field)) {
            Py_XDECREF(field);
            break;
        }
        Py_DECREF(field);
        last = fid;
        head = 1;
    }
    if (head != 0) { /* stopped by an error or a declined read */
        Py_DECREF(fields);
        return NULL;
    }
    PyObject *made = PyObject_CallOneArg(t->struct_type, fields);
    Py_DECREF(fields);
    return made;
}

static PyObject *thrift_struct(PyObject *self, PyObject *args) {
    Py_buffer data;
    Py_ssize_t at;
    PyObject *struct_type, *list_type;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nOO", &data, &at, &struct_type, &list_type)) return NULL;
    Thrift t = {data.buf, at, data.len, struct_type, list_type, 0};
    PyObject *result = NULL;
    if (at < 0 || at > data.len) {
        result = Py_NewRef(Py_None);
    } else {
        PyObject *made = thrift_read_struct(&t, 0);
        if (made) {
            result = Py_BuildValue("(Nn)", made, t.at);
        } else if (t.declined && !PyErr_Occurred()) {
            result = Py_NewRef(Py_None);
        }
    }
    PyBuffer_Release(&data);
    return result;
}

static inline void put_le32(unsigned char *out, uint32_t value) {
    out[0] = (unsigned char)value;
    out[1] = (unsigned char)(value >> 8);
    out[2] = (unsigned char)(value >> 16);
    out[3] = (unsigned char)(value >> 24);
}

/* pack(values) -> (data, offsets) | None: columns.Strings.pack of a list of str, the UTF-8
 * of the strings end to end and n + 1 little-endian int32 byte offsets; None when an item
 * is not a str or the bytes pass 2**31 - 1 (the Python code decides then). */
static PyObject *pack(PyObject *self, PyObject *values) {
    (void)self;
    if (!PyList_Check(values)) {
        PyErr_SetString(PyExc_TypeError, "values must be a list");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values), total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = PyList_GET_ITEM(values, i);
        Py_ssize_t size;
        if (!PyUnicode_Check(value)) Py_RETURN_NONE;
        if (!PyUnicode_AsUTF8AndSize(value, &size)) return NULL;
        if (size > INT32_MAX - total) Py_RETURN_NONE;
        total += size;
    }
    PyObject *data = PyBytes_FromStringAndSize(NULL, total);
    PyObject *offsets = PyBytes_FromStringAndSize(NULL, 4 * (n + 1));
    if (!data || !offsets) {
        Py_XDECREF(data);
        Py_XDECREF(offsets);
        return NULL;
    }
    char *out = PyBytes_AS_STRING(data);
    unsigned char *at = (unsigned char *)PyBytes_AS_STRING(offsets);
    Py_ssize_t done = 0;
    put_le32(at, 0);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t size;
        const char *utf8 = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(values, i), &size);
        memcpy(out + done, utf8, (size_t)size);
        done += size;
        put_le32(at + 4 * (i + 1), (uint32_t)done);
    }
    PyObject *result = PyTuple_Pack(2, data, offsets);
    Py_DECREF(data);
    Py_DECREF(offsets);
    return result;
}

/* CRC-32 (zlib's polynomial), the word hash of text/minhash.py (zlib.crc32 of the UTF-8). */
static uint32_t crc_table[256];

static void crc_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

static inline uint32_t crc_byte(uint32_t c, unsigned char byte) {
    return crc_table[(c ^ byte) & 0xff] ^ (c >> 8);
}

/* The running CRC of a code point's UTF-8 bytes (not a surrogate: those are no word). */
static inline uint32_t crc_point(uint32_t c, Py_UCS4 p) {
    if (p < 0x80) return crc_byte(c, (unsigned char)p);
    if (p < 0x800) {
        c = crc_byte(c, (unsigned char)(0xc0 | (p >> 6)));
    } else if (p < 0x10000) {
        c = crc_byte(c, (unsigned char)(0xe0 | (p >> 12)));
        c = crc_byte(c, (unsigned char)(0x80 | ((p >> 6) & 0x3f)));
    } else {
        c = crc_byte(c, (unsigned char)(0xf0 | (p >> 18)));
        c = crc_byte(c, (unsigned char)(0x80 | ((p >> 12) & 0x3f)));
        c = crc_byte(c, (unsigned char)(0x80 | ((p >> 6) & 0x3f)));
    }
    return crc_byte(c, (unsigned char)(0x80 | (p & 0x3f)));
}

/* `\w` of Python's re on str patterns. */
/* `\w` of Python's re: '_' or alphanumeric; ASCII, most of a text, answered without
 * CPython's four character-class calls. */
static inline int is_word(Py_UCS4 p) {
    if (p < 0x80)
        return (p >= 'a' && p <= 'z') || (p >= 'A' && p <= 'Z') || (p >= '0' && p <= '9') ||
               p == '_';
    return Py_UNICODE_ISALNUM(p);
}

/* The permutations are taken eight at a time in a loop of fixed length, which the compiler
 * turns into vector instructions; on x86-64 with glibc an AVX2 copy is also built, chosen
 * at load time when the processor has AVX2 (integer arithmetic: the same values). */
#define MINHASH_BLOCK 8
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
__attribute__((target_clones("avx2", "default")))
#endif
static void minhash_mins(const uint64_t *pa, const uint64_t *pb, Py_ssize_t perms,
                         const uint64_t *hashes, Py_ssize_t n, int shingle, uint64_t mult,
                         uint32_t *mins) {
    Py_ssize_t whole = perms - perms % MINHASH_BLOCK;
    for (Py_ssize_t i = 0; i + shingle <= n; i++) {
        uint64_t h = 0;
        for (int k = 0; k < shingle; k++) h = h * mult + hashes[i + k];
        for (Py_ssize_t p = 0; p < whole; p += MINHASH_BLOCK) {
            for (int j = 0; j < MINHASH_BLOCK; j++) {
                uint32_t v = (uint32_t)((pa[p + j] * h + pb[p + j]) >> 32);
                mins[p + j] = v < mins[p + j] ? v : mins[p + j];
            }
        }
        for (Py_ssize_t p = whole; p < perms; p++) {
            uint32_t v = (uint32_t)((pa[p] * h + pb[p]) >> 32);
            if (v < mins[p]) mins[p] = v;
        }
    }
}

/* minhash(text, a, b, shingle, mult) -> bytes | None: text/minhash.py's signature of the
 * words of a (case-folded) text, None when it has fewer than `shingle`. The words are the
 * matches of `\w+`, each hashed by CRC-32 of its UTF-8; each run of `shingle` hashes is
 * folded into one uint64 (h = h * mult + next), and for each permutation p (the
 * native-endian uint64 pairs of `a` and `b`) the smallest ((a[p] * h + b[p]) mod 2^64) >> 32
 * over all shingles is kept, as native-endian uint32. Duplicate shingles change no minimum,
 * so nothing is deduplicated. */
static PyObject *minhash(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_buffer a, b;
    int shingle;
    unsigned long long mult;
    (void)self;
    if (!PyArg_ParseTuple(args, "Uy*y*iK", &text, &a, &b, &shingle, &mult)) return NULL;
    PyObject *result = NULL;
    uint64_t *hashes = NULL;
    uint32_t *mins = NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), perms = a.len / 8, n = 0;
    if (a.len != b.len || a.len % 8 || shingle < 1) {
        PyErr_SetString(PyExc_ValueError, "minhash: bad parameters");
        goto done;
    }
    /* At most one word per two characters, plus one. */
    hashes = PyMem_Malloc((size_t)(length / 2 + 1) * sizeof(uint64_t));
    mins = PyMem_Malloc((size_t)(perms ? perms : 1) * sizeof(uint32_t));
    if (!hashes || !mins) {
        PyErr_NoMemory();
        goto done;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i < length;) {
        Py_UCS4 p = PyUnicode_READ(kind, data, i);
        if (!is_word(p)) {
            i++;
            continue;
        }
        uint32_t c = 0xffffffffu;
        for (; i < length && is_word(p = PyUnicode_READ(kind, data, i)); i++)
            c = crc_point(c, p);
        hashes[n++] = c ^ 0xffffffffu;
    }
    if (n < shingle) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    for (Py_ssize_t p = 0; p < perms; p++) mins[p] = UINT32_MAX;
    minhash_mins(a.buf, b.buf, perms, hashes, n, shingle, mult, mins);
    result = bytes_of(mins, perms * (Py_ssize_t)sizeof(uint32_t));
done:
    PyMem_Free(hashes);
    PyMem_Free(mins);
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return result;
}

static int address_of(PyObject *value, void **out) {
    unsigned long long address = PyLong_AsUnsignedLongLong(value);
    if (PyErr_Occurred()) return -1;
    if (!address) {
        PyErr_SetString(PyExc_ValueError, "null function address");
        return -1;
    }
    *out = (void *)(uintptr_t)address;
    return 0;
}

/* bind(get_text, get_unicode, char_index, loose_box, char_angle, font_size, matrix,
 * font_weight, font_info): the addresses of FPDFText_GetText, _GetUnicode,
 * _GetCharIndexFromTextIndex, _GetLooseCharBox, _GetCharAngle, _GetFontSize, _GetMatrix,
 * _GetFontWeight and _GetFontInfo. */
static PyObject *bind(PyObject *self, PyObject *args) {
    PyObject *items[9];
    void *fns[9];
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &items[0], &items[1], &items[2], &items[3],
                          &items[4], &items[5], &items[6], &items[7], &items[8]))
        return NULL;
    for (int i = 0; i < 9; i++)
        if (address_of(items[i], &fns[i])) return NULL;
    get_text = (GetTextFn)fns[0];
    get_unicode = (GetUnicodeFn)fns[1];
    char_index = (CharIndexFn)fns[2];
    loose_box = (LooseBoxFn)fns[3];
    char_angle = (CharAngleFn)fns[4];
    font_size = (FontSizeFn)fns[5];
    get_matrix = (MatrixFn)fns[6];
    font_weight = (FontWeightFn)fns[7];
    font_info = (FontInfoFn)fns[8];
    Py_RETURN_NONE;
}

/* gray_plane(pixels, width, height, lut) -> bytearray | None: images.py's `prepare` of an
 * RGBX page (4 bytes a pixel, R first, rows packed): None as soon as a pixel holds colour
 * (R, G and B not all equal), else one byte a pixel, its red channel mapped through `lut`
 * (256 bytes). One pass, where numpy took four over the page and Pillow two more. */
static PyObject *gray_plane(PyObject *self, PyObject *args) {
    Py_buffer pixels, lut;
    Py_ssize_t width, height;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nny*", &pixels, &width, &height, &lut)) return NULL;
    PyObject *result = NULL;
    if (width < 0 || height < 0 || lut.len != 256 ||
        (height && width > PY_SSIZE_T_MAX / 4 / height) || pixels.len < 4 * width * height) {
        PyErr_SetString(PyExc_ValueError, "gray_plane: bad sizes");
        goto done;
    }
    Py_ssize_t count = width * height;
    result = PyByteArray_FromStringAndSize(NULL, count);
    if (!result) goto done;
    const uint8_t *src = pixels.buf, *map = lut.buf;
    uint8_t *out = (uint8_t *)PyByteArray_AS_STRING(result);
    /* Two pixels a step: R, G, B, X from the low byte up, R^G and G^B in each pixel's low
     * 16 bits. */
    Py_ssize_t i = 0;
    for (; i + 1 < count; i += 2) {
        uint64_t pair;
        memcpy(&pair, src + 4 * i, 8);
        if ((pair ^ pair >> 8) & 0x0000ffff0000ffffull) break;
        out[i] = map[pair & 0xffu];
        out[i + 1] = map[pair >> 32 & 0xffu];
    }
    for (; i < count; i++) {
        const uint8_t *p = src + 4 * i;
        if (p[0] != p[1] || p[1] != p[2]) break;
        out[i] = map[p[0]];
    }
    if (i < count) Py_SETREF(result, Py_NewRef(Py_None));
done:
    PyBuffer_Release(&pixels);
    PyBuffer_Release(&lut);
    return result;
}

/* One row of gray values as `bits`-bit PNG pixels: whole bytes, then the last one padded. */
static inline void pack_row(const uint8_t *row, uint8_t *out, Py_ssize_t width, int bits) {
    int per = 8 / bits, shift = 8 - bits;
    Py_ssize_t whole = width / per, x = 0;
    for (Py_ssize_t b = 0; b < whole; b++) {
        unsigned value = 0;
        for (int k = 0; k < per; k++, x++) value = value << bits | row[x] >> shift;
        out[b] = (uint8_t)value;
    }
    if (x < width) {
        unsigned value = 0;
        int k = 0;
        for (; x < width; k++, x++) value = value << bits | row[x] >> shift;
        out[whole] = (uint8_t)(value << bits * (per - k));
    }
}

/* png_rows(plane, width, height, bits) -> bytes: gray_png.py's `pack_rows`, the scanlines of
 * a gray PNG at `bits` (1, 2, 4 or 8) bits a pixel: each row led by filter byte 0, each
 * pixel its value's top `bits` bits, most significant first, the last byte padded with 0. */
static PyObject *png_rows(PyObject *self, PyObject *args) {
    Py_buffer plane;
    Py_ssize_t width, height;
    int bits;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nni", &plane, &width, &height, &bits)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t per = bits ? 8 / bits : 0, stride = per ? (width + per - 1) / per + 1 : 0;
    if ((bits != 1 && bits != 2 && bits != 4 && bits != 8) || width < 0 || height < 0 ||
        (height && width > PY_SSIZE_T_MAX / 2 / height) || plane.len < width * height) {
        PyErr_SetString(PyExc_ValueError, "png_rows: bad sizes or bit depth");
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, stride * height);
    if (!result) goto done;
    const uint8_t *src = plane.buf;
    uint8_t *out = (uint8_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t y = 0; y < height; y++, out += stride) {
        out[0] = 0;
        switch (bits) {  /* a constant depth each, so each loop is unrolled */
        case 1: pack_row(src + y * width, out + 1, width, 1); break;
        case 2: pack_row(src + y * width, out + 1, width, 2); break;
        case 4: pack_row(src + y * width, out + 1, width, 4); break;
        default: memcpy(out + 1, src + y * width, (size_t)width);
        }
    }
done:
    PyBuffer_Release(&plane);
    return result;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS, "Take the PDFium text functions from their addresses."},
    {"read_text", read_text, METH_VARARGS, "Words and lines of one PDFium text page."},
    {"non_ascii", non_ascii, METH_O, "The words holding a character outside ASCII."},
    {"order_page", order_page, METH_VARARGS, "Blocks of a page's lines in reading order."},
    {"extend_document", extend_document, METH_VARARGS, "Append a page's blocks to a Document."},
    {"minhash", minhash, METH_VARARGS, "MinHash of the word shingles of a text (text/minhash.py)."},
    {"tokens", tokens, METH_VARARGS, "Normalised tokens of words (text/normalize.py)."},
    {"leaked", leaked, METH_VARARGS, "Abstract n-grams found in a body (text/leakage.py)."},
    {"kgram_index", kgram_index, METH_VARARGS, "The k-gram index of a text (text/seeds.py)."},
    {"seed_hits", seed_hits, METH_VARARGS, "First occurrences of seeds (text/seeds.py)."},
    {"runs", runs, METH_VARARGS, "Runs of consecutive indices (records.Document.select)."},
    {"symbol_bytes", symbol_bytes, METH_VARARGS, "Texts as bytes of their symbols (text/match.py)."},
    {"thrift_struct", thrift_struct, METH_VARARGS, "A compact-protocol structure (corpus/thrift.py)."},
    {"pack", pack, METH_O, "A list of str in Arrow's string layout (columns.Strings)."},
    {"box_array", box_array, METH_O, "The coordinates of a list of 4-tuples as doubles."},
    {"int_array", int_array, METH_O, "A list of ints as native int64."},
    {"pick", pick, METH_VARARGS, "The items of a list in runs of indices (Document.select)."},
    {"box_columns", box_columns, METH_VARARGS, "A row's box and page columns (run/process.py)."},
    {"gray_plane", gray_plane, METH_VARARGS, "An RGBX page as mapped gray levels, or None."},
    {"png_rows", png_rows, METH_VARARGS, "Gray levels as PNG scanlines of 1 to 8 bits."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "Compiled per-page loop of the PDFium backend.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    crc_init();
    if (!s_words) {
        s_words = PyUnicode_InternFromString("words");
        s_boxes = PyUnicode_InternFromString("boxes");
        s_sizes = PyUnicode_InternFromString("sizes");
        s_direction = PyUnicode_InternFromString("direction");
        s_group = PyUnicode_InternFromString("group");
        s_empty = PyUnicode_InternFromString("");
        if (!s_words || !s_boxes || !s_sizes || !s_direction || !s_group || !s_empty) return NULL;
    }
    return PyModule_Create(&module);
}
