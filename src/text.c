/* text.c — the reference's string helpers with Python str semantics
 * (reference §0, §1, §4 "Extract"; kernel-sites.md §2).
 *
 * Internals write into caller-sized buffers ("..._into"); the public
 * functions size a buffer, call them and hand the result over. The
 * predicates use a stack scratch buffer for short strings so that the
 * per-event tests of the extractor do not allocate. */
#include "config.h"

#include "kerndiff/text.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Small utilities                                                     */
/* ------------------------------------------------------------------ */

/* Callers may hand us NULL for a missing field; it reads as "". */
static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static char *dup_range(const char *s, size_t len)
{
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    if (len)
        memcpy(out, s, len);
    out[len] = '\0';
    return out;
}

/* a + b + c + d + e with explicit lengths, malloc'd. */
static char *concat5(const char *a, size_t na, const char *b, size_t nb, const char *c,
                     size_t nc, const char *d, size_t nd, const char *e, size_t ne)
{
    char *out = malloc(na + nb + nc + nd + ne + 1);
    if (!out)
        return NULL;
    char *p = out;
    memcpy(p, a, na), p += na;
    memcpy(p, b, nb), p += nb;
    memcpy(p, c, nc), p += nc;
    memcpy(p, d, nd), p += nd;
    memcpy(p, e, ne), p += ne;
    *p = '\0';
    return out;
}

/* A buffer on the stack for short strings, on the heap for long ones. */
typedef struct {
    char *buf;
    char local[512];
} scratch;

static char *scratch_get(scratch *sc, size_t need)
{
    sc->buf = need <= sizeof sc->local ? sc->local : malloc(need);
    return sc->buf;
}

static void scratch_release(scratch *sc)
{
    if (sc->buf && sc->buf != sc->local)
        free(sc->buf);
    sc->buf = NULL;
}

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

/* ------------------------------------------------------------------ */
/* UTF-8 and Unicode character classes                                 */
/* ------------------------------------------------------------------ */

size_t kd_utf8_decode(const char *s, size_t len, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    *cp = KD_UTF8_INVALID;
    if (len == 0)
        return 0;
    unsigned char b0 = u[0];
    if (b0 < 0x80) {
        *cp = b0;
        return 1;
    }
    size_t need;
    uint32_t v, min;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 2, v = b0 & 0x1Fu, min = 0x80;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 3, v = b0 & 0x0Fu, min = 0x800;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 4, v = b0 & 0x07u, min = 0x10000;
    } else {
        return 1;
    }
    if (len < need)
        return 1;
    for (size_t i = 1; i < need; i++) {
        if ((u[i] & 0xC0) != 0x80)
            return 1;
        v = (v << 6) | (u[i] & 0x3Fu);
    }
    /* Overlong forms are rejected so that e.g. C0 A0 never reads as a space.
     * Encoded surrogates are accepted: a lone "\ud800" escape is one
     * character to Python too. */
    if (v < min || v > 0x10FFFF)
        return 1;
    *cp = v;
    return need;
}

bool kd_utf8_input_valid(const char *s, size_t len)
{
    size_t i = 0;
    /* the ASCII fast path, 8 bytes per step: most strings end here */
    for (uint64_t w; i + 8 <= len; i += 8) {
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ull)
            break;
    }
    while (i < len && (unsigned char)s[i] < 0x80)
        i++;
    while (i < len) {
        uint32_t cp;
        size_t n = kd_utf8_decode(s + i, len - i, &cp);
        /* yajl turns a lone "\ud800".."\udbff" escape into "?", so a high
         * surrogate here came raw from the file; low ones may come from an
         * escape, which Python accepts too */
        if (cp == KD_UTF8_INVALID || (cp >= 0xD800 && cp <= 0xDBFF))
            return false;
        i += n;
    }
    return true;
}

