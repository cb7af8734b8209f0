/* The site search's per-page text work in one C pass, for the build workers.
 *
 * Optional: setup builds it where a C compiler is; the Python in render.py and
 * site_search_terms.py stays the definition. Each function returns exactly what its
 * Python twin returns, or None for "not handled here, use Python": text this code does not
 * cover, such as an HTML entity other than the common ones or a character whose lower
 * case depends on context. tests/test_textscan.py checks both give the same results.
 *
 *   fold(html)  == render._folded_text_py(html)
 *   terms(text) == site_search_terms._terms_py(text)
 *   page(html)  == (excerpt, terms, json): what stages.page_text makes of
 *                  render.text_sections(html) in Python, the JSON as UTF-8 bytes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TERM 40
#define EXCERPT 600
#define BAIL (-1)
#define NOMEM (-2)

/* ---- buffers ----------------------------------------------------------------------- */

typedef struct {
    char *p;
    Py_ssize_t n, cap;
} bbuf; /* bytes: UTF-8 words, the terms string */

typedef struct {
    Py_UCS4 *p;
    Py_ssize_t n, cap;
} ubuf; /* code points: folded text, the joined outputs */

/* Room in `*p` (an array of `elem`-byte items with `*cap` of them) for `need` items,
 * doubling: the one growth rule of every buffer here. */
static int grow(void **p, Py_ssize_t *cap, Py_ssize_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    Py_ssize_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void *q = PyMem_Realloc(*p, (size_t)c * elem);
    if (!q)
        return NOMEM;
    *p = q;
    *cap = c;
    return 0;
}

static int bb_grow(bbuf *b, Py_ssize_t more)
{
    return grow((void **)&b->p, &b->cap, b->n + more, 1);
}

static int ub_grow(ubuf *b, Py_ssize_t more)
{
    return grow((void **)&b->p, &b->cap, b->n + more, sizeof(Py_UCS4));
}

static PyObject *ub_str(const Py_UCS4 *p, Py_ssize_t n)
{
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, p, n);
}

static inline int is_space(Py_UCS4 c)
{
    return c < 128 ? (c == ' ' || (c >= 9 && c <= 13) || (c >= 28 && c <= 31)) : Py_UNICODE_ISSPACE(c);
}

/* ---- html.unescape, for the entities a renderer writes --------------------------------- */

/* At `&` (s[i]): 1 and the character decoded, with the characters it took; 0 for a lone
 * `&` that html.unescape leaves as it is; BAIL for anything else (html.unescape knows the
 * whole HTML5 table and its quirks: entities without `;`, invalid code points). */
