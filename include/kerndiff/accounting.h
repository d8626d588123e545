/* accounting.h — where every kernel event of a side's analysed pid went
 * (divergence D7: nothing is dropped silently). The counts are made where
 * the kernels are sorted into stages (extract.c) and every report repeats
 * them, so that they add up in front of the reader. */
#ifndef KERNDIFF_ACCOUNTING_H
#define KERNDIFF_ACCOUNTING_H

#include <stdint.h>
#include <stdio.h>

#include "kerndiff/jsonw.h"
#include "kerndiff/trace.h"

/* read = analysed + outside + unclaimed + zero_duration + the skipped. */
typedef struct {
    uint64_t read;
    uint64_t analysed;       /* in a stage bundle of the reference */
    uint64_t outside;        /* in an annotated trace, but in no stage annotation */
    double outside_us;
    uint64_t unclaimed;      /* in a stage an earlier file of the side holds */
    double unclaimed_us;
    uint64_t zero_duration;  /* no duration: the reference drops them */
    uint64_t skipped[KD_SKIP_COUNT]; /* malformed, by reason */
    uint64_t other_pids;     /* kernels of the pids not chosen (not in read) */
} kd_kernel_accounting;

uint64_t kd_accounting_skipped(const kd_kernel_accounting *a);

/* "N read = A in a stage + O outside every stage + U in a stage already
 * held + Z zero-duration + S skipped (bad_ts 2, ...)", no newline. */
void kd_accounting_write_text(const kd_kernel_accounting *a, FILE *out);
/* The object {"read": …, "analysed": …, …, "skipped": {reason: n}, …}. */
void kd_accounting_write_json(kd_json *j, const kd_kernel_accounting *a);

#endif