bool kd_is_py_space(uint32_t c)
{
    /* reference §0: the str.isspace() set, which strip() and split() use. */
    if (c <= 0x20)
        return c == 0x20 || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    switch (c) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
        return true;
    default:
        return c >= 0x2000 && c <= 0x200A;
    }
}

int kd_unicode_decimal(uint32_t c)
{
    /* The code points of digit zero of every Nd block (Unicode 14.0, as in
     * Python 3.11); each block holds the ten digits 0..9 consecutively. */
    static const uint32_t zeros[] = {
        0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6,
        0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090,
        0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0,
        0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50,
        0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136,
        0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730,
        0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0,
        0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140,
        0x1E2F0, 0x1E950, 0x1FBF0,
    };
    if (c < 0x80)
        return c >= '0' && c <= '9' ? (int)(c - '0') : -1;
    for (size_t i = 1; i < sizeof zeros / sizeof zeros[0]; i++) {
        if (c < zeros[i])
            return -1;
        if (c < zeros[i] + 10)
            return (int)(c - zeros[i]);
    }
    return -1;
}

size_t kd_utf8_len(const char *s)
{
    s = or_empty(s);
    size_t len = strlen(s), pos = 0, count = 0;
    uint32_t cp;
    while (pos < len) {
        pos += kd_utf8_decode(s + pos, len - pos, &cp);
        count++;
    }
    return count;
}

size_t kd_utf8_offset(const char *s, size_t len, size_t index)
{
    size_t pos = 0;
    uint32_t cp;
    while (index > 0 && pos < len) {
        pos += kd_utf8_decode(s + pos, len - pos, &cp);
        index--;
    }
    return pos;
}

/* Number of code points in s[0..nbytes). */
static size_t cp_count(const char *s, size_t nbytes)
{
    size_t pos = 0, count = 0;
    uint32_t cp;
    while (pos < nbytes) {
        pos += kd_utf8_decode(s + pos, nbytes - pos, &cp);
        count++;
    }
    return count;
}

/* ------------------------------------------------------------------ */
/* strip / normalize_text / lower                                      */
/* ------------------------------------------------------------------ */

/* kd_is_py_space of an ASCII code point (c < 0x80). */
static inline bool ascii_py_space(unsigned char c)
{
    return c == 0x20 || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
}

/* [*begin, *end) is s without leading and trailing Unicode whitespace. */
static void strip_bounds(const char *s, size_t len, size_t *begin, size_t *end)
{
    size_t pos = 0, b = 0, e = 0;
    bool found = false;
    while (pos < len) {
        unsigned char c = (unsigned char)s[pos];
        if (c < 0x80) { /* ASCII: one byte, its own code point */
            if (!ascii_py_space(c)) {
                if (!found)
                    b = pos, found = true;
                e = pos + 1;
            }
            pos++;
            continue;
        }
        uint32_t cp;
        size_t n = kd_utf8_decode(s + pos, len - pos, &cp);
        if (!kd_is_py_space(cp)) {
            if (!found)
                b = pos, found = true;
            e = pos + n;
        }
        pos += n;
    }
    *begin = found ? b : 0;
    *end = found ? e : 0;
}

static bool has_ascii_whitespace(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
            return true;
    }
    return false;
}

/* " ".join(s.split()) for an already stripped s; dst holds >= len+1 bytes. */
static size_t collapse_whitespace_into(const char *s, size_t len, char *dst)
{
    size_t pos = 0, out = 0;
    bool pending_space = false;
    while (pos < len) {
        unsigned char c = (unsigned char)s[pos];
        if (c < 0x80) { /* ASCII: one byte, its own code point */
            if (ascii_py_space(c)) {
                pending_space = true;
            } else {
                if (pending_space && out > 0)
                    dst[out++] = ' ';
                pending_space = false;
                dst[out++] = (char)c;
            }
            pos++;
            continue;
        }
        uint32_t cp;
        size_t n = kd_utf8_decode(s + pos, len - pos, &cp);
        if (kd_is_py_space(cp)) {
            pending_space = true;
        } else {
            if (pending_space && out > 0)
                dst[out++] = ' ';
            pending_space = false;
            memcpy(dst + out, s + pos, n);
            out += n;
        }
        pos += n;
    }
    dst[out] = '\0';
    return out;
}

