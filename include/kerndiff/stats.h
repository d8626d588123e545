/* stats.h — is a kernel's change real? (the noise issue): the distribution
 * of a kernel's per-launch times on one side, a two-sided Mann–Whitney rank
 * test between the sides, the Hodges–Lehmann shift with its 95 % interval,
 * and the Benjamini–Hochberg procedure over the rows of a stage. Everything
 * is deterministic: no resampling; large samples are thinned to evenly
 * spaced order statistics where a computation would be quadratic. */
#ifndef KERNDIFF_STATS_H
#define KERNDIFF_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A sample's summary. Percentiles interpolate linearly between order
 * statistics (numpy's default); sd is the sample standard deviation (n - 1),
 * 0 for n < 2. All zero for n == 0. */
typedef struct {
    uint64_t n;
    double total, mean, median, p10, p90, min, max, sd;
} kd_dist;

/* The summary of v[0..n) (v is sorted in place). */
void kd_dist_of(double *v, size_t n, kd_dist *out);
/* The p-th percentile (0..100) of a sorted sample. */
double kd_percentile(const double *sorted, size_t n, double p);

/* The Mann–Whitney U test of two sorted samples, two-sided: exact (the
 * permutation distribution of U) when both are small and have no ties,
 * else the normal approximation with the tie correction and a continuity
 * correction. p is 1 when either sample is empty or every value is equal. */
typedef struct {
    double u;     /* U of the first sample */
    double p;     /* two-sided p-value */
    bool exact;
} kd_mwu;
kd_mwu kd_mann_whitney(const double *a, size_t na, const double *b, size_t nb);

/* The Hodges–Lehmann estimate of the shift b - a (the median of the
 * pairwise differences) and its two-sided `conf` interval (Moses, from the
 * normal approximation of U's quantile). Samples larger than
 * KD_HL_MAX_SAMPLE are thinned to that many evenly spaced order statistics
 * first, which widens the interval a little and keeps it deterministic. */
#define KD_HL_MAX_SAMPLE 500
typedef struct {
    double shift, lo, hi;
} kd_hl;
bool kd_hodges_lehmann(const double *a, size_t na, const double *b, size_t nb, double conf, kd_hl *out);

/* Benjamini–Hochberg at rate fdr over p[0..n): reject[i] set for the
 * discoveries; q[i] (may be NULL) the adjusted p-values. false on OOM. */
bool kd_benjamini_hochberg(const double *p, size_t n, double fdr, bool *reject, double *q);

/* Student's t quantile for df degrees of freedom (df >= 1; a table to 30,
 * then the Cornish–Fisher expansion around the normal quantile). */
double kd_t_quantile(double p, double df);

/* Standard normal upper tail and quantile (libm's erfc; the quantile by
 * Acklam's rational approximation refined by one Halley step). */
double kd_normal_sf(double z);
double kd_normal_quantile(double p);

#endif
