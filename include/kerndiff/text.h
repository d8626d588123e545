/* text.h — the reference's string helpers (profile_common "PC" and the name
 * helpers of the overlap module), with Python string semantics (reference §0,
 * §1, §4 "Extract"). Every function returning char* returns a malloc'd,
 * NUL-terminated string the caller frees; NULL only on out-of-memory.
 * Inputs are NUL-terminated UTF-8. */
#ifndef KERNDIFF_TEXT_H
#define KERNDIFF_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerndiff/classify.h"

/* Python str.isspace() set used by strip()/split() (reference §0). */
bool kd_is_py_space(uint32_t codepoint);

/* Code point of a byte that does not start a valid UTF-8 sequence. */
#define KD_UTF8_INVALID 0xFFFFFFFFu

/* Decodes the code point at s[0..len) into *cp and returns the bytes it
 * takes (1..4; 0 only when len is 0). An invalid or truncated sequence
 * gives KD_UTF8_INVALID and 1, so each stray byte counts as one character
 * that is neither whitespace nor a digit. */
size_t kd_utf8_decode(const char *s, size_t len, uint32_t *cp);
/* False when s holds a sequence yajl lets through but UTF-8 forbids: an
 * overlong form, a code point above U+10FFFF, a raw high surrogate
 * (product.md §7: invalid UTF-8 is an input error). */
bool kd_utf8_input_valid(const char *s, size_t len);

/* Python unicodedata.decimal(): 0..9 for a Unicode decimal digit (category
 * Nd, what regex \d, int() and float() accept), else -1. */
int kd_unicode_decimal(uint32_t codepoint);

/* PC normalize_text: strip; if any of the six ASCII whitespace chars remain,
 * split on runs of Unicode whitespace and join with single spaces. */
char *kd_normalize_text(const char *s);

/* normalize_text(s).lower() of s[0..len) into buf, which has room for
 * 3 * len + 2 bytes; returns the NUL-terminated result, inside buf. */
const char *kd_normalized_lower_into(const char *s, size_t len, char *buf);

/* Python str.strip() (Unicode whitespace). */
char *kd_strip(const char *s);

/* Python lower() as far as tests against ASCII keywords can see it
 * (reference §0): A-Z, and the two non-ASCII characters whose lowercase
 * holds ASCII, U+0130 -> "i" U+0307 and U+212A (Kelvin sign) -> "k"; other
 * non-ASCII bytes unchanged. */
char *kd_lower(const char *s);
/* The same into dst, which has room for 2 * len + 1 bytes; returns the
 * length written (dst is NUL-terminated). */
size_t kd_lower_into(const char *s, size_t len, char *dst);

bool kd_starts_with(const char *s, const char *prefix);
bool kd_ends_with(const char *s, const char *suffix);
/* true if any keyword of the NULL-terminated list is a substring of text. */
bool kd_contains_any(const char *text, const char *const *keywords);

/* Number of Unicode code points of a UTF-8 string. */
size_t kd_utf8_len(const char *s);
/* Byte offset of code point number `index` of s[0..len), counting as
 * kd_utf8_len does (len when s is shorter). */
size_t kd_utf8_offset(const char *s, size_t len, size_t index);

/* OH short_name(name, max_len): normalize, then keep max_len-3 code points + "...". */
char *kd_short_name(const char *s, size_t max_len);

/* Replace every 0x[0-9a-fA-F]+ with 0xADDR (lowercase x only). */
char *kd_replace_hex_addr(const char *s);

/* OH/KH canonicalize_name (reference §4): normalize, hex, cut the last
 * balanced "(...)" of a "void ...)" name. */
char *kd_canonicalize_kernel_name(const char *s);

/* OH canonicalize_python_scope_name: normalize, hex, then "P(L): F" ->
 * normrepo(P)(L): F using the shortest P (regex (.+?)\((\d+)\): (.+)$). */
char *kd_canonicalize_python_scope_name(const char *s);

/* PC normalize_repo_relative_path (reference §1). */
char *kd_normalize_repo_relative_path(const char *s);

/* KH normalize_source_location: "P(L): F" -> repo(P)+":"+L+" "+F (kernel-sites.md §2). */
char *kd_normalize_source_location(const char *s);

/* compact form: remove [^0-9A-Za-z]+ from normalize_text(s), lowercase. */
char *kd_compact_match_text(const char *s);

/* PC predicates (reference §1). Inputs are the raw strings; they normalize
 * and lowercase themselves as the reference does. */
bool kd_is_trace_metadata_name(const char *name);
bool kd_is_annotation_event(const char *name, const char *cat);
bool kd_is_non_kernel_trace_category(const char *cat);
bool kd_looks_like_python_scope_name(const char *name);
/* The same two tests given normalize_text(s).lower() (kd_normalized_lower_into),
 * for callers that have it already. */
bool kd_is_non_kernel_category_lowered(const char *lowered);
bool kd_looks_like_python_scope_lowered(const char *lowered);

typedef enum { KD_STAGE_EXTEND = 0, KD_STAGE_DECODE = 1, KD_STAGE_ALL = 2 } kd_stage;
#define KD_STAGE_COUNT 3 /* the stages, for arrays indexed by kd_stage */
/* "extend", "decode", "all" */
const char *kd_stage_name(kd_stage s);
/* "extend/prefill", "decode", "all" (reference §3.6 headings). */
const char *kd_stage_display_name(kd_stage s);
/* Parse "extend"/"decode"/"all" (also "prefill" as extend); false otherwise. */
bool kd_stage_from_name(const char *name, kd_stage *out);

#endif