/* True when normalize_text(s) is s itself, decided fast for the common
 * name: ASCII only, no whitespace but single spaces, none at either end
 * (strip removes nothing and collapsing changes nothing). False sends the
 * string through the general path, which is exact for anything. */
static bool normalize_is_identity(const unsigned char *s, size_t len)
{
    if (len == 0)
        return true;
    if (s[0] == ' ' || s[len - 1] == ' ')
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (c >= 0x80)
            return false;
        /* s[i + 1] exists: the last byte is no space */
        if (c <= 0x20 && (c != ' ' || s[i + 1] == ' '))
            return false;
    }
    return true;
}

/* PC normalize_text into dst (>= len+1 bytes); returns the length.
 * reference §1: only when one of the six ASCII whitespace chars remains after
 * strip() are runs collapsed, so a lone inner U+00A0 survives. */
static size_t normalize_into(const char *s, size_t len, char *dst)
{
    if (normalize_is_identity((const unsigned char *)s, len)) {
        memcpy(dst, s, len);
        dst[len] = '\0';
        return len;
    }
    size_t b, e;
    strip_bounds(s, len, &b, &e);
    if (has_ascii_whitespace(s + b, e - b))
        return collapse_whitespace_into(s + b, e - b, dst);
    memcpy(dst, s + b, e - b);
    dst[e - b] = '\0';
    return e - b;
}

char *kd_normalize_text(const char *s)
{
    s = or_empty(s);
    size_t len = strlen(s);
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    normalize_into(s, len, out);
    return out;
}

char *kd_strip(const char *s)
{
    s = or_empty(s);
    size_t b, e;
    strip_bounds(s, strlen(s), &b, &e);
    return dup_range(s + b, e - b);
}

/* Python str.lower() as far as tests against ASCII keywords can tell, into
 * dst (>= 2*len+1 bytes). reference §0: lower() is Unicode; the only
 * non-ASCII characters whose lowercase contains ASCII are U+0130 (-> "i"
 * U+0307, two code points) and U+212A KELVIN SIGN (-> "k"). Every other
 * character stays one code point, so code point indexes stay comparable
 * with Python's. Already lowered text is unchanged. */
