/* accounting.c — where every kernel of a side went, as text and JSON
 * (accounting.h). */
#include "config.h"

#include "kerndiff/accounting.h"

uint64_t kd_accounting_skipped(const kd_kernel_accounting *a)
{
    uint64_t n = 0;
    for (int r = 0; r < KD_SKIP_COUNT; r++)
        n += a->skipped[r];
    return n;
}

void kd_accounting_write_text(const kd_kernel_accounting *a, FILE *out)
{
    fprintf(out,
            "%llu read = %llu in a stage + %llu outside every stage + %llu in a stage already held + "
            "%llu zero-duration + %llu skipped",
            (unsigned long long)a->read, (unsigned long long)a->analysed, (unsigned long long)a->outside,
            (unsigned long long)a->unclaimed, (unsigned long long)a->zero_duration,
            (unsigned long long)kd_accounting_skipped(a));
    const char *sep = " (";
    for (int k = 0; k < KD_SKIP_COUNT; k++)
        if (a->skipped[k]) {
            fprintf(out, "%s%s %llu", sep, kd_skip_reason_name((kd_skip_reason)k),
                    (unsigned long long)a->skipped[k]);
            sep = ", ";
        }
    if (*sep == ',')
        fputc(')', out);
}

void kd_accounting_write_json(kd_json *j, const kd_kernel_accounting *a)
{
    kd_json_map_open(j);
    kd_json_key(j, "read");
    kd_json_int(j, (int64_t)a->read);
    kd_json_key(j, "analysed");
    kd_json_int(j, (int64_t)a->analysed);
    kd_json_key(j, "outside_every_stage");
    kd_json_int(j, (int64_t)a->outside);
    kd_json_key(j, "outside_every_stage_us");
    kd_json_double(j, a->outside_us);
    kd_json_key(j, "in_a_stage_already_held");
    kd_json_int(j, (int64_t)a->unclaimed);
    kd_json_key(j, "in_a_stage_already_held_us");
    kd_json_double(j, a->unclaimed_us);
    kd_json_key(j, "zero_duration");
    kd_json_int(j, (int64_t)a->zero_duration);
    kd_json_key(j, "skipped");
    kd_json_map_open(j);
    for (int k = 0; k < KD_SKIP_COUNT; k++) {
        kd_json_key(j, kd_skip_reason_name((kd_skip_reason)k));
        kd_json_int(j, (int64_t)a->skipped[k]);
    }
    kd_json_map_close(j);
    kd_json_key(j, "other_pids");
    kd_json_int(j, (int64_t)a->other_pids);
    kd_json_map_close(j);
}
