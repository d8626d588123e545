/* load_internal.h — what the loader's byte pump (load.c) and its keep rules
 * (keep.c) share: the fields of one decoded event and the keeper that
 * decides, at each event's closing brace, what of it the trace keeps. Not
 * part of the public API. */
#ifndef KERNDIFF_LOAD_INTERNAL_H
#define KERNDIFF_LOAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "kerndiff/classify.h"
#include "kerndiff/error.h"
#include "kerndiff/trace.h"
#include "kerndiff/value.h"

/* ---- the decoded event: the fields the pipeline reads ----------------- */

typedef enum {
    F_PH, F_CAT, F_NAME, F_PID, F_TID, F_TS, F_DUR, F_ARGS,
    F_A_EXT, F_A_CORR, F_A_STREAM, F_A_CUDA_STREAM, F_A_NAME,
    F_COUNT,
    F_NONE = -1
} field_id;

typedef struct {
    kd_jtype type;
    bool boolean, container_empty;
    size_t off, len; /* text in the scratch buffer */
} field_val;


/* The last string of a repeating field (pid, tid, cat): most events repeat
 * it, so its id is remembered instead of hashed again. */
typedef struct {
    char text[48];
    size_t len;
    kd_jtype type;
    kd_sid id;
} last_string;

/* The non-finite filter writes NaN as this overflowing literal (Infinity as
 * 1e999); reading it back as "nan" keeps str() of a NaN value "nan". */
#define NAN_LITERAL "1e9999"

/* A number's type from its text (yajl_number hands over the raw text). */
static inline kd_jtype kd_number_type(const char **text, size_t *len)
{
    if (*len == sizeof NAN_LITERAL - 1 && memcmp(*text, NAN_LITERAL, *len) == 0) {
        *text = "nan";
        *len = 3;
        return KD_J_FLOAT;
    }
    for (size_t i = 0; i < *len; i++)
        if ((*text)[i] == '.' || (*text)[i] == 'e' || (*text)[i] == 'E')
            return KD_J_FLOAT;
    return KD_J_INT;
}

/* Per distinct string: cached predicate results (keep.c). */
typedef struct kd_sid_info kd_sid_info;

/* The keep rules' state over one pass: the trace being filled, the
 * classification it is loaded with, the per-string caches; and, while an
 * event is being decided, its fields. */
typedef struct {
    kd_trace *t;
    const kd_rules *rules;
    kd_status *status; /* the pass's: set on out-of-memory */
    kd_sid_info *info;
    size_t info_cap;
    last_string last[3];
    const field_val *f; /* the event being decided: its fields */
    const char *text;   /* and their text */
} kd_keeper;

/* A keeper filling t (rules NULL: the reference's); status receives
 * KD_ENOMEM when memory runs out. */
void kd_keeper_init(kd_keeper *k, kd_trace *t, const kd_rules *rules, kd_status *status);
void kd_keeper_free(kd_keeper *k);

/* At an event's closing brace: keeps what the pipeline needs of the event
 * whose fields are f[F_COUNT] (text in text), counts what it skips. false
 * when memory ran out. */
bool kd_keep_event(kd_keeper *k, const field_val *f, const char *text);

/* A second traceEvents key: Python keeps the last value, so what the
 * earlier list gave is dropped. */
void kd_keeper_forget(kd_keeper *k);

#endif