static size_t match_lower_into(const char *s, size_t len, char *dst)
{
    size_t pos = 0, out = 0;
    while (pos < len) {
        unsigned char c = (unsigned char)s[pos];
        if (c < 0x80) { /* ASCII: one byte, its own code point */
            dst[out++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
            pos++;
            continue;
        }
        uint32_t cp;
        size_t n = kd_utf8_decode(s + pos, len - pos, &cp);
        if (cp >= 'A' && cp <= 'Z') {
            dst[out++] = (char)(cp - 'A' + 'a');
        } else if (cp == 0x130) {
            memcpy(dst + out, "i\xCC\x87", 3);
            out += 3;
        } else if (cp == 0x212A) {
            dst[out++] = 'k';
        } else {
            memcpy(dst + out, s + pos, n);
            out += n;
        }
        pos += n;
    }
    dst[out] = '\0';
    return out;
}

size_t kd_lower_into(const char *s, size_t len, char *dst) { return match_lower_into(s, len, dst); }

char *kd_lower(const char *s)
{
    s = or_empty(s);
    size_t len = strlen(s);
    char *out = malloc(2 * len + 1);
    if (!out)
        return NULL;
    match_lower_into(s, len, out);
    return out;
}

const char *kd_normalized_lower_into(const char *s, size_t len, char *buf)
{
    size_t n = normalize_into(s, len, buf);
    char *low = buf + len + 1;
    match_lower_into(buf, n, low);
    return low;
}

/* normalize_text(s).lower() into sc; NULL on out-of-memory. */
static const char *normalized_lower(const char *s, scratch *sc)
{
    size_t len = strlen(s);
    char *buf = scratch_get(sc, 3 * len + 2);
    if (!buf)
        return NULL;
    return kd_normalized_lower_into(s, len, buf);
}

/* s.lower() (not normalized) into sc; NULL on out-of-memory. */
/* ------------------------------------------------------------------ */
/* Prefix / suffix / keyword tests                                      */
/* ------------------------------------------------------------------ */

bool kd_starts_with(const char *s, const char *prefix)
{
    s = or_empty(s);
    return has_prefix(s, strlen(s), or_empty(prefix));
}

bool kd_ends_with(const char *s, const char *suffix)
{
    s = or_empty(s);
    suffix = or_empty(suffix);
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

bool kd_contains_any(const char *text, const char *const *keywords)
{
    /* reference §1 contains_any_keyword: case-sensitive substring test. */
    if (!keywords)
        return false;
    text = or_empty(text);
    for (size_t i = 0; keywords[i]; i++) {
        if (strstr(text, keywords[i]))
            return true;
    }
    return false;
}

/* ------------------------------------------------------------------ */
/* short_name                                                           */
/* ------------------------------------------------------------------ */

char *kd_short_name(const char *s, size_t max_len)
{
    char *name = kd_normalize_text(s);
    if (!name)
        return NULL;
    size_t len = strlen(name);
    size_t chars = cp_count(name, len);
    if (chars <= max_len)
        return name;
    /* reference §0: name[:max_len-3] counts code points; a negative bound
     * (max_len < 3) counts from the end, as Python slicing does. */
    size_t keep;
    if (max_len >= 3)
        keep = max_len - 3;
    else
        keep = chars > 3 - max_len ? chars - (3 - max_len) : 0;
    size_t cut = kd_utf8_offset(name, len, keep);
    char *out = concat5(name, cut, "...", 3, "", 0, "", 0, "", 0);
    free(name);
    return out;
}

/* ------------------------------------------------------------------ */
/* Hex addresses and canonical names                                   */
/* ------------------------------------------------------------------ */

static bool is_hex_digit(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* re.sub(r"0x[0-9a-fA-F]+", "0xADDR", s) into dst (>= 2*len+1 bytes):
 * each match is >= 3 bytes and becomes 6. */
static size_t replace_hex_into(const char *s, size_t len, char *dst)
{
    size_t i = 0, out = 0;
    while (i < len) {
        if (s[i] == '0' && i + 2 < len && s[i + 1] == 'x' && is_hex_digit(s[i + 2])) {
            i += 2;
            while (i < len && is_hex_digit(s[i]))
                i++;
            memcpy(dst + out, "0xADDR", 6);
            out += 6;
        } else {
            dst[out++] = s[i++];
        }
    }
    dst[out] = '\0';
    return out;
}

char *kd_replace_hex_addr(const char *s)
{
    s = or_empty(s);
    size_t len = strlen(s);
    char *out = malloc(2 * len + 1);
    if (!out)
        return NULL;
    replace_hex_into(s, len, out);
    return out;
}

/* Whether s holds a match of 0x[0-9a-fA-F]+ (replace_hex_into changes it). */
static bool has_hex_addr(const char *s, size_t len)
{
    for (size_t i = 0; i + 2 < len; i++) {
        if (s[i] == '0' && s[i + 1] == 'x' && is_hex_digit(s[i + 2]))
            return true;
    }
    return false;
}

/* normalize_text then the 0xADDR substitution, as both canonicalizers start.
 * The normalized text goes to a scratch buffer (the stack for short names),
 * so a name costs one allocation, sized for the rewrite only when there is
 * an address to rewrite. */
static char *normalized_hex(const char *s, size_t *out_len)
{
    s = or_empty(s);
    size_t len = strlen(s);
    scratch sc;
    char *norm = scratch_get(&sc, len + 1);
    if (!norm)
        return NULL;
    size_t n = normalize_into(s, len, norm);
    char *out;
    if (has_hex_addr(norm, n)) {
        out = malloc(2 * n + 1);
        if (out)
            *out_len = replace_hex_into(norm, n, out);
    } else {
        out = malloc(n + 1);
        if (out) {
            memcpy(out, norm, n + 1);
            *out_len = n;
        }
    }
    scratch_release(&sc);
    return out;
}

/* Length to keep of a "void ...)" name: the position of the '(' balancing
 * the last ')', found scanning from the end (reference §4: the trailing space
 * before it is kept; if no '(' balances it, the name stays whole). */
static size_t void_signature_cut(const char *s, size_t len)
{
    if (!has_prefix(s, len, "void ") || s[len - 1] != ')')
        return len;
    long depth = 0;
    for (size_t i = len; i-- > 0;) {
        if (s[i] == ')') {
            depth++;
        } else if (s[i] == '(') {
            depth--;
            if (depth == 0)
                return i;
        }
    }
    return len;
}

char *kd_canonicalize_kernel_name(const char *s)
{
    size_t len = 0;
    char *name = normalized_hex(s, &len);
    if (!name)
        return NULL;
    name[void_signature_cut(name, len)] = '\0';
    return name;
}

/* ------------------------------------------------------------------ */
/* "P(L): F" scope locations                                            */
/* ------------------------------------------------------------------ */

typedef struct {
    size_t path_end;   /* P = t[0..path_end) */
    size_t line_begin; /* L = t[line_begin..line_end) */
    size_t line_end;
    size_t func_begin; /* F = t[func_begin..len) */
} scope_match;

/* re.match(r"(.+?)\((\d+)\): (.+)$", t): the first '(' at index >= 1 that
 * is followed by digits, "): " and at least one more character. '.' never
 * meets a '\n' here: every caller normalizes first, which removes them.
 * \d is Unicode-aware (kernel-sites.md §0). */
static bool match_scope_location(const char *t, size_t len, scope_match *m)
{
    for (size_t i = 1; i < len; i++) {
        if (t[i] != '(')
            continue;
        size_t j = i + 1;
        while (j < len) {
            uint32_t cp;
            size_t n = kd_utf8_decode(t + j, len - j, &cp);
            if (kd_unicode_decimal(cp) < 0)
                break;
            j += n;
        }
        if (j == i + 1 || len - j < 4 || memcmp(t + j, "): ", 3) != 0)
            continue;
        m->path_end = i;
        m->line_begin = i + 1;
        m->line_end = j;
        m->func_begin = j + 3;
        return true;
    }
    return false;
}

/* normalize_repo_relative_path of t[0..len) (a copy is made). */
static char *repo_path_of_range(const char *t, size_t len)
{
    char *path = dup_range(t, len);
    if (!path)
        return NULL;
    char *repo = kd_normalize_repo_relative_path(path);
    free(path);
    return repo;
}

char *kd_canonicalize_python_scope_name(const char *s)
{
    size_t len = 0;
    char *name = normalized_hex(s, &len);
    if (!name)
        return NULL;
    scope_match m;
    if (!match_scope_location(name, len, &m))
        return name;
    /* reference §4: f"{normrepo(path)}({line}): {func}" */
    char *repo = repo_path_of_range(name, m.path_end);
    char *out = NULL;
    if (repo)
        out = concat5(repo, strlen(repo), "(", 1, name + m.line_begin,
                      m.line_end - m.line_begin, "): ", 3, name + m.func_begin,
                      len - m.func_begin);
    free(repo);
    free(name);
    return out;
}

char *kd_normalize_source_location(const char *s)
{
    char *t = kd_normalize_text(s);
    if (!t)
        return NULL;
    size_t len = strlen(t);
    scope_match m;
    if (!match_scope_location(t, len, &m))
        return t;
    /* kernel-sites.md §2: repo(P) + ":" + L + " " + F, no hex rewriting */
    char *repo = repo_path_of_range(t, m.path_end);
    char *out = NULL;
    if (repo)
        out = concat5(repo, strlen(repo), ":", 1, t + m.line_begin,
                      m.line_end - m.line_begin, " ", 1, t + m.func_begin, len - m.func_begin);
    free(repo);
    free(t);
    return out;
}

/* ------------------------------------------------------------------ */
/* normalize_repo_relative_path                                         */
/* ------------------------------------------------------------------ */

static const char *skip_slashes(const char *s)
{
    while (*s == '/')
        s++;
    return s;
}

/* Byte offset in t of the code point that sits at byte `lower_off` of
 * lowered = lower(t). Python indexes t with an index found in t.lower(),
 * which only differ when U+0130 grew into two code points. */
static size_t t_offset_of_lower_offset(const char *t, size_t tlen, const char *lowered,
                                       size_t lower_off, size_t extra_cps)
{
    size_t index = cp_count(lowered, lower_off) + extra_cps;
    return kd_utf8_offset(t, tlen, index);
}

char *kd_normalize_repo_relative_path(const char *s)
{
    /* reference §1: markers in this order; the first one found anywhere
     * wins, so marker order beats position. */
    static const char *const markers[][2] = {
        {"python/sglang/", "python/sglang/"},
        {"sgl_kernel/", "sgl_kernel/"},
        {"vllm/", "vllm/"},
        {"python/tokenspeed/", "python/tokenspeed/"},
        {"tokenspeed/", "tokenspeed/"},
        {"tensorrt_llm/", "tensorrt_llm/"},
        {"tensorrt-llm/", "tensorrt_llm/"},
    };
    char *t = kd_normalize_text(s);
    if (!t)
        return NULL;
    size_t tlen = strlen(t);
    for (char *p = t; *p; p++) {
        if (*p == '\\')
            *p = '/';
    }
    char *lowered = malloc(2 * tlen + 1);
    if (!lowered) {
        free(t);
        return NULL;
    }
    match_lower_into(t, tlen, lowered);

    char *out = NULL;
    bool done = false;
    for (size_t k = 0; k < sizeof markers / sizeof markers[0] && !done; k++) {
        const char *hit = strstr(lowered, markers[k][0]);
        if (!hit)
            continue;
        /* suffix = t[idx + len(marker):].lstrip("/"); the final lstrip of
         * replacement + suffix is a no-op since no replacement starts with '/' */
        size_t off = t_offset_of_lower_offset(t, tlen, lowered, (size_t)(hit - lowered),
                                              strlen(markers[k][0]));
        const char *suffix = skip_slashes(t + off);
        out = concat5(markers[k][1], strlen(markers[k][1]), suffix, strlen(suffix), "", 0,
                      "", 0, "", 0);
        done = true;
    }
    if (!done) {
        const char *hit = strstr(lowered, "sglang/");
        if (hit) {
            /* ("python/" + t[idx:]).lstrip("/") */
            size_t off = t_offset_of_lower_offset(t, tlen, lowered, (size_t)(hit - lowered), 0);
            out = concat5("python/", 7, t + off, tlen - off, "", 0, "", 0, "", 0);
        } else {
            const char *rest = skip_slashes(t);
            out = dup_range(rest, strlen(rest));
        }
    }
    free(lowered);
    free(t);
    return out;
}

/* ------------------------------------------------------------------ */
/* normalize_match_text                                                 */
/* ------------------------------------------------------------------ */

char *kd_compact_match_text(const char *s)
{
    /* OH normalize_match_text: re.sub(r"[^0-9A-Za-z]+", "", nt(s)).lower().
     * Every byte of a multi-byte character is >= 0x80, so a byte filter
     * drops exactly the non-ASCII-alphanumeric characters. */
    char *t = kd_normalize_text(s);
    if (!t)
        return NULL;
    size_t out = 0;
    for (size_t i = 0; t[i]; i++) {
        char c = t[i];
        if (c >= 'A' && c <= 'Z')
            t[out++] = (char)(c - 'A' + 'a');
        else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            t[out++] = c;
    }
    t[out] = '\0';
    return t;
}

/* ------------------------------------------------------------------ */
/* PC predicates (reference §1)                                         */
/* ------------------------------------------------------------------ */

bool kd_is_trace_metadata_name(const char *name)
{
    /* str(n) in TRACE_METADATA_NAMES: exact, not normalized */
    static const char *const names[] = {"process_name", "thread_name", "process_sort_index",
                                        "thread_sort_index"};
    name = or_empty(name);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i]) == 0)
            return true;
    }
    return false;
}

