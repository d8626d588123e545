/* payload.h — a kernel-site stage payload (kernel-sites.md §7, reference
 * §2.3): canonical kernel name -> {category, sites[], best_location}. Built by
 * the kernel-site module from every kernel's cpu_op / Python frame / launch;
 * the overlap module reads it through kd_kmap_lookup (mapping kernel map) and
 * kd_source_map_merge_payload (formal stage payload). Strings live in the
 * payload's own interner; 0 means null. */
#ifndef KERNDIFF_PAYLOAD_H
#define KERNDIFF_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "kerndiff/hashmap.h"
#include "kerndiff/intern.h"
#include "kerndiff/text.h"

typedef struct {
    kd_sid location, display_location;
    int64_t launches;
    double total_us;               /* rounded to 3 decimals */
    double share_pct_within_kernel; /* rounded to 3 decimals */
    kd_sid top_cpu_op, stack;       /* 0 = null */
} kd_site;

typedef struct {
    kd_sid name;
    const char *category; /* KH category (static string) */
    kd_site *sites;
    size_t n_sites;
    kd_sid best_location;
} kd_kernel_entry;

typedef struct {
    kd_interner *strings; /* shared by the payloads of one kernel map; not owned */
    kd_kernel_entry *v;   /* sorted by name (code-point order) */
    size_t n;
} kd_stage_payload;

/* The mapping kernel map's lookup (kernel-sites.md §9): the entry for a
 * canonical kernel name in `stage` (with its alias stages, then global), or
 * NULL. ctx is the kernel map. */
typedef const kd_kernel_entry *(*kd_kmap_lookup_fn)(void *ctx, kd_stage stage, const char *name,
                                                    const kd_interner **strings);

#endif