#define ENTITY(T)                                                                                   \
    static int entity_##T(const T *s, Py_ssize_t i, Py_ssize_t n, Py_UCS4 *out, Py_ssize_t *used)  \
    {                                                                                               \
        static const struct { const char *name; Py_UCS4 ch; } known[] = {                          \
            {"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}, {"nbsp;", 0xa0}, \
        };                                                                                          \
        if (i + 1 == n)                                                                             \
            return 0;                                                                               \
        Py_UCS4 c = s[i + 1];                                                                       \
        if (c == '\t' || c == '\n' || c == '\f' || c == ' ' || c == '<' || c == '&')                \
            return 0;                                                                               \
        if (c == '#') {                                                                             \
            Py_ssize_t j = i + 2;                                                                   \
            int hex = j < n && (s[j] == 'x' || s[j] == 'X'), digits = 0;                            \
            uint32_t v = 0;                                                                         \
            j += hex;                                                                               \
            for (; j < n && digits < 8; j++, digits++) {                                            \
                Py_UCS4 d = s[j];                                                                   \
                if (d - '0' < 10u)                                                                  \
                    v = v * (hex ? 16 : 10) + (d - '0');                                            \
                else if (hex && (d | 32) - 'a' < 6u)                                                \
                    v = v * 16 + ((d | 32) - 'a' + 10);                                             \
                else                                                                                \
                    break;                                                                          \
            }                                                                                       \
            if (!digits || j >= n || s[j] != ';')                                                   \
                return BAIL;                                                                        \
            if (!((v >= 0x20 && v < 0x7f) || (v >= 0xa0 && v < 0xd800) || (v >= 0xe000 && v < 0xfdd0) \
                  || (v >= 0xfdf0 && v < 0xfffe)))                                                  \
                return BAIL;                                                                        \
            *out = v;                                                                               \
            *used = j + 1 - i;                                                                      \
            return 1;                                                                               \
        }                                                                                           \
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {                               \
            Py_ssize_t len = (Py_ssize_t)strlen(known[k].name), j;                                  \
            if (i + 1 + len > n)                                                                    \
                continue;                                                                           \
            for (j = 0; j < len; j++)                                                               \
                if (s[i + 1 + j] != (T)(unsigned char)known[k].name[j])                             \
                    break;                                                                          \
            if (j == len) {                                                                         \
                *out = known[k].ch;                                                                 \
                *used = 1 + len;                                                                    \
                return 1;                                                                           \
            }                                                                                       \
        }                                                                                           \
        return BAIL;                                                                                \
    }

/* The character at s[*i], an entity decoded (`entity`), into *c; *i moves past it. */
#define DECODE(T)                                                                                   \
    static inline int decode_##T(const T *s, Py_ssize_t *i, Py_ssize_t n, Py_UCS4 *c)               \
    {                                                                                               \
        Py_ssize_t used = 1;                                                                        \
        *c = s[*i];                                                                                 \
        if (*c == '&') {                                                                            \
            Py_UCS4 e;                                                                              \
            int r = entity_##T(s, *i, n, &e, &used);                                                \
            if (r < 0)                                                                              \
                return r;                                                                           \
            if (r > 0)                                                                              \
                *c = e;                                                                             \
        }                                                                                           \
        *i += used;                                                                                 \
        return 0;                                                                                   \
    }

/* Appends `" ".join(html.unescape(re.sub("<[^>]+>", " ", s[i:n])).split())` to `out`. */
#define FOLD(T)                                                                                     \
    static int fold_##T(const T *s, Py_ssize_t i, Py_ssize_t n, ubuf *out)                          \
    {                                                                                               \
        if (ub_grow(out, n - i) < 0) /* never longer than its source */                             \
            return NOMEM;                                                                           \
        Py_UCS4 *o = out->p;                                                                        \
        Py_ssize_t m = out->n, first = out->n;                                                      \
        int space = 0; /* a separator is owed before the next visible character */                  \
        while (i < n) {                                                                             \
            Py_UCS4 c = s[i];                                                                       \
            if (c == '<' && i + 1 < n && s[i + 1] != '>') {                                         \
                Py_ssize_t j = i + 1;                                                               \
                while (j < n && s[j] != '>')                                                        \
                    j++;                                                                            \
                if (j < n) { /* a tag: a space */                                                   \
                    space = 1;                                                                      \
                    i = j + 1;                                                                      \
                    continue;                                                                       \
                }                                                                                   \
            }                                                                                       \
            int r = decode_##T(s, &i, n, &c);                                                       \
            if (r < 0)                                                                              \
                return r;                                                                           \
            if (is_space(c)) {                                                                      \
                space = 1;                                                                          \
                continue;                                                                           \
            }                                                                                       \
            if (space && m > first)                                                                 \
                o[m++] = ' ';                                                                       \
            space = 0;                                                                              \
            o[m++] = c;                                                                             \
        }                                                                                           \
        out->n = m;                                                                                 \
        return 0;                                                                                   \
    }

/* Appends html.unescape(s[i:n]) (a heading's id). */
#define UNESCAPE(T)                                                                                 \
    static int unescape_##T(const T *s, Py_ssize_t i, Py_ssize_t n, ubuf *out)                      \
    {                                                                                               \
        if (ub_grow(out, n - i) < 0)                                                                \
            return NOMEM;                                                                           \
        while (i < n) {                                                                             \
            Py_UCS4 c;                                                                              \
            int r = decode_##T(s, &i, n, &c);                                                       \
            if (r < 0)                                                                              \
                return r;                                                                           \
            out->p[out->n++] = c;                                                                   \
        }                                                                                           \
        return 0;                                                                                   \
    }

/* ---- sections: render.text_sections ---------------------------------------------------- */

typedef struct {
    Py_ssize_t a0, a1, h0, h1, t0, t1; /* anchor, heading, text: spans of the folded buffer */
} section_t;

typedef struct {
    section_t *p;
    Py_ssize_t n, cap;
} sections_t;

static int add_section(sections_t *v, section_t s)
{
    if (grow((void **)&v->p, &v->cap, v->n + 1, sizeof(section_t)) < 0)
        return NOMEM;
    v->p[v->n++] = s;
    return 0;
}

static inline int ascii_word(Py_UCS4 c)
{
    return c - 'a' < 26u || c - 'A' < 26u || c - '0' < 10u || c == '_';
}

/* render._HEADING_RE, `<h([1-6])\b[^>]*?\bid="([^"]*)"[^>]*>(.*?)</h\1>` (re.S), at s[i]:
 * 1 with the match's spans, 0 for no match here, BAIL where the regex could backtrack into
 * a case this code does not follow. */
#define HEADING(T)                                                                                  \
    static int heading_##T(const T *s, Py_ssize_t i, Py_ssize_t n, Py_ssize_t span[5])              \
    {                                                                                               \
        if (i + 3 > n || s[i + 1] != 'h' || s[i + 2] - '1' >= 6u)                                   \
            return 0;                                                                               \
        T level = s[i + 2];                                                                         \
        Py_ssize_t j = i + 3;                                                                       \
        if (j < n) {                                                                                \
            if (s[j] >= 128)                                                                        \
                return BAIL;                                                                        \
            if (ascii_word(s[j]))                                                                   \
                return 0;                                                                           \
        }                                                                                           \
        Py_ssize_t p = -1;                                                                          \
        for (Py_ssize_t k = j; k < n && s[k] != '>'; k++) {                                         \
            if (s[k] == 'i' && k + 3 < n && s[k + 1] == 'd' && s[k + 2] == '=' && s[k + 3] == '"') { \
                if (s[k - 1] >= 128)                                                                \
                    return BAIL;                                                                    \
                if (!ascii_word(s[k - 1])) {                                                        \
                    p = k;                                                                          \
                    break;                                                                          \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
        if (p < 0) {                                                                                \
            Py_ssize_t k = j;                                                                       \
            while (k < n && s[k] != '>')                                                            \
                k++;                                                                                \
            return k < n ? 0 : BAIL; /* no `>` at all: leave the regex's search to Python */      \
        }                                                                                           \
        Py_ssize_t q = p + 4;                                                                       \
        while (q < n && s[q] != '"')                                                                \
            q++;                                                                                    \
        Py_ssize_t r = q + 1;                                                                       \
        while (r < n && s[r] != '>')                                                                \
            r++;                                                                                    \
        if (q >= n || r >= n)                                                                       \
            return BAIL;                                                                            \
        for (Py_ssize_t e = r + 1; e + 5 <= n; e++) {                                               \
            if (s[e] == '<' && s[e + 1] == '/' && s[e + 2] == 'h' && s[e + 3] == level && s[e + 4] == '>') { \
                span[0] = p + 4; span[1] = q; span[2] = r + 1; span[3] = e; span[4] = e + 5;        \
                return 1;                                                                           \
            }                                                                                       \
        }                                                                                           \
        return BAIL;                                                                                \
    }

#define SECTIONS(T)                                                                                 \
    static int sections_##T(const T *s, Py_ssize_t n, ubuf *txt, sections_t *out)                   \
    {                                                                                               \
        Py_ssize_t pos = 0, i = 0, span[5];                                                         \
        section_t cur = {0, 0, 0, 0, 0, 0};                                                         \
        int r;                                                                                      \
        for (;;) {                                                                                  \
            int found = 0;                                                                          \
            for (; i < n; i++) {                                                                    \
                if (s[i] != '<')                                                                    \
                    continue;                                                                       \
                if ((r = heading_##T(s, i, n, span)) < 0)                                           \
                    return r;                                                                       \
                if (r) {                                                                            \
                    found = 1;                                                                      \
                    break;                                                                          \
                }                                                                                   \
            }                                                                                       \
            cur.t0 = txt->n;                                                                        \
            if ((r = fold_##T(s, pos, found ? i : n, txt)) < 0)                                     \
                return r;                                                                           \
            cur.t1 = txt->n;                                                                        \
            if ((cur.t1 > cur.t0 || cur.h1 > cur.h0) && (r = add_section(out, cur)) < 0)            \
                return r;                                                                           \
            if (!found)                                                                             \
                return 0;                                                                           \
            cur.a0 = txt->n;                                                                        \
            if ((r = unescape_##T(s, span[0], span[1], txt)) < 0)                                   \
                return r;                                                                           \
            cur.a1 = cur.h0 = txt->n;                                                               \
            if ((r = fold_##T(s, span[2], span[3], txt)) < 0)                                       \
                return r;                                                                           \
            cur.h1 = txt->n;                                                                        \
            pos = i = span[4];                                                                      \
        }                                                                                           \
    }

#define KIND(T) ENTITY(T) DECODE(T) FOLD(T) UNESCAPE(T) HEADING(T) SECTIONS(T)
KIND(Py_UCS1)
KIND(Py_UCS2)
KIND(Py_UCS4)

/* ---- terms: site_search_terms._terms ---------------------------------------------------- */

typedef struct {
    uint64_t key;
    const char *s;
    Py_ssize_t len, count;
} term_t;

static inline int term_less(const term_t *x, const term_t *y)
{
    if (x->key != y->key)
        return x->key < y->key;
    if (x->len <= 8 || y->len <= 8)
        return x->len < y->len;
    Py_ssize_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s + 8, y->s + 8, (size_t)(n - 8));
    return c ? c < 0 : x->len < y->len;
}

/* Insertion sort under 16, else quicksort on a median of three (a page has ~300 terms). */
static void sort_terms(term_t *a, Py_ssize_t n)
{
    while (n > 16) {
        term_t *m = a + n / 2, *z = a + n - 1, t;
        if (term_less(m, a)) { t = *m; *m = *a; *a = t; }
        if (term_less(z, m)) { t = *z; *z = *m; *m = t; if (term_less(m, a)) { t = *m; *m = *a; *a = t; } }
        term_t pivot = *m;
        Py_ssize_t i = 0, j = n - 1;
        for (;;) {
            while (term_less(&a[i], &pivot)) i++;
            while (term_less(&pivot, &a[j])) j--;
            if (i >= j) break;
            t = a[i]; a[i] = a[j]; a[j] = t;
            i++; j--;
        }
        if (j + 1 < n - j - 1) { sort_terms(a, j + 1); a += j + 1; n -= j + 1; }
        else { sort_terms(a + j + 1, n - j - 1); n = j + 1; }
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        term_t t = a[i];
        Py_ssize_t j = i;
        while (j > 0 && term_less(&t, &a[j - 1])) { a[j] = a[j - 1]; j--; }
        a[j] = t;
    }
}

static inline void put_utf8(char *o, Py_ssize_t *m, Py_UCS4 c)
{
    if (c < 0x80) {
        o[(*m)++] = (char)c;
    } else if (c < 0x800) {
        o[(*m)++] = (char)(0xc0 | (c >> 6));
        o[(*m)++] = (char)(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        o[(*m)++] = (char)(0xe0 | (c >> 12));
        o[(*m)++] = (char)(0x80 | ((c >> 6) & 0x3f));
        o[(*m)++] = (char)(0x80 | (c & 0x3f));
    } else {
        o[(*m)++] = (char)(0xf0 | (c >> 18));
        o[(*m)++] = (char)(0x80 | ((c >> 12) & 0x3f));
        o[(*m)++] = (char)(0x80 | ((c >> 6) & 0x3f));
        o[(*m)++] = (char)(0x80 | (c & 0x3f));
    }
}

/* The words of s[0:n], appended to `ws`: their UTF-8 (its byte order is code point order)
 * in one buffer, and per word its place, length in characters, hash and sort key, made
 * as it is read. Python: `_WORD.findall(text.lower())`, `[^\W_]+` being runs of
 * str.isalnum characters (the ASCII path in `words` gives the same for ASCII letters and
 * digits). Lower case is one character to one here except for U+0130 (two) and capital
 * sigma (depends on its neighbours): those are left to Python (BAIL). */
typedef struct {
    uint64_t key;  /* the first 8 bytes, big-endian, 0-padded: orders like the word */
    uint64_t hash; /* FNV-1a */
    Py_ssize_t at, len, chars;
} word_t;

typedef struct {
    bbuf w;
    word_t *v;
    Py_ssize_t nw, cap;
    int ascii;
} words_t;

/* ASCII letters and digits lower-cased; 0 for every other ASCII character. */
static const unsigned char ASCII_WORD[128] = {
    ['0'] = '0', ['1'] = '1', ['2'] = '2', ['3'] = '3', ['4'] = '4', ['5'] = '5', ['6'] = '6', ['7'] = '7', ['8'] = '8', ['9'] = '9',
    ['A'] = 'a', ['B'] = 'b', ['C'] = 'c', ['D'] = 'd', ['E'] = 'e', ['F'] = 'f', ['G'] = 'g', ['H'] = 'h', ['I'] = 'i',
    ['J'] = 'j', ['K'] = 'k', ['L'] = 'l', ['M'] = 'm', ['N'] = 'n', ['O'] = 'o', ['P'] = 'p', ['Q'] = 'q', ['R'] = 'r',
    ['S'] = 's', ['T'] = 't', ['U'] = 'u', ['V'] = 'v', ['W'] = 'w', ['X'] = 'x', ['Y'] = 'y', ['Z'] = 'z',
    ['a'] = 'a', ['b'] = 'b', ['c'] = 'c', ['d'] = 'd', ['e'] = 'e', ['f'] = 'f', ['g'] = 'g', ['h'] = 'h', ['i'] = 'i',
    ['j'] = 'j', ['k'] = 'k', ['l'] = 'l', ['m'] = 'm', ['n'] = 'n', ['o'] = 'o', ['p'] = 'p', ['q'] = 'q', ['r'] = 'r',
    ['s'] = 's', ['t'] = 't', ['u'] = 'u', ['v'] = 'v', ['w'] = 'w', ['x'] = 'x', ['y'] = 'y', ['z'] = 'z',
};

static int add_words(words_t *ws, const Py_UCS4 *s, Py_ssize_t n)
{
    if (bb_grow(&ws->w, 4 * n) < 0)
        return NOMEM;
    char *o = ws->w.p;
    Py_ssize_t m = ws->w.n, start = -1, chars = 0;
    uint64_t h = 0, key = 0;
    for (Py_ssize_t i = 0; i <= n; i++) {
        Py_UCS4 c = i < n ? s[i] : ' ';
        Py_ssize_t before = m;
        if (c < 128) {
            if (!(c = ASCII_WORD[c]))
                goto sep;
            o[m++] = (char)c;
        } else {
            if (c == 0x130 || c == 0x3a3)
                return BAIL;
            c = Py_UNICODE_TOLOWER(c);
            if (!Py_UNICODE_ISALNUM(c))
                goto sep;
            put_utf8(o, &m, c);
            ws->ascii = 0;
        }
        if (start < 0) {
            start = before;
            chars = 0;
            h = 14695981039346656037ULL;
            key = 0;
        }
        for (Py_ssize_t k = before; k < m; k++) {
            unsigned char byte = (unsigned char)o[k];
            h = (h ^ byte) * 1099511628211ULL;
            if (k - start < 8)
                key |= (uint64_t)byte << (56 - 8 * (k - start));
        }
        chars++;
        continue;
    sep:
        if (start >= 0) {
            if (grow((void **)&ws->v, &ws->cap, ws->nw + 1, sizeof(word_t)) < 0)
                return NOMEM;
            ws->v[ws->nw++] = (word_t){key, h, start, m - start, chars};
            start = -1;
        }
    }
    ws->w.n = m;
    return 0;
}

static Py_UCS4 first_char(const char *s)
{
    unsigned char c = (unsigned char)s[0];
    if (c < 0x80)
        return c;
    if (c < 0xe0)
        return ((Py_UCS4)(c & 0x1f) << 6) | (s[1] & 0x3f);
    if (c < 0xf0)
        return ((Py_UCS4)(c & 0x0f) << 12) | ((Py_UCS4)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
    return ((Py_UCS4)(c & 0x07) << 18) | ((Py_UCS4)(s[1] & 0x3f) << 12) | ((Py_UCS4)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
}

static int put_str(bbuf *b, const char *s, Py_ssize_t n)
{
    if (bb_grow(b, n) < 0)
        return NOMEM;
    memcpy(b->p + b->n, s, (size_t)n);
    b->n += n;
    return 0;
}

static int put_int(bbuf *b, Py_ssize_t v)
{
    char tmp[24];
    int k = 0;
    do { tmp[k++] = (char)('0' + v % 10); v /= 10; } while (v);
    if (bb_grow(b, k) < 0)
        return NOMEM;
    while (k)
        b->p[b->n++] = tmp[--k];
    return 0;
}

/* The terms string of the words in `ws` (see `_terms`): a new str, or NULL with an error. */
static PyObject *terms_of(words_t *ws)
{
    PyObject *res = NULL;
    bbuf out = {0};
    Py_ssize_t size = 64;
    while (size < 2 * ws->nw)
        size *= 2;
    /* Open addressing over indexes into `table`, the unique terms in order of arrival. */
    int32_t *slots = PyMem_Malloc((size_t)size * sizeof(int32_t));
    term_t *table = PyMem_Malloc((size_t)(ws->nw + 1) * sizeof(term_t));
    uint64_t *hashes = PyMem_Malloc((size_t)(ws->nw + 1) * sizeof(uint64_t));
    if (!slots || !table || !hashes) {
        PyErr_NoMemory();
        goto done;
    }
    memset(slots, 0xff, (size_t)size * sizeof(int32_t));
    const char *base = ws->w.p;
    Py_ssize_t u = 0;
    for (Py_ssize_t w = 0; w < ws->nw; w++) {
        const word_t *x = &ws->v[w];
        if (x->chars > MAX_TERM)
            continue;
        Py_ssize_t slot = (Py_ssize_t)(x->hash & (uint64_t)(size - 1));
        for (;;) {
            int32_t k = slots[slot];
            if (k < 0) {
                slots[slot] = (int32_t)u;
                hashes[u] = x->hash;
                table[u++] = (term_t){x->key, base + x->at, x->len, 1};
                break;
            }
            if (hashes[k] == x->hash && table[k].len == x->len && memcmp(table[k].s, base + x->at, (size_t)x->len) == 0) {
                table[k].count++;
                break;
            }
            slot = (slot + 1) & (size - 1);
        }
    }
    sort_terms(table, u);
    if (u == 0) {
        res = PyUnicode_FromString("0");
        goto done;
    }
    if (put_int(&out, u) < 0)
        goto nomem;
    /* Per first character: RS key GS terms (space-separated) `:` counts. */
    for (Py_ssize_t a = 0; a < u;) {
        Py_UCS4 first = first_char(table[a].s);
        Py_ssize_t b = a, bytes = 16;
        while (b < u && first_char(table[b].s) == first)
            bytes += table[b++].len + 1;
        if (bb_grow(&out, bytes) < 0)
            goto nomem;
        out.p[out.n++] = 0x1e;
        if (first < 128) {
            out.p[out.n++] = (char)first;
        } else {
            char key[16];
            int k = snprintf(key, sizeof key, "u%04x", (unsigned)first);
            memcpy(out.p + out.n, key, (size_t)k);
            out.n += k;
        }
        out.p[out.n++] = 0x1d;
        for (Py_ssize_t k = a; k < b; k++) {
            if (k > a)
                out.p[out.n++] = ' ';
            memcpy(out.p + out.n, table[k].s, (size_t)table[k].len);
            out.n += table[k].len;
        }
        for (Py_ssize_t k = a; k < b; k++) {
            if (put_str(&out, k > a ? " " : ":", 1) < 0 || put_int(&out, table[k].count) < 0)
                goto nomem;
        }
        a = b;
    }
    if (ws->ascii) {
        res = PyUnicode_New(out.n, 127);
        if (res)
            memcpy(PyUnicode_DATA(res), out.p, (size_t)out.n);
    } else {
        res = PyUnicode_DecodeUTF8(out.p, out.n, NULL);
    }
    goto done;
nomem:
    PyErr_NoMemory();
done:
    PyMem_Free(slots);
    PyMem_Free(table);
    PyMem_Free(hashes);
    PyMem_Free(out.p);
    return res;
}

static void words_free(words_t *ws)
{
    PyMem_Free(ws->w.p);
    PyMem_Free(ws->v);
}

/* ---- JSON: site_search_terms.sections_json ------------------------------------------------ */

/* json.dumps(ensure_ascii=False) of one string, then script_safe (`</` as `<\/`, U+2028/9
 * escaped), encoded as UTF-8. A lone surrogate (which UTF-8 cannot hold) is BAIL. */
static int json_str(bbuf *o, const Py_UCS4 *s, Py_ssize_t n)
{
    if (bb_grow(o, 6 * n + 2) < 0)
        return NOMEM;
    char *p = o->p;
    Py_ssize_t m = o->n;
    p[m++] = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = s[i];
        if (c < 128) {
            if (c >= 0x20 && c != '"' && c != '\\') {
                if (c == '/' && p[m - 1] == '<')
                    p[m++] = '\\';
                p[m++] = (char)c;
                continue;
            }
        } else if (c != 0x2028 && c != 0x2029) {
            if (c - 0xd800 < 0x800u)
                return BAIL;
            put_utf8(p, &m, c);
            continue;
        }
        p[m++] = '\\';
        switch (c) {
        case '"': p[m++] = '"'; break;
        case '\\': p[m++] = '\\'; break;
        case '\n': p[m++] = 'n'; break;
        case '\r': p[m++] = 'r'; break;
        case '\t': p[m++] = 't'; break;
        case '\b': p[m++] = 'b'; break;
        case '\f': p[m++] = 'f'; break;
        default: {
            static const char hex[] = "0123456789abcdef";
            p[m++] = 'u';
            p[m++] = hex[(c >> 12) & 15];
            p[m++] = hex[(c >> 8) & 15];
            p[m++] = hex[(c >> 4) & 15];
            p[m++] = hex[c & 15];
        }
        }
    }
    p[m++] = '"';
    o->n = m;
    return 0;
}

/* ---- the module's functions ------------------------------------------------------------ */

static int str_arg(PyObject *arg, const char *fn)
{
    if (PyUnicode_Check(arg))
        return 0;
    PyErr_Format(PyExc_TypeError, "%s() takes a str", fn);
    return -1;
}

/* fn_Py_UCS1/2/4 for the width of `kind`, on the string's characters. */
#define BY_KIND(kind, fn, data, ...)                                                                \
    ((kind) == PyUnicode_1BYTE_KIND   ? fn##_Py_UCS1((const Py_UCS1 *)(data), __VA_ARGS__)          \
     : (kind) == PyUnicode_2BYTE_KIND ? fn##_Py_UCS2((const Py_UCS2 *)(data), __VA_ARGS__)          \
                                      : fn##_Py_UCS4((const Py_UCS4 *)(data), __VA_ARGS__))

static PyObject *fold(PyObject *self, PyObject *arg)
{
    if (str_arg(arg, "fold") < 0)
        return NULL;
    int kind = PyUnicode_KIND(arg), r;
    const void *data = PyUnicode_DATA(arg);
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    ubuf out = {0};
    r = BY_KIND(kind, fold, data, 0, n, &out);
    PyObject *res = r == BAIL ? Py_NewRef(Py_None) : r == NOMEM ? PyErr_NoMemory() : ub_str(out.p, out.n);
    PyMem_Free(out.p);
    return res;
}

static PyObject *terms(PyObject *self, PyObject *arg)
{
    if (str_arg(arg, "terms") < 0)
        return NULL;
    Py_UCS4 *text = PyUnicode_AsUCS4Copy(arg);
    if (!text)
        return NULL;
    words_t ws = {.ascii = 1};
    int r = add_words(&ws, text, PyUnicode_GET_LENGTH(arg));
    PyObject *res = r == BAIL ? Py_NewRef(Py_None) : r == NOMEM ? PyErr_NoMemory() : terms_of(&ws);
    PyMem_Free(text);
    words_free(&ws);
    return res;
}

static PyObject *page(PyObject *self, PyObject *arg)
{
    if (str_arg(arg, "page") < 0)
        return NULL;
    int kind = PyUnicode_KIND(arg), r;
    const void *data = PyUnicode_DATA(arg);
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    ubuf txt = {0}, out = {0};
    bbuf js = {0};
    sections_t secs = {0};
    words_t ws = {.ascii = 1};
    PyObject *excerpt = NULL, *terms_str = NULL, *json = NULL, *res = NULL;

    r = BY_KIND(kind, sections, data, n, &txt, &secs);
    if (r < 0)
        goto out;
    const Py_UCS4 *t = txt.p;

    /* excerpt: headings and texts joined by spaces, cut at EXCERPT characters */
    if ((r = ub_grow(&out, txt.n + 2 * secs.n + 1)) < 0)
        goto out;
    for (Py_ssize_t k = 0; k < secs.n && out.n < EXCERPT; k++) {
        section_t *c = &secs.p[k];
        Py_ssize_t parts[2][2] = {{c->h0, c->h1}, {c->t0, c->t1}};
        for (int j = 0; j < 2; j++) {
            if (parts[j][1] == parts[j][0])
                continue;
            if (out.n)
                out.p[out.n++] = ' ';
            memcpy(out.p + out.n, t + parts[j][0], (size_t)(parts[j][1] - parts[j][0]) * sizeof(Py_UCS4));
            out.n += parts[j][1] - parts[j][0];
        }
    }
    if (!(excerpt = ub_str(out.p, out.n < EXCERPT ? out.n : EXCERPT)))
        goto out;

    /* terms of the headings and texts */
    for (Py_ssize_t k = 0; k < secs.n; k++) {
        if ((r = add_words(&ws, t + secs.p[k].h0, secs.p[k].h1 - secs.p[k].h0)) < 0
            || (r = add_words(&ws, t + secs.p[k].t0, secs.p[k].t1 - secs.p[k].t0)) < 0)
            goto out;
    }
    if (!(terms_str = terms_of(&ws)))
        goto out;

    /* json: [[anchor, heading, text], ...] as UTF-8, "[]" without sections */
    if ((r = bb_grow(&js, 2)) < 0)
        goto out;
    js.p[js.n++] = '[';
    for (Py_ssize_t k = 0; k < secs.n; k++) {
        section_t *c = &secs.p[k];
        if ((r = bb_grow(&js, 2)) < 0)
            goto out;
        if (k)
            js.p[js.n++] = ',';
        js.p[js.n++] = '[';
        if ((r = json_str(&js, t + c->a0, c->a1 - c->a0)) < 0 || (r = bb_grow(&js, 1)) < 0)
            goto out;
        js.p[js.n++] = ',';
        if ((r = json_str(&js, t + c->h0, c->h1 - c->h0)) < 0 || (r = bb_grow(&js, 1)) < 0)
            goto out;
        js.p[js.n++] = ',';
        if ((r = json_str(&js, t + c->t0, c->t1 - c->t0)) < 0 || (r = bb_grow(&js, 1)) < 0)
            goto out;
        js.p[js.n++] = ']';
    }
    if ((r = bb_grow(&js, 1)) < 0)
        goto out;
    js.p[js.n++] = ']';
    if (!(json = PyBytes_FromStringAndSize(js.p, js.n)))
        goto out;
    res = PyTuple_Pack(3, excerpt, terms_str, json);
out:
    if (r == BAIL && !PyErr_Occurred())
        res = Py_NewRef(Py_None);
    else if (r == NOMEM)
        res = PyErr_NoMemory();
    Py_XDECREF(excerpt);
    Py_XDECREF(terms_str);
    Py_XDECREF(json);
    PyMem_Free(txt.p);
    PyMem_Free(out.p);
    PyMem_Free(js.p);
    PyMem_Free(secs.p);
    words_free(&ws);
    return res;
}

static PyMethodDef methods[] = {
    {"fold", fold, METH_O, "render._folded_text_py(html), or None: not handled here."},
    {"terms", terms, METH_O, "site_search_terms._terms_py(text), or None: not handled here."},
    {"page", page, METH_O, "(excerpt, terms, sections JSON as UTF-8) of a rendered body, or None: not handled here."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_textscan", NULL, 0, methods};

PyMODINIT_FUNC PyInit__textscan(void)
{
    return PyModule_Create(&module);
}