bool kd_is_annotation_event(const char *name, const char *cat)
{
    static const char *const annotation[] = {"annotation", NULL};
    scratch sc_cat, sc_name;
    const char *lc = normalized_lower(or_empty(cat), &sc_cat);
    bool result = lc && kd_contains_any(lc, annotation);
    scratch_release(&sc_cat);
    if (result)
        return true;
    const char *ln = normalized_lower(or_empty(name), &sc_name);
    result = ln && kd_starts_with(ln, "## call ");
    scratch_release(&sc_name);
    return result;
}

bool kd_is_non_kernel_category_lowered(const char *lc)
{
    /* substring test, so "gpu_trace" counts too */
    static const char *const tokens[] = {"python_function", "cpu_op", "trace", NULL};
    return kd_contains_any(lc, tokens);
}

bool kd_is_non_kernel_trace_category(const char *cat)
{
    scratch sc;
    const char *lc = normalized_lower(or_empty(cat), &sc);
    bool result = lc && kd_is_non_kernel_category_lowered(lc);
    scratch_release(&sc);
    return result;
}

bool kd_looks_like_python_scope_lowered(const char *ln)
{
    static const char *const py_call[] = {".py(", NULL};
    return kd_contains_any(ln, py_call) || kd_starts_with(ln, "python/") ||
           kd_starts_with(ln, "nn.module:");
}

