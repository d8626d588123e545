/* rules_file.c — profiles from rules files (rules_file.h).
 *
 * Two phases. Reading: libinih parses the file's bytes (held in memory, for
 * the hash) through ini_parse_stream and a reader of our own that hands it
 * one line at a time. The reader counts the lines, so when inih calls the
 * handler (always for the line it was just given) the line number is the
 * reader's; inih 55 as Debian builds it has no INI_HANDLER_LINENO (a
 * compile-time switch of the library, not of its users). The reader also
 * follows inih's reading of each line (comment, continuation, [section],
 * NAME = VALUE) to see what the handler never sees: a section's header (a
 * duplicate, an unknown or empty section), a line too long for inih's
 * buffer, a line inih cannot read (reported with a message of our own). The
 * handler checks each entry on its own (keys, kinds, regexes, match rules)
 * and collects them. Building: the base's categories and steps, copied, the
 * file's categories applied in file order, the steps ordered, everything in
 * memory the kd_rules_owned owns. Nothing here is global or mutable. */
#include "config.h"

#include "kerndiff/rules_file.h"

#include <errno.h>
#include <ini.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kerndiff/text.h"

#define RULES_MAX_BYTES (1u << 20) /* a rules file is small: a trace by mistake stops here */
#define INIH_MAX_SECTION 50        /* inih keeps a section's name in 50 bytes (49 and the NUL) */
#define WRAP_COLUMN 96             /* kd_rules_write_ini's lines, well under inih's 200 bytes */

/* A compiled regex of a profile from a file, with the lines it came from
 * (kd_rules_write_ini writes them back). The regex_t comes first: the step's
 * `regex` points at the struct, which is a pointer to its regex_t. */
typedef struct {
    regex_t re;
    char **patterns;
    size_t n_patterns;
} rules_regex;

struct kd_rules_owned {
    kd_rules rules;
    void **allocs; /* everything below rules is in here, freed with it */
    size_t n_allocs, cap_allocs;
    rules_regex **regexes; /* one per step with regex lines (in allocs) */
    size_t n_regexes;
};

/* ---- small containers ------------------------------------------------------------ */

typedef struct {
    char **v;
    size_t n, cap;
} strvec;

/* takes s (freed when it cannot be kept); false on OOM */
static bool sv_push(strvec *s, char *str)
{
    if (!str)
        return false;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            free(str);
            return false;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = str;
    return true;
}

static bool sv_has(const strvec *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return true;
    return false;
}

/* a copy of x at the end unless s has it already; false on OOM */
static bool sv_add_unique(strvec *s, const char *x)
{
    return sv_has(s, x) || sv_push(s, strdup(x));
}

