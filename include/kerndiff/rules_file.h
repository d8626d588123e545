/* rules_file.h — classification profiles from a file, and --rules NAME|FILE
 * (the taxonomy issue; docs/taxonomy.md). A rules file is INI (libinih):
 *
 *   [rules]
 *   base = default                 ; or reference (default: default)
 *   name = my-stack                ; shown in reports (default: the path)
 *
 *   [category communication]       ; a category of the base: extended
 *   strong = rccl, hcom, oneccl    ; keywords (lowered substrings), comma-separated
 *   weak = dispatch                ; only when the name is not compute-like
 *   regex = ^my_allreduce_[0-9]+$  ; a POSIX extended regex on the lowered name (repeatable)
 *   replace = true                 ; drop the base's keywords of this category first
 *
 *   [category attention]           ; a new category
 *   kind = compute                 ; what it behaves as: compute, communication,
 *                                  ; memory, elementwise or other (required)
 *   strong = fmha, flash_attn, sage_fwd
 *
 *   [order]                        ; optional: the first-match-wins order of the steps
 *   steps = memory, communication, attention, compute, elementwise, memory:weak, communication:weak
 *
 *   [match]                        ; the matcher's rules (match.h), like --match-rule
 *   aiter::fmha_fwd* = sage_fwd
 *
 * Without [order], a new category's steps go before the base's (a specific
 * category wins over a generic one), in file order: its strong step, then
 * its weak one if it has weak keywords (so does a step a base category did
 * not have, e.g. weak keywords for a category with none). Everything else
 * of the profile (the kernel-name hint, the kernel-site categories, stage
 * keywords, launch names) is the base's.
 *
 * A category may have more than one step of a strength (the default profile
 * tries a few precise GEMM-library keywords of compute before the precise
 * elementwise step, and the rest of compute after it): its steps are
 * numbered in the base's order, and the keys strong2, strong3..., weak2...
 * (regex2... with strong2...) extend them; in [order] they are
 * CATEGORY:strong2, CATEGORY:weak2... (strong and weak are the first ones:
 * "strong = x" on such a category extends its first strong step).
 *
 * The details:
 *   - Lines: ';' or '#' starts a comment line, " ;" an inline one; a value
 *     continues on indented lines (a list: "strong = a, b," then "    c");
 *     a line holds at most 199 bytes (libinih's buffer). UTF-8 only.
 *   - Sections: each at most once. [rules] keys: base, name; [category
 *     NAME] (NAME of a-z 0-9 _ - .) keys: kind, strong, weak, regex,
 *     replace (and strongN, weakN, regexN); [order]: steps; [match]: any
 *     OLD = NEW.
 *   - strong, weak, regex (and their tiers) and steps may be repeated (they
 *     add); base, name, kind, replace may not. List items are trimmed
 *     (keywords lowered); one in double quotes is taken as it is ("  norm",
 *     "a,b").
 *   - regex: a step's regex lines, joined as (A)|(B)|..., are one POSIX ERE
 *     of the step (regex: the strong step), tried on the lowered name (write
 *     lower case; no back-references).
 *   - replace = true (or false; yes/no, on/off, 1/0) drops the base's
 *     keywords and regexes of every step of the category (the steps keep
 *     their places) before the file's are added. kind on a base category
 *     must be its kind.
 *   - The compute-like guard of the weak steps: the strong keywords (every
 *     strong tier) of every category of kind compute.
 *   - [order] steps: CATEGORY (its strong step; also CATEGORY:strong),
 *     CATEGORY:weak, CATEGORY:strong2..., each once, every step with
 *     keywords or a regex listed (the category must exist; a step it has
 *     not is empty).
 *   - [match]: the line is split at its '=' (so "::" is fine), exactly one
 *     '=' and a glob on each side; becomes "OLD=NEW" after the base's rules.
 *   - The profile's name: [rules] name, else the path; its source:
 *     "PATH (hash H)", H the 64-bit FNV-1a of the file's bytes, 16 hex
 *     digits. */
#ifndef KERNDIFF_RULES_FILE_H
#define KERNDIFF_RULES_FILE_H

#include <stdbool.h>
#include <stdio.h>

#include "kerndiff/classify.h"
#include "kerndiff/error.h"

/* A profile built from a file: owns its kd_rules and everything it points
 * to (strings, keyword lists, compiled regexes). */
typedef struct kd_rules_owned kd_rules_owned;

/* Loads PATH. A bad file is KD_EINPUT with one line "PATH:LINE: what", the
 * first problem found (the lines are read in order, then the whole file's
 * checks: new categories, their number, [order]) (unknown section or key, bad regex, unknown or
 * missing base, duplicate section or key, a new category without kind or
 * with a bad one, an unknown step in [order] or a step left out of it, more
 * than KD_CAT_MAX categories, a match rule without a side, a line libinih
 * cannot read or too long); a file that cannot be read is KD_EINPUT "PATH:
 * cannot open: REASON" (or cannot read); KD_ENOMEM "PATH: out of memory".
 * *out is NULL unless KD_OK. */
kd_status kd_rules_load_file(const char *path, kd_rules_owned **out, kd_error *err);
const kd_rules *kd_rules_owned_get(const kd_rules_owned *o);
void kd_rules_owned_free(kd_rules_owned *o);

/* --rules SPEC: a built-in profile's name ("default", "reference"; a file
 * of that name must be given as ./default) or else a file. *owned is set
 * (and must be freed) when SPEC was a file, NULL otherwise. */
kd_status kd_rules_resolve(const char *spec, const kd_rules **rules, kd_rules_owned **owned, kd_error *err);

/* The profile in the file syntax (kerndiff rules --show): a file a user can
 * start from; loading it back gives the same classification. Written as
 * base = reference, every built-in category with replace = true and its
 * lists, every other category with its kind, an explicit [order], then
 * [match]; comment lines say so. A category's steps keep their tiers
 * (strong, strong2...). A step's regex is written from the lines
 * kd_rules_load_file keeps with it: a profile's regexes must come from a
 * rules file (the built-in profiles have none). False on a write error or
 * out of memory. */
bool kd_rules_write_ini(const kd_rules *r, FILE *out);

#endif