bool kd_looks_like_python_scope_name(const char *name)
{
    scratch sc;
    const char *ln = normalized_lower(or_empty(name), &sc);
    bool result = ln && kd_looks_like_python_scope_lowered(ln);
    scratch_release(&sc);
    return result;
}

/* ------------------------------------------------------------------ */
/* Stages                                                               */
/* ------------------------------------------------------------------ */

const char *kd_stage_name(kd_stage s)
{
    switch (s) {
    case KD_STAGE_EXTEND: return "extend";
    case KD_STAGE_DECODE: return "decode";
    default: return "all";
    }
}

const char *kd_stage_display_name(kd_stage s)
{
    /* reference §3.6 headings */
    switch (s) {
    case KD_STAGE_EXTEND: return "extend/prefill";
    case KD_STAGE_DECODE: return "decode";
    default: return "all";
    }
}

bool kd_stage_from_name(const char *name, kd_stage *out)
{
    /* PC STAGE_ORDER keys: "prefill" is the same stage as "extend" */
    static const struct {
        const char *name;
        kd_stage stage;
    } names[] = {{"extend", KD_STAGE_EXTEND},
                 {"prefill", KD_STAGE_EXTEND},
                 {"decode", KD_STAGE_DECODE},
                 {"all", KD_STAGE_ALL}};
    if (!name)
        return false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i].name) == 0) {
            if (out)
                *out = names[i].stage;
            return true;
        }
    }
    return false;
}