static void sv_clear(strvec *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

static void sv_free(strvec *s)
{
    sv_clear(s);
    free(s->v);
    s->v = NULL;
    s->cap = 0;
}

/* p, now owned by o (freed when it cannot be kept); NULL on OOM */
static void *own(kd_rules_owned *o, void *p)
{
    if (!p)
        return NULL;
    if (o->n_allocs == o->cap_allocs) {
        size_t cap = o->cap_allocs ? 2 * o->cap_allocs : 32;
        void **a = realloc(o->allocs, cap * sizeof *a);
        if (!a) {
            free(p);
            return NULL;
        }
        o->allocs = a;
        o->cap_allocs = cap;
    }
    o->allocs[o->n_allocs++] = p;
    return p;
}

static char *own_strdup(kd_rules_owned *o, const char *s) { return own(o, strdup(s)); }

/* a NULL-terminated copy of s's strings, owned by o */
static const char *const *own_list(kd_rules_owned *o, const strvec *s)
{
    char **l = own(o, calloc(s->n + 1, sizeof *l));
    for (size_t i = 0; l && i < s->n; i++)
        if (!(l[i] = own_strdup(o, s->v[i])))
            return NULL;
    return (const char *const *)l;
}

static bool is_sp(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* s[*b..*e) without the white space at both ends */
static void trim(const char *s, size_t *b, size_t *e)
{
    while (*b < *e && is_sp(s[*b]))
        (*b)++;
    while (*e > *b && is_sp(s[*e - 1]))
        (*e)--;
}

/* ---- reading: the file's entries ------------------------------------------------- */

typedef enum { SEC_NONE, SEC_RULES, SEC_ORDER, SEC_MATCH, SEC_CATEGORY } sec_kind;

static const char *const kind_names[KD_CAT_COUNT] = {"compute", "communication", "memory", "elementwise",
                                                     "other"};

/* The tiers of a category: a category may have several steps of each
 * strength (the default profile has two of compute); the keys strong,
 * strong2, strong3... and weak, weak2... name them, and regex, regex2... go
 * with strong, strong2... ([order]: CAT or CAT:strong, CAT:strong2, CAT:weak,
 * CAT:weak2...). */
#define MAX_TIER 99

/* KEY or KEYn (n from 1 to MAX_TIER, KEY1 the same as KEY): n, or 0 when
 * name is not KEY[n] */
static int tier_of(const char *name, const char *key)
{
    size_t k = strlen(key);
    if (strncmp(name, key, k) != 0)
        return 0;
    const char *d = name + k;
    if (!d[0])
        return 1;
    if (d[0] < '1' || d[0] > '9')
        return 0;
    if (!d[1])
        return d[0] - '0';
    if (d[1] < '0' || d[1] > '9' || d[2])
        return 0;
    return (d[0] - '0') * 10 + (d[1] - '0');
}

/* a step's name in [order]: CAT, CAT:weak, CAT:strongN, CAT:weakN */
static void step_name(char *buf, size_t size, const char *cat, bool weak, int nth)
{
    if (nth == 1)
        snprintf(buf, size, "%s%s", cat, weak ? ":weak" : "");
    else
        snprintf(buf, size, "%s:%s%d", cat, weak ? "weak" : "strong", nth);
}

/* a step of a [category NAME] section: its keywords and regex lines */
typedef struct {
    bool weak;
    int nth;
    strvec kw, rx;
    int rx_line; /* of its first regex line */
} file_step;

/* a [category NAME] section of the file */
typedef struct {
    char *name;
    int line; /* of its header */
    bool has_kind;
    kd_category kind;
    int kind_line;
    bool has_replace, replace;
    file_step *steps;
    size_t n_steps, cap_steps;
} file_cat;

/* an item of [order] steps */
typedef struct {
    char *name; /* the category */
    bool weak;
    int nth;
    int line;
} order_item;

typedef struct {
    const char *path;
    const char *data; /* the file's bytes */
    size_t len, pos;
    int line;         /* the lines handed to inih: the line inih is reading */
    const char *cur;  /* that line, as in the file (for [match]) */
    size_t cur_len;
    bool prev_name;   /* inih's prev_name is set: an indented line continues a value */
    /* the section being read */
    sec_kind sec;
    char sec_raw[INIH_MAX_SECTION]; /* its name as inih keeps it */
    size_t cat;                     /* SEC_CATEGORY: its index in cats */
    bool seen_rules, seen_order, seen_match;
    /* [rules] */
    char *base;
    int base_line;
    char *name;
    /* [category NAME], in file order */
    file_cat *cats;
    size_t n_cats, cap_cats;
    /* [order] */
    bool has_order;
    int order_line;
    order_item *order;
    size_t n_order, cap_order;
    /* [match] */
    strvec match;
    /* the first error */
    kd_status st;
    int err_line;
    char msg[768];
} parse;

__attribute__((format(printf, 3, 4))) static void fail_at(parse *p, int line, const char *fmt, ...)
{
    if (p->st)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
    p->st = KD_EINPUT;
    p->err_line = line;
}

static void fail_oom(parse *p)
{
    if (!p->st) {
        p->st = KD_ENOMEM;
        p->err_line = p->line;
        snprintf(p->msg, sizeof p->msg, "out of memory");
    }
}

static bool valid_category_name(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

/* A [section] header at the current line: name[0..len) is what is between
 * the brackets (inih's section, untrimmed). */
static void start_section(parse *p, const char *name, size_t len)
{
    p->sec = SEC_NONE;
    p->sec_raw[0] = '\0';
    if (len >= INIH_MAX_SECTION) {
        fail_at(p, p->line, "section name longer than %d bytes", INIH_MAX_SECTION - 1);
        return;
    }
    memcpy(p->sec_raw, name, len);
    p->sec_raw[len] = '\0';
    size_t b = 0, e = len;
    trim(name, &b, &e);
    char s[INIH_MAX_SECTION];
    memcpy(s, name + b, e - b);
    s[e - b] = '\0';
    if (strcmp(s, "rules") == 0 || strcmp(s, "order") == 0 || strcmp(s, "match") == 0) {
        bool *seen = s[0] == 'r' ? &p->seen_rules : s[0] == 'o' ? &p->seen_order : &p->seen_match;
        if (*seen) {
            fail_at(p, p->line, "duplicate section [%s]", s);
            return;
        }
        *seen = true;
        p->sec = s[0] == 'r' ? SEC_RULES : s[0] == 'o' ? SEC_ORDER : SEC_MATCH;
        if (p->sec == SEC_ORDER) {
            p->has_order = true;
            p->order_line = p->line;
        }
        return;
    }
    if (strncmp(s, "category", 8) != 0 || (s[8] && !is_sp(s[8]))) {
        fail_at(p, p->line, "unknown section [%s] (rules, category NAME, order or match)", s);
        return;
    }
    size_t nb = 8, ne = strlen(s);
    trim(s, &nb, &ne);
    s[ne] = '\0';
    const char *cname = s + nb;
    if (!*cname) {
        fail_at(p, p->line, "section [category] without a name: [category NAME]");
        return;
    }
    if (!valid_category_name(cname)) {
        fail_at(p, p->line, "bad category name '%s' (a-z, 0-9, '_', '-', '.')", cname);
        return;
    }
    for (size_t i = 0; i < p->n_cats; i++)
        if (strcmp(p->cats[i].name, cname) == 0) {
            fail_at(p, p->line, "duplicate section [category %s] (first at line %d)", cname, p->cats[i].line);
            return;
        }
    if (p->n_cats == p->cap_cats) {
        size_t cap = p->cap_cats ? 2 * p->cap_cats : 8;
        file_cat *c = realloc(p->cats, cap * sizeof *c);
        if (!c) {
            fail_oom(p);
            return;
        }
        p->cats = c;
        p->cap_cats = cap;
    }
    file_cat *c = &p->cats[p->n_cats];
    memset(c, 0, sizeof *c);
    if (!(c->name = strdup(cname))) {
        fail_oom(p);
        return;
    }
    c->line = p->line;
    p->cat = p->n_cats++;
    p->sec = SEC_CATEGORY;
}

/* What inih makes of a line (ini.c of release 55, its default settings):
 * the sections and the lines it cannot read are found here. */
static void follow_line(parse *p, const char *s, size_t n)
{
    size_t b = 0, e = n;
    if (p->line == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        b = 3;
    trim(s, &b, &e);
    if (b == e || s[b] == ';' || s[b] == '#')
        return; /* blank, or a comment */
    if (p->prev_name && b > 0)
        return; /* an indented line after an entry continues its value */
    /* inih's find_chars_or_comment: up to one of `chars` or an inline comment
     * (';' after white space) */
    const char *chars = s[b] == '[' ? "]" : "=:";
    size_t i = s[b] == '[' ? b + 1 : b;
    bool was_space = false;
    while (i < e && !strchr(chars, s[i]) && !(was_space && s[i] == ';')) {
        was_space = is_sp(s[i]);
        i++;
    }
    if (s[b] == '[') {
        if (i < e && s[i] == ']') {
            p->prev_name = false;
            start_section(p, s + b + 1, i - (b + 1));
        } else {
            fail_at(p, p->line, "section header without ']'");
        }
        return;
    }
    if (i < e && (s[i] == '=' || s[i] == ':')) {
        size_t ne = i;
        while (ne > b && is_sp(s[ne - 1]))
            ne--;
        p->prev_name = ne > b;
        return;
    }
    fail_at(p, p->line, "expected NAME = VALUE, a [section] or a ';' comment");
}

/* inih's ini_reader: the next line, counted and followed */
static char *read_line(char *str, int num, void *stream)
{
    parse *p = stream;
    if (p->st || p->pos >= p->len)
        return NULL;
    const char *s = p->data + p->pos;
    const char *nl = memchr(s, '\n', p->len - p->pos);
    size_t n = nl ? (size_t)(nl - s) : p->len - p->pos;
    p->pos += n + (nl ? 1 : 0);
    p->line++;
    if (memchr(s, '\0', n)) {
        fail_at(p, p->line, "a NUL byte: not a text file");
        return NULL;
    }
    if (!kd_utf8_input_valid(s, n)) {
        fail_at(p, p->line, "invalid UTF-8");
        return NULL;
    }
    if (num < 2 || n > (size_t)num - 1) {
        fail_at(p, p->line, "line longer than %d bytes (continue a list on an indented line)", num - 1);
        return NULL;
    }
    memcpy(str, s, n);
    str[n] = '\0';
    p->cur = s;
    p->cur_len = n;
    follow_line(p, s, n);
    return p->st ? NULL : str;
}

/* A comma-separated list: items trimmed, lowered when `lower`; an item in
 * double quotes is taken as it is between them (white space, commas); empty
 * items are skipped (a trailing comma before a continued line). */
static void parse_list(parse *p, const char *v, bool lower, strvec *out, const char *what)
{
    size_t len = strlen(v), i = 0;
    while (i <= len && !p->st) {
        while (i < len && is_sp(v[i]))
            i++;
        char *item = NULL;
        if (i < len && v[i] == '"') {
            const char *q = memchr(v + i + 1, '"', len - i - 1);
            if (!q) {
                fail_at(p, p->line, "unterminated '\"' in %s", what);
                return;
            }
            size_t j = (size_t)(q - v) + 1;
            while (j < len && is_sp(v[j]))
                j++;
            if (j < len && v[j] != ',') {
                fail_at(p, p->line, "text after a quoted %s", what);
                return;
            }
            if (q == v + i + 1) {
                fail_at(p, p->line, "an empty %s", what);
                return;
            }
            item = strndup(v + i + 1, (size_t)(q - (v + i + 1)));
            i = j + 1;
        } else {
            const char *c = memchr(v + i, ',', len - i);
            size_t b = i, e = c ? (size_t)(c - v) : len;
            trim(v, &b, &e);
            i = (c ? (size_t)(c - v) : len) + 1;
            if (b == e)
                continue;
            item = strndup(v + b, e - b);
        }
        if (item && lower) {
            char *l = kd_lower(item);
            free(item);
            item = l;
        }
        if (!sv_push(out, item))
            fail_oom(p);
    }
}

static bool parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0)
            return (*out = true);
        if (strcasecmp(v, no[i]) == 0)
            return !(*out = false);
    }
    return false;
}

/* a string value kept once: a second NAME = of a one-value key is an error */
static void set_once(parse *p, char **slot, const char *key, const char *v)
{
    if (*slot) {
        fail_at(p, p->line, "duplicate key '%s'", key);
        return;
    }
    if (!*v) {
        fail_at(p, p->line, "missing value of '%s'", key);
        return;
    }
    if (!(*slot = strdup(v)))
        fail_oom(p);
}

static void rules_entry(parse *p, const char *name, const char *value)
{
    if (strcmp(name, "base") == 0) {
        if (!*value) {
            fail_at(p, p->line, "missing base value: base = default or base = reference");
            return;
        }
        if (!kd_rules_builtin(value)) {
            fail_at(p, p->line, "unknown base '%.80s' (default or reference)", value);
            return;
        }
        set_once(p, &p->base, name, value);
        p->base_line = p->line;
    } else if (strcmp(name, "name") == 0) {
        set_once(p, &p->name, name, value);
    } else {
        fail_at(p, p->line, "unknown key '%.80s' in [rules] (base, name)", name);
    }
}

/* A regex must not refer back to a group: the lines of a category are
 * joined as (A)|(B), which renumbers them. */
static bool has_backreference(const char *re)
{
    for (const char *s = re; *s; s++) {
        if (*s == '\\') {
            if (s[1] >= '1' && s[1] <= '9')
                return true;
            if (s[1])
                s++;
        }
    }
    return false;
}

/* c's step of that strength and tier, added when missing; NULL on OOM */
static file_step *file_step_of(parse *p, file_cat *c, bool weak, int nth)
{
    for (size_t i = 0; i < c->n_steps; i++)
        if (c->steps[i].weak == weak && c->steps[i].nth == nth)
            return &c->steps[i];
    if (c->n_steps == c->cap_steps) {
        size_t cap = c->cap_steps ? 2 * c->cap_steps : 4;
        file_step *s = realloc(c->steps, cap * sizeof *s);
        if (!s) {
            fail_oom(p);
            return NULL;
        }
        c->steps = s;
        c->cap_steps = cap;
    }
    file_step *s = &c->steps[c->n_steps++];
    memset(s, 0, sizeof *s);
    s->weak = weak;
    s->nth = nth;
    return s;
}

static void category_entry(parse *p, const char *name, const char *value)
{
    file_cat *c = &p->cats[p->cat];
    int strong = tier_of(name, "strong"), weak = tier_of(name, "weak"), regex = tier_of(name, "regex");
    if (strcmp(name, "kind") == 0) {
        if (c->has_kind) {
            fail_at(p, p->line, "duplicate key 'kind'");
            return;
        }
        for (kd_category k = 0; k < KD_CAT_COUNT; k++)
            if (strcmp(value, kind_names[k]) == 0) {
                c->has_kind = true;
                c->kind = k;
                c->kind_line = p->line;
                return;
            }
        fail_at(p, p->line, "bad kind '%.80s' (compute, communication, memory, elementwise or other)", value);
    } else if (strong || weak) {
        file_step *s = file_step_of(p, c, weak > 0, strong ? strong : weak);
        if (s)
            parse_list(p, value, true, &s->kw, "keyword");
    } else if (regex) {
        if (!*value) {
            fail_at(p, p->line, "missing value of '%s'", name);
            return;
        }
        if (has_backreference(value)) {
            fail_at(p, p->line, "bad regex '%.200s': a back-reference (\\1..\\9) is not supported", value);
            return;
        }
        regex_t re;
        int rc = regcomp(&re, value, REG_EXTENDED | REG_NOSUB);
        if (rc == REG_ESPACE) {
            fail_oom(p);
            return;
        }
        if (rc != 0) {
            char why[256];
            regerror(rc, &re, why, sizeof why);
            fail_at(p, p->line, "bad regex '%.200s': %s", value, why);
            return;
        }
        regfree(&re);
        file_step *s = file_step_of(p, c, false, regex);
        if (!s)
            return;
        if (!s->rx.n)
            s->rx_line = p->line;
        if (!sv_push(&s->rx, strdup(value)))
            fail_oom(p);
    } else if (strcmp(name, "replace") == 0) {
        if (c->has_replace) {
            fail_at(p, p->line, "duplicate key 'replace'");
            return;
        }
        if (!parse_bool(value, &c->replace)) {
            fail_at(p, p->line, "bad value of replace '%.80s' (true or false)", value);
            return;
        }
        c->has_replace = true;
    } else {
        fail_at(p, p->line, "unknown key '%.80s' in [category %s] (kind, strong, weak, regex, replace)", name,
                c->name);
    }
}

static void order_entry(parse *p, const char *name, const char *value)
{
    if (strcmp(name, "steps") != 0) {
        fail_at(p, p->line, "unknown key '%.80s' in [order] (steps)", name);
        return;
    }
    strvec items = {0};
    parse_list(p, value, false, &items, "step");
    for (size_t i = 0; i < items.n && !p->st; i++) {
        char *it = items.v[i], *colon = strchr(it, ':');
        bool weak = false;
        int nth = 1;
        if (colon) {
            int strong = tier_of(colon + 1, "strong"), w = tier_of(colon + 1, "weak");
            if (!strong && !w) {
                fail_at(p, p->line, "unknown step '%.80s' in [order] (CATEGORY, CATEGORY:weak, CATEGORY:strong2...)",
                        it);
                break;
            }
            weak = w > 0;
            nth = strong ? strong : w;
            *colon = '\0';
        }
        if (p->n_order == p->cap_order) {
            size_t cap = p->cap_order ? 2 * p->cap_order : 16;
            order_item *o = realloc(p->order, cap * sizeof *o);
            if (!o) {
                fail_oom(p);
                break;
            }
            p->order = o;
            p->cap_order = cap;
        }
        p->order[p->n_order++] = (order_item){it, weak, nth, p->line};
        items.v[i] = NULL;
    }
    for (size_t i = 0; i < items.n; i++)
        free(items.v[i]);
    free(items.v);
}

/* [match] OLD = NEW, split on the line itself: inih splits at the first '='
 * or ':', and a C++ name's glob has "::" */
static void match_entry(parse *p)
{
    const char *s = p->cur;
    size_t b = 0, e = p->cur_len;
    /* the inline comment: ';' after white space */
    for (size_t i = 1; i < e; i++)
        if (s[i] == ';' && is_sp(s[i - 1])) {
            e = i;
            break;
        }
    trim(s, &b, &e);
    const char *eq = memchr(s + b, '=', e - b);
    if (!eq) {
        fail_at(p, p->line, "match rule without '=' (OLD_GLOB = NEW_GLOB)");
        return;
    }
    size_t eqi = (size_t)(eq - s);
    if (memchr(eq + 1, '=', e - eqi - 1)) {
        fail_at(p, p->line, "match rule with more than one '=' (a '=' in a name: match it with '?')");
        return;
    }
    size_t ob = b, oe = eqi, nb = eqi + 1, ne = e;
    trim(s, &ob, &oe);
    trim(s, &nb, &ne);
    if (ob == oe || nb == ne) {
        fail_at(p, p->line, "match rule with an empty side (OLD_GLOB = NEW_GLOB)");
        return;
    }
    char *r = malloc((oe - ob) + (ne - nb) + 2);
    if (r) {
        memcpy(r, s + ob, oe - ob);
        r[oe - ob] = '=';
        memcpy(r + (oe - ob) + 1, s + nb, ne - nb);
        r[(oe - ob) + 1 + (ne - nb)] = '\0';
    }
    if (!sv_push(&p->match, r))
        fail_oom(p);
}

/* inih's handler: one NAME = VALUE of the line just read (or the value's
 * continuation on an indented line, with the same NAME) */
static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    parse *p = user;
    if (p->st)
        return 0;
    if (strcmp(section, p->sec_raw) != 0) {
        fail_at(p, p->line, "cannot tell this line's section");
        return 0;
    }
    /* the inline comment (';' after white space) is cut from every value: inih
     * 55 as Debian builds it leaves it on a continued value's line */
    char *v = strdup(value);
    if (!v) {
        fail_oom(p);
        return 0;
    }
    for (size_t i = 1; v[0] && v[i]; i++)
        if (v[i] == ';' && is_sp(v[i - 1])) {
            v[i] = '\0';
            break;
        }
    size_t vb = 0, ve = strlen(v);
    trim(v, &vb, &ve);
    v[ve] = '\0';
    switch (p->sec) {
    case SEC_NONE:
        fail_at(p, p->line, "'%.80s' before any section (start with [rules] or [category NAME])", name);
        break;
    case SEC_RULES: rules_entry(p, name, v + vb); break;
    case SEC_CATEGORY: category_entry(p, name, v + vb); break;
    case SEC_ORDER: order_entry(p, name, v + vb); break;
    case SEC_MATCH: match_entry(p); break;
    }
    free(v);
    return !p->st;
}

static void parse_free(parse *p)
{
    free(p->base);
    free(p->name);
    for (size_t i = 0; i < p->n_cats; i++) {
        free(p->cats[i].name);
        for (size_t k = 0; k < p->cats[i].n_steps; k++) {
            sv_free(&p->cats[i].steps[k].kw);
            sv_free(&p->cats[i].steps[k].rx);
        }
        free(p->cats[i].steps);
    }
    free(p->cats);
    for (size_t i = 0; i < p->n_order; i++)
        free(p->order[i].name);
    free(p->order);
    sv_free(&p->match);
}

/* ---- building: the profile --------------------------------------------------------- */

/* a step of the profile being built */
typedef struct {
    int cat;
    bool weak;
    int nth;                /* its tier: the category's nth step of this strength */
    strvec kw, rx;          /* keywords; regex lines (strong steps) */
    const void *base_rx;    /* a base step's compiled regex (none in the built-in profiles) */
    int rx_line;            /* the file's first regex line of the step */
} model_step;

typedef struct {
    kd_category_def cats[KD_CAT_MAX]; /* names: the base's or the file's, outliving the build */
    size_t n_cats;
    model_step *steps; /* [0, n_base) the base's, in order; then the added ones, in file order */
    size_t n_steps, cap_steps, n_base;
} model;

static void model_free(model *m)
{
    for (size_t i = 0; i < m->n_steps; i++) {
        sv_free(&m->steps[i].kw);
        sv_free(&m->steps[i].rx);
    }
    free(m->steps);
}

static bool step_has_content(const model_step *s) { return s->kw.n || s->rx.n || s->base_rx; }

static int model_find_cat(const model *m, const char *name)
{
    for (size_t i = 0; i < m->n_cats; i++)
        if (strcmp(m->cats[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int model_find_step(const model *m, int cat, bool weak, int nth)
{
    for (size_t i = 0; i < m->n_steps; i++)
        if (m->steps[i].cat == cat && m->steps[i].weak == weak && m->steps[i].nth == nth)
            return (int)i;
    return -1;
}

/* a new empty step at the end; its index, -1 on OOM */
static int model_add_step(model *m, int cat, bool weak, int nth)
{
    if (m->n_steps == m->cap_steps) {
        size_t cap = m->cap_steps ? 2 * m->cap_steps : 16;
        model_step *s = realloc(m->steps, cap * sizeof *s);
        if (!s)
            return -1;
        m->steps = s;
        m->cap_steps = cap;
    }
    model_step *s = &m->steps[m->n_steps];
    memset(s, 0, sizeof *s);
    s->cat = cat;
    s->weak = weak;
    s->nth = nth;
    return (int)m->n_steps++;
}

/* the base's categories and steps, each step numbered within its category
 * and strength */
static bool model_from_base(model *m, const kd_rules *base)
{
    m->n_cats = base->n_categories < KD_CAT_MAX ? base->n_categories : KD_CAT_MAX;
    for (size_t i = 0; i < m->n_cats; i++)
        m->cats[i] = base->categories[i];
    for (size_t i = 0; i < base->n_steps; i++) {
        const kd_class_step *st = &base->steps[i];
        if (st->category >= m->n_cats)
            continue;
        int nth = 1;
        for (size_t k = 0; k < m->n_steps; k++)
            nth += m->steps[k].cat == st->category && m->steps[k].weak == st->unless_compute_like;
        int si = model_add_step(m, st->category, st->unless_compute_like, nth);
        if (si < 0)
            return false;
        model_step *s = &m->steps[si];
        for (size_t k = 0; st->keywords && st->keywords[k]; k++)
            if (!sv_add_unique(&s->kw, st->keywords[k]))
                return false;
        s->base_rx = st->regex;
    }
    m->n_base = m->n_steps;
    return true;
}

/* fs's keywords and regex lines into model step si */
static void apply_step(parse *p, model *m, int si, const file_step *fs, const char *cat)
{
    model_step *s = &m->steps[si];
    if (fs->rx.n && s->base_rx) {
        fail_at(p, fs->rx_line, "the base's step of '%s' has a regex of its own: replace = true first", cat);
        return;
    }
    bool ok = true;
    for (size_t k = 0; ok && k < fs->kw.n; k++)
        ok = sv_add_unique(&s->kw, fs->kw.v[k]);
    for (size_t k = 0; ok && k < fs->rx.n; k++)
        ok = sv_add_unique(&s->rx, fs->rx.v[k]);
    if (!s->rx_line)
        s->rx_line = fs->rx_line;
    if (!ok)
        fail_oom(p);
}

/* the file's categories, in file order: a step the model has not yet is
 * added (strong tiers, then weak ones) */
static void model_apply(parse *p, model *m)
{
    for (size_t i = 0; i < p->n_cats && !p->st; i++) {
        file_cat *fc = &p->cats[i];
        int ci = model_find_cat(m, fc->name);
        if (ci < 0) {
            if (m->n_cats >= KD_CAT_MAX) {
                fail_at(p, fc->line, "too many categories: a profile has at most %d", KD_CAT_MAX);
                return;
            }
            if (!fc->has_kind) {
                fail_at(p, fc->line,
                        "new category '%s' without kind (compute, communication, memory, elementwise or other)",
                        fc->name);
                return;
            }
            ci = (int)m->n_cats++;
            m->cats[ci] = (kd_category_def){fc->name, fc->kind};
        } else if (fc->has_kind && fc->kind != m->cats[ci].kind) {
            fail_at(p, fc->kind_line, "category '%s' is of kind %s in the base; its kind cannot change",
                    fc->name, kind_names[m->cats[ci].kind]);
            return;
        }
        if (fc->replace)
            for (size_t k = 0; k < m->n_steps; k++)
                if (m->steps[k].cat == ci) {
                    sv_clear(&m->steps[k].kw);
                    sv_clear(&m->steps[k].rx);
                    m->steps[k].base_rx = NULL;
                }
        for (int w = 0; w < 2 && !p->st; w++)
            for (int nth = 1; nth <= MAX_TIER && !p->st; nth++)
                for (size_t k = 0; k < fc->n_steps && !p->st; k++) {
                    const file_step *fs = &fc->steps[k];
                    if (fs->weak != w || fs->nth != nth)
                        continue;
                    int si = model_find_step(m, ci, w, nth);
                    if (si < 0 && (si = model_add_step(m, ci, w, nth)) < 0) {
                        fail_oom(p);
                        return;
                    }
                    apply_step(p, m, si, fs, fc->name);
                }
    }
}

/* the steps' order, as indexes of m's steps: [order]'s, or the added steps
 * then the base's; *n set. NULL on an error. */
static int *model_order(parse *p, model *m, size_t *n)
{
    *n = 0;
    int *out = malloc((m->n_steps + p->n_order + 1) * sizeof *out);
    if (!out) {
        fail_oom(p);
        return NULL;
    }
    if (!p->has_order) {
        for (size_t i = m->n_base; i < m->n_steps; i++)
            out[(*n)++] = (int)i;
        for (size_t i = 0; i < m->n_base; i++)
            out[(*n)++] = (int)i;
        return out;
    }
    for (size_t i = 0; i < p->n_order; i++) {
        const order_item *it = &p->order[i];
        char name[128];
        step_name(name, sizeof name, it->name, it->weak, it->nth);
        int ci = model_find_cat(m, it->name);
        if (ci < 0) {
            fail_at(p, it->line, "unknown step '%s' in [order]: no category '%s'", name, it->name);
            break;
        }
        /* a step of a category the profile has not: empty, it claims nothing */
        int si = model_find_step(m, ci, it->weak, it->nth);
        if (si < 0) {
            int *grown = realloc(out, (m->n_steps + p->n_order + 2) * sizeof *out);
            if (grown)
                out = grown;
            if (!grown || (si = model_add_step(m, ci, it->weak, it->nth)) < 0) {
                fail_oom(p);
                break;
            }
        }
        bool twice = false;
        for (size_t k = 0; k < *n; k++)
            twice = twice || out[k] == si;
        if (twice) {
            fail_at(p, it->line, "step '%s' named twice in [order]", name);
            break;
        }
        out[(*n)++] = si;
    }
    for (size_t si = 0; !p->st && si < m->n_steps; si++) {
        bool listed = false;
        for (size_t k = 0; k < *n; k++)
            listed = listed || out[k] == (int)si;
        if (!listed && step_has_content(&m->steps[si])) {
            char name[128];
            step_name(name, sizeof name, m->cats[m->steps[si].cat].name, m->steps[si].weak, m->steps[si].nth);
            fail_at(p, p->order_line, "[order] leaves out step '%s' (every step with keywords is listed)", name);
        }
    }
    if (p->st) {
        free(out);
        return NULL;
    }
    return out;
}

/* a step's regex lines as one ERE: A, or (A)|(B)|... */
static rules_regex *compile_regex(parse *p, kd_rules_owned *o, const model_step *s, const char *cat)
{
    size_t len = 1;
    for (size_t i = 0; i < s->rx.n; i++)
        len += strlen(s->rx.v[i]) + 3;
    char *src = malloc(len);
    rules_regex *rx = calloc(1, sizeof *rx);
    char **pats = own(o, calloc(s->rx.n, sizeof *pats));
    if (!src || !rx || !pats) {
        free(src);
        free(rx);
        fail_oom(p);
        return NULL;
    }
    src[0] = '\0';
    for (size_t i = 0; i < s->rx.n; i++) {
        if (s->rx.n == 1) {
            strcat(src, s->rx.v[i]);
        } else {
            strcat(src, i ? "|(" : "(");
            strcat(src, s->rx.v[i]);
            strcat(src, ")");
        }
    }
    int rc = regcomp(&rx->re, src, REG_EXTENDED | REG_NOSUB);
    free(src);
    if (rc != 0) {
        if (rc == REG_ESPACE) {
            fail_oom(p);
        } else {
            char why[256];
            regerror(rc, &rx->re, why, sizeof why);
            fail_at(p, s->rx_line, "bad regex (the regex lines of [category %s] joined): %s", cat, why);
        }
        free(rx);
        return NULL;
    }
    o->regexes[o->n_regexes++] = rx; /* room for one per step (build) */
    rx->patterns = pats;
    for (size_t i = 0; i < s->rx.n; i++) {
        if (!(pats[i] = own_strdup(o, s->rx.v[i]))) {
            fail_oom(p);
            return NULL;
        }
        rx->n_patterns++;
    }
    return rx;
}

static uint64_t fnv1a64(const char *data, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)data[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void build(parse *p, kd_rules_owned *o)
{
    const kd_rules *base = kd_rules_builtin(p->base ? p->base : "default");
    model m;
    memset(&m, 0, sizeof m);
    if (!model_from_base(&m, base))
        fail_oom(p);
    model_apply(p, &m);
    size_t n_order = 0;
    int *order = p->st ? NULL : model_order(p, &m, &n_order);
    kd_rules *r = &o->rules;
    *r = *base; /* the kernel-name hint, the kernel-site steps, stages, launches: the base's */
    kd_category_def *cats = p->st ? NULL : own(o, calloc(m.n_cats, sizeof *cats));
    kd_class_step *steps = cats ? own(o, calloc(n_order ? n_order : 1, sizeof *steps)) : NULL;
    o->regexes = steps ? own(o, calloc(n_order ? n_order : 1, sizeof *o->regexes)) : NULL;
    if (!p->st && (!cats || !steps || !o->regexes))
        fail_oom(p);
    for (size_t i = 0; !p->st && i < m.n_cats; i++) {
        cats[i].kind = m.cats[i].kind;
        if (!(cats[i].name = own_strdup(o, m.cats[i].name)))
            fail_oom(p);
    }
    size_t n_steps = 0;
    for (size_t i = 0; !p->st && i < n_order; i++) {
        const model_step *s = &m.steps[order[i]];
        if (!step_has_content(s))
            continue;
        kd_class_step *st = &steps[n_steps++];
        st->category = (kd_category)s->cat;
        st->label = cats[s->cat].name;
        st->keywords = s->kw.n ? own_list(o, &s->kw) : NULL;
        st->unless_compute_like = s->weak;
        st->regex = s->rx.n ? (const void *)compile_regex(p, o, s, cats[s->cat].name) : s->base_rx;
        if (s->kw.n && !st->keywords)
            fail_oom(p);
    }
    free(order);
    /* the compute-like guard: the strong keywords of the compute kind */
    strvec guard = {0};
    for (size_t i = 0; !p->st && i < m.n_steps; i++) {
        const model_step *s = &m.steps[i];
        for (size_t k = 0; !s->weak && m.cats[s->cat].kind == KD_CAT_COMPUTE && k < s->kw.n; k++)
            if (!sv_add_unique(&guard, s->kw.v[k]))
                fail_oom(p);
    }
    const char *const *compute_like = p->st ? NULL : own_list(o, &guard);
    sv_free(&guard);
    /* the base's match rules, then the file's */
    char **match = p->st ? NULL : own(o, calloc(base->n_match_rules + p->match.n + 1, sizeof *match));
    size_t n_match = 0;
    for (size_t i = 0; match && i < base->n_match_rules; i++)
        match[n_match++] = (char *)base->match_rules[i];
    for (size_t i = 0; match && i < p->match.n; i++)
        if (!(match[n_match++] = own_strdup(o, p->match.v[i])))
            match = NULL;
    char src[64];
    snprintf(src, sizeof src, " (hash %016llx)", (unsigned long long)fnv1a64(p->data, p->len));
    char *source = p->st ? NULL : own(o, malloc(strlen(p->path) + strlen(src) + 1));
    if (source) {
        strcpy(source, p->path);
        strcat(source, src);
    }
    const char *name = p->st ? NULL : own_strdup(o, p->name ? p->name : p->path);
    if (!p->st && (!compute_like || !match || !source || !name))
        fail_oom(p);
    size_t n_cats = m.n_cats;
    model_free(&m);
    if (p->st)
        return;
    r->name = name;
    r->source = source;
    r->categories = cats;
    r->n_categories = n_cats;
    r->match_rules = (const char *const *)match;
    r->n_match_rules = n_match;
    r->steps = steps;
    r->n_steps = n_steps;
    r->compute_like = compute_like;
}

/* ---- the API ---------------------------------------------------------------------------- */

/* the whole file (at most RULES_MAX_BYTES), malloc'd */
static kd_status read_all(const char *path, char **data, size_t *len, kd_error *err)
{
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return kd_fail(err, KD_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    kd_status st = buf ? KD_OK : kd_fail(err, KD_ENOMEM, "%s: out of memory", path);
    while (!st) {
        if (n == cap) {
            if (cap > RULES_MAX_BYTES) {
                st = kd_fail(err, KD_EINPUT, "%s: larger than %u bytes: not a rules file", path, RULES_MAX_BYTES);
                break;
            }
            char *b = realloc(buf, 2 * cap);
            if (!b) {
                st = kd_fail(err, KD_ENOMEM, "%s: out of memory", path);
                break;
            }
            buf = b;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                st = kd_fail(err, KD_EINPUT, "%s: cannot read: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (!st && n > RULES_MAX_BYTES)
        st = kd_fail(err, KD_EINPUT, "%s: larger than %u bytes: not a rules file", path, RULES_MAX_BYTES);
    if (st) {
        free(buf);
        return st;
    }
    *data = buf;
    *len = n;
    return KD_OK;
}

kd_status kd_rules_load_file(const char *path, kd_rules_owned **out, kd_error *err)
{
    *out = NULL;
    char *data;
    size_t len;
    kd_status st = read_all(path, &data, &len, err);
    if (st)
        return st;
    parse p;
    memset(&p, 0, sizeof p);
    p.path = path;
    p.data = data;
    p.len = len;
    int bad_line = ini_parse_stream(read_line, &p, on_entry, &p);
    /* inih's own complaint about a line before ours: its message cannot say
     * more (the reader finds every line inih cannot read first) */
    if (bad_line > 0 && (!p.st || bad_line < p.err_line)) {
        p.st = KD_OK;
        fail_at(&p, bad_line, "not understood");
    } else if (bad_line < 0 && !p.st) {
        fail_oom(&p);
    }
    kd_rules_owned *o = p.st ? NULL : calloc(1, sizeof *o);
    if (!p.st && !o)
        fail_oom(&p);
    if (!p.st)
        build(&p, o);
    if (p.st) {
        if (p.st == KD_ENOMEM)
            st = kd_fail(err, KD_ENOMEM, "%s: out of memory", path);
        else
            st = kd_fail(err, p.st, "%s:%d: %s", path, p.err_line, p.msg);
        kd_rules_owned_free(o);
        o = NULL;
    }
    parse_free(&p);
    free(data);
    *out = o;
    return st;
}

const kd_rules *kd_rules_owned_get(const kd_rules_owned *o) { return &o->rules; }

void kd_rules_owned_free(kd_rules_owned *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n_regexes; i++) {
        regfree(&o->regexes[i]->re);
        free(o->regexes[i]);
    }
    for (size_t i = 0; i < o->n_allocs; i++)
        free(o->allocs[i]);
    free(o->allocs);
    free(o);
}

kd_status kd_rules_resolve(const char *spec, const kd_rules **rules, kd_rules_owned **owned, kd_error *err)
{
    *owned = NULL;
    *rules = kd_rules_builtin(spec);
    if (*rules)
        return KD_OK;
    kd_status st = kd_rules_load_file(spec, owned, err);
    if (!st)
        *rules = kd_rules_owned_get(*owned);
    return st;
}

/* ---- writing a profile --------------------------------------------------------------- */

/* an item as the reader takes it back: in quotes when white space at an
 * end, a comma, or a comment character at its start would change it */
static bool needs_quotes(const char *s)
{
    size_t n = strlen(s);
    return n == 0 || is_sp(s[0]) || is_sp(s[n - 1]) || strchr(s, ',') || s[0] == '"' || s[0] == ';' ||
           s[0] == '#';
}

/* KEY = a, b, ... wrapped on indented lines */
static void write_list(FILE *out, const char *key, char *const *items, size_t n)
{
    fprintf(out, "%s =", key);
    size_t col = strlen(key) + 2;
    for (size_t i = 0; i < n; i++) {
        size_t w = strlen(items[i]) + (needs_quotes(items[i]) ? 2 : 0);
        if (i && col + w + 2 > WRAP_COLUMN) {
            fputs(",\n   ", out);
            col = 3;
        } else if (i) {
            fputc(',', out);
            col++;
        }
        if (needs_quotes(items[i]))
            fprintf(out, " \"%s\"", items[i]);
        else
            fprintf(out, " %s", items[i]);
        col += w + 1;
    }
    fputc('\n', out);
}

bool kd_rules_write_ini(const kd_rules *r, FILE *out)
{
    /* r's steps with keywords or a regex, each with its tier (the how-many-th
     * of its category and strength) */
    size_t nc = r->n_categories < KD_CAT_MAX ? r->n_categories : KD_CAT_MAX;
    typedef struct {
        const kd_class_step *st;
        int nth;
    } wstep;
    wstep *ws = calloc(r->n_steps ? r->n_steps : 1, sizeof *ws);
    if (!ws)
        return false;
    size_t n = 0, n_lost = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        const kd_class_step *st = &r->steps[i];
        bool has_kw = st->keywords && st->keywords[0];
        if (!has_kw && !st->regex)
            continue;
        int nth = 1;
        for (size_t k = 0; k < n; k++)
            nth += ws[k].st->category == st->category && ws[k].st->unless_compute_like == st->unless_compute_like;
        if (st->category >= nc || nth > MAX_TIER || (st->regex && st->unless_compute_like)) {
            n_lost++;
            continue;
        }
        ws[n++] = (wstep){st, nth};
    }
    /* the guard a loaded file derives: the compute kind's strong keywords */
    bool ok = true, guard_same = true;
    strvec guard = {0};
    for (size_t i = 0; ok && i < n; i++)
        for (size_t k = 0; ok && !ws[i].st->unless_compute_like &&
                           r->categories[ws[i].st->category].kind == KD_CAT_COMPUTE && ws[i].st->keywords &&
                           ws[i].st->keywords[k];
             k++)
            ok = sv_add_unique(&guard, ws[i].st->keywords[k]);
    size_t n_guard = 0;
    for (; r->compute_like && r->compute_like[n_guard]; n_guard++)
        guard_same = guard_same && sv_has(&guard, r->compute_like[n_guard]);
    guard_same = guard_same && n_guard == guard.n;
    sv_free(&guard);
    if (!ok) {
        free(ws);
        return false;
    }

    fprintf(out, "; kerndiff rules: the profile '%s' (%s), in the rules-file syntax.\n", r->name,
            r->source ? r->source : "built-in");
    fputs("; Loaded with --rules FILE it classifies as the profile does: every built-in\n"
          "; category replaces the base's keywords and [order] lists every step, so the\n"
          "; base gives only the rest (kernel-name hint, kernel-site categories, stage\n"
          "; keywords, launch names). Keywords are lowered substrings of the lowered\n"
          "; kernel name, tried step by step in [order], the first match wins; weak\n"
          "; ones only count when the name is not compute-like (has none of the strong\n"
          "; keywords of a compute category). A category with more than one step of a\n"
          "; strength has strong2, strong3... (CAT:strong2 in [order]).\n",
          out);
    if (n_lost)
        fputs("; note: a step of the profile cannot be written in this syntax (a regex of a\n"
              "; weak step, a category out of range, too many steps); it is left out.\n",
              out);
    if (!guard_same)
        fputs("; note: the profile's compute-like guard is not the strong keywords of its\n"
              "; compute categories, as a file's is; the weak steps may differ.\n",
              out);
    fprintf(out, "\n[rules]\nbase = reference\nname = %s\n", r->name);
    for (size_t c = 0; c < nc; c++) {
        fprintf(out, "\n[category %s]\n", r->categories[c].name);
        if (c < KD_CAT_COUNT)
            fputs("replace = true\n", out);
        else
            fprintf(out, "kind = %s\n", kd_category_name(r->categories[c].kind));
        /* its steps: strong tiers, then weak ones */
        for (int w = 0; w < 2; w++)
            for (size_t i = 0; i < n; i++) {
                const kd_class_step *st = ws[i].st;
                if (st->category != c || st->unless_compute_like != w)
                    continue;
                char key[16];
                if (ws[i].nth == 1)
                    snprintf(key, sizeof key, "%s", w ? "weak" : "strong");
                else
                    snprintf(key, sizeof key, "%s%d", w ? "weak" : "strong", ws[i].nth);
                size_t nk = 0;
                while (st->keywords && st->keywords[nk])
                    nk++;
                if (nk)
                    write_list(out, key, (char *const *)st->keywords, nk);
                if (st->regex) {
                    /* a profile's regexes come from kd_rules_load_file (rules_file.h) */
                    const rules_regex *re = st->regex;
                    char rkey[16];
                    if (ws[i].nth == 1)
                        snprintf(rkey, sizeof rkey, "regex");
                    else
                        snprintf(rkey, sizeof rkey, "regex%d", ws[i].nth);
                    for (size_t k = 0; k < re->n_patterns; k++)
                        fprintf(out, "%s = %s\n", rkey, re->patterns[k]);
                }
            }
    }
    fputs("\n[order]\n", out);
    char **names = calloc(n ? n : 1, sizeof *names);
    ok = names != NULL;
    for (size_t i = 0; names && ok && i < n; i++) {
        char name[128];
        step_name(name, sizeof name, r->categories[ws[i].st->category].name, ws[i].st->unless_compute_like,
                  ws[i].nth);
        ok = (names[i] = strdup(name)) != NULL;
    }
    if (ok)
        write_list(out, "steps", names, n);
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    free(ws);
    if (ok && r->n_match_rules) {
        fputs("\n[match]\n", out);
        for (size_t i = 0; i < r->n_match_rules; i++) {
            const char *eq = strchr(r->match_rules[i], '=');
            if (eq)
                fprintf(out, "%.*s = %s\n", (int)(eq - r->match_rules[i]), r->match_rules[i], eq + 1);
        }
    }
    return ok && !ferror(out);
}
