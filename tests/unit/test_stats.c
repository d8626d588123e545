/* test_stats.c — the statistics of stats.h against independently computed
 * numbers: every expected value below comes from NumPy / SciPy (Debian's
 * python3-numpy 1.24 and python3-scipy 1.10; only needed to re-derive the
 * numbers, never to run the test), and the Python that produced it is in the
 * comment above it. Common preamble of those snippets:
 *
 *     import numpy as np, scipy.stats as ss, math
 *     from math import comb
 *     r = lambda x: repr(float(x))
 *
 * Mann–Whitney: ss.mannwhitneyu(a, b, ...) returns U of its FIRST argument
 * (R1 - n1(n1+1)/2; checked: a entirely below b gives 0), which is our u. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/failalloc.h"
#include "kerndiff/stats.h"
#include "suites.h"

/* Fails unless got is within rel (relative to want, absolute below 1) of want. */
static void near(double got, double want, double rel, const char *what)
{
    double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
    ck_assert_msg(fabs(got - want) <= rel * scale, "%s: got %.17g, want %.17g (tolerance %g)", what, got, want,
                  rel);
}

#define TIGHT 1e-12 /* same arithmetic, possibly another order of operations */
#define PVAL 1e-9   /* asymptotic p-values and the normal functions */

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static void sort(double *v, size_t n) { qsort(v, n, sizeof *v, cmp_double); }

#define N(arr) (sizeof(arr) / sizeof((arr)[0]))

/* ---- kd_dist_of / kd_percentile ------------------------------------------------ */

/* v = np.array([3,1,4,1,5,9,2,6,5.5,3.25])
 * print(len(v), r(v.sum()), r(v.mean()), r(np.percentile(v,50)), r(np.percentile(v,10)),
 *       r(np.percentile(v,90)), r(v.min()), r(v.max()), r(v.std(ddof=1)))
 * -> 10 39.75 3.975 3.625 1.0 6.299999999999999 1.0 9.0 2.4901193634933336 */
START_TEST(test_dist_small)
{
    double v[] = {3, 1, 4, 1, 5, 9, 2, 6, 5.5, 3.25};
    kd_dist d;
    kd_dist_of(v, N(v), &d);
    ck_assert_uint_eq(d.n, 10);
    near(d.total, 39.75, TIGHT, "total");
    near(d.mean, 3.975, TIGHT, "mean");
    near(d.median, 3.625, TIGHT, "median");
    near(d.p10, 1.0, TIGHT, "p10");
    near(d.p90, 6.299999999999999, TIGHT, "p90");
    near(d.min, 1.0, 0, "min");
    near(d.max, 9.0, 0, "max");
    near(d.sd, 2.4901193634933336, TIGHT, "sd");
    /* sorted in place */
    for (size_t i = 1; i < N(v); i++)
        ck_assert(v[i - 1] <= v[i]);
}
END_TEST

/* [r(np.percentile(v,p)) for p in (0,25,33.3,75,99,100)]  (v as above)
 * -> ['1.0', '2.25', '2.997', '5.375', '8.73', '9.0'] */
START_TEST(test_percentile)
{
    double v[] = {3, 1, 4, 1, 5, 9, 2, 6, 5.5, 3.25};
    sort(v, N(v));
    static const double p[] = {0, 25, 33.3, 75, 99, 100};
    static const double want[] = {1.0, 2.25, 2.997, 5.375, 8.73, 9.0};
    for (size_t i = 0; i < N(p); i++) {
        char what[64];
        snprintf(what, sizeof what, "percentile %g", p[i]);
        near(kd_percentile(v, N(v), p[i]), want[i], TIGHT, what);
    }
    /* one value: every percentile is it; none: 0 */
    double one = 7.5;
    near(kd_percentile(&one, 1, 0), 7.5, 0, "n=1 p0");
    near(kd_percentile(&one, 1, 50), 7.5, 0, "n=1 p50");
    near(kd_percentile(&one, 1, 100), 7.5, 0, "n=1 p100");
    near(kd_percentile(NULL, 0, 50), 0.0, 0, "n=0");
}
END_TEST

START_TEST(test_dist_one_and_none)
{
    double one = 42.25;
    kd_dist d;
    kd_dist_of(&one, 1, &d);
    ck_assert_uint_eq(d.n, 1);
    ck_assert(d.total == 42.25 && d.mean == 42.25 && d.median == 42.25);
    ck_assert(d.p10 == 42.25 && d.p90 == 42.25 && d.min == 42.25 && d.max == 42.25);
    ck_assert(d.sd == 0.0); /* n - 1 = 0: defined as 0, not NaN */

    memset(&d, 0xff, sizeof d);
    kd_dist_of(NULL, 0, &d);
    ck_assert_uint_eq(d.n, 0);
    ck_assert(d.total == 0 && d.mean == 0 && d.median == 0 && d.p10 == 0 && d.p90 == 0);
    ck_assert(d.min == 0 && d.max == 0 && d.sd == 0);
}
END_TEST

/* ---- Mann–Whitney ------------------------------------------------------------------ */

/* a=[1.5,3.0,4.2,7.7,9.1]; b=[2.0,5.5,6.1,8.0,10.3,11.0]
 * ss.mannwhitneyu(a,b,alternative='two-sided',method='exact')
 * -> statistic=9.0, pvalue=0.32900432900432897
 * As a rational, by enumerating all C(11,5)=462 arrangements:
 *   from itertools import combinations
 *   ua=9; le=ge=0
 *   for idx in combinations(range(11),5):
 *       u=sum(1 for i in idx for j in range(11) if j not in idx and j<i)
 *       le+=u<=ua; ge+=u>=ua
 *   min(le,ge) -> 76, so p = 2*76/462 */
START_TEST(test_mwu_exact_small)
{
    static const double a[] = {1.5, 3.0, 4.2, 7.7, 9.1}, b[] = {2.0, 5.5, 6.1, 8.0, 10.3, 11.0};
    kd_mwu r = kd_mann_whitney(a, N(a), b, N(b));
    ck_assert(r.exact);
    near(r.u, 9.0, 0, "u");
    near(r.p, 2.0 * 76.0 / 462.0, TIGHT, "exact p");
    near(r.p, 0.32900432900432897, TIGHT, "exact p (scipy)");
    /* the other way round: U of the first sample is nm - 9, same p */
    r = kd_mann_whitney(b, N(b), a, N(a));
    ck_assert(r.exact);
    near(r.u, 21.0, 0, "u swapped");
    near(r.p, 2.0 * 76.0 / 462.0, TIGHT, "exact p swapped");
}
END_TEST

/* The largest exact case, na*nb = 400:
 * a=[0.25+3*i for i in range(20)]; b=[1.0+2.5*j for j in range(20)]  (no ties)
 * ss.mannwhitneyu(a,b,method='exact') -> statistic=226.0, pvalue=0.4945234964967034
 * As a rational, counting arrangements by U with integers:
 *   @functools.lru_cache(None)
 *   def f(n,m,u):
 *       if u<0: return 0
 *       if n==0 or m==0: return 1 if u==0 else 0
 *       return f(n-1,m,u-m)+f(n,m-1,u)
 *   min(sum(f(20,20,k) for k in range(227)), sum(f(20,20,k) for k in range(226,401)))
 *   -> 34084173706 of comb(40,20) = 137846528820 */
START_TEST(test_mwu_exact_boundary)
{
    double a[20], b[20];
    for (int i = 0; i < 20; i++) {
        a[i] = 0.25 + 3.0 * i;
        b[i] = 1.0 + 2.5 * i;
    }
    kd_mwu r = kd_mann_whitney(a, 20, b, 20);
    ck_assert(r.exact);
    near(r.u, 226.0, 0, "u");
    near(r.p, 2.0 * 34084173706.0 / 137846528820.0, TIGHT, "exact p 20x20");
    near(r.p, 0.4945234964967034, TIGHT, "exact p 20x20 (scipy)");
}
END_TEST

/* One past the boundary (21 x 20 = 420), no ties: the normal approximation.
 * a=[0.25+3*i for i in range(21)]; b=[1.0+2.5*j for j in range(20)]
 * ss.mannwhitneyu(a,b,alternative='two-sided',method='asymptotic',use_continuity=True)
 * -> statistic=246.0, pvalue=0.35449174444421117 */
START_TEST(test_mwu_asymptotic_no_ties)
{
    double a[21], b[20];
    for (int i = 0; i < 21; i++)
        a[i] = 0.25 + 3.0 * i;
    for (int j = 0; j < 20; j++)
        b[j] = 1.0 + 2.5 * j;
    kd_mwu r = kd_mann_whitney(a, 21, b, 20);
    ck_assert(!r.exact);
    near(r.u, 246.0, 0, "u");
    near(r.p, 0.35449174444421117, PVAL, "asymptotic p 21x20");
}
END_TEST

/* Small with ties: the normal approximation with the tie correction.
 * ss.mannwhitneyu([1,2,2,3,5],[2,3,4,4,6,7],alternative='two-sided',method='asymptotic',
 *                 use_continuity=True) -> statistic=6.5, pvalue=0.13862587987892763 */
START_TEST(test_mwu_small_ties)
{
    static const double a[] = {1, 2, 2, 3, 5}, b[] = {2, 3, 4, 4, 6, 7};
    kd_mwu r = kd_mann_whitney(a, N(a), b, N(b));
    ck_assert(!r.exact);
    near(r.u, 6.5, 0, "u");
    near(r.p, 0.13862587987892763, PVAL, "p with ties");
}
END_TEST

/* 40 vs 50 values, 25 values shared between the sides:
 * a=sorted([10.0+(i*7%40) for i in range(40)]); b=sorted([20.0+(j*13%50)*0.5 for j in range(50)])
 * ss.mannwhitneyu(a,b,alternative='two-sided',method='asymptotic',use_continuity=True)
 * -> statistic=862.5, pvalue=0.26590103059866665 */
START_TEST(test_mwu_large_ties)
{
    double a[40], b[50];
    for (int i = 0; i < 40; i++)
        a[i] = 10.0 + (i * 7 % 40);
    for (int j = 0; j < 50; j++)
        b[j] = 20.0 + (j * 13 % 50) * 0.5;
    sort(a, 40);
    sort(b, 50);
    kd_mwu r = kd_mann_whitney(a, 40, b, 50);
    ck_assert(!r.exact);
    near(r.u, 862.5, 0, "u");
    near(r.p, 0.26590103059866665, PVAL, "p 40x50");
}
END_TEST

/* ss.mannwhitneyu(a,a,method='asymptotic')  (a of the exact case) -> statistic=12.5, pvalue=1.0
 * ss.mannwhitneyu([3.,3,3],[3.,3,3,3],method='asymptotic') -> statistic=6.0, pvalue=1.0 */
START_TEST(test_mwu_no_difference)
{
    static const double a[] = {1.5, 3.0, 4.2, 7.7, 9.1};
    kd_mwu r = kd_mann_whitney(a, N(a), a, N(a));
    near(r.u, 12.5, 0, "u identical");
    ck_assert_msg(r.p == 1.0, "identical samples: p %.17g", r.p);

    static const double c[] = {3, 3, 3}, d[] = {3, 3, 3, 3};
    r = kd_mann_whitney(c, N(c), d, N(d));
    near(r.u, 6.0, 0, "u all equal");
    ck_assert_msg(r.p == 1.0, "all values equal: p %.17g", r.p);
    ck_assert(!r.exact);
}
END_TEST

START_TEST(test_mwu_empty)
{
    static const double a[] = {1, 2, 3};
    kd_mwu r = kd_mann_whitney(a, N(a), NULL, 0);
    ck_assert(r.p == 1.0 && !r.exact && r.u == 0.0);
    r = kd_mann_whitney(NULL, 0, a, N(a));
    ck_assert(r.p == 1.0 && !r.exact && r.u == 0.0);
    r = kd_mann_whitney(NULL, 0, NULL, 0);
    ck_assert(r.p == 1.0 && !r.exact);
}
END_TEST

/* Complete separation: the smallest exact p, 2 / C(n+m, n).
 * ss.mannwhitneyu([1,2,3,4,5.],[6,7,8,9,10,11.],method='exact') -> statistic=0.0, pvalue=0.004329004329004329
 * ss.mannwhitneyu([6,7,8,9,10,11.],[1,2,3,4,5.],method='exact') -> statistic=30.0, same p
 * 2/comb(11,5) -> 0.004329004329004329
 * ss.mannwhitneyu(list(range(10)),list(range(10,22)),method='exact') -> statistic=0.0,
 *   pvalue=3.092882349848294e-06 == 2/comb(22,10) */
START_TEST(test_mwu_separation)
{
    static const double a[] = {1, 2, 3, 4, 5}, b[] = {6, 7, 8, 9, 10, 11};
    kd_mwu r = kd_mann_whitney(a, N(a), b, N(b));
    ck_assert(r.exact);
    near(r.u, 0.0, 0, "u below");
    near(r.p, 2.0 / 462.0, TIGHT, "p below");
    r = kd_mann_whitney(b, N(b), a, N(a));
    ck_assert(r.exact);
    near(r.u, 30.0, 0, "u above");
    near(r.p, 2.0 / 462.0, TIGHT, "p above");

    double c[10], d[12];
    for (int i = 0; i < 10; i++)
        c[i] = i;
    for (int j = 0; j < 12; j++)
        d[j] = 10 + j;
    r = kd_mann_whitney(c, 10, d, 12);
    ck_assert(r.exact);
    near(r.u, 0.0, 0, "u 10x12");
    ck_assert_msg(fabs(r.p - 2.0 / 646646.0) <= 1e-12 * (2.0 / 646646.0), "p 10x12: got %.17g, want %.17g", r.p,
                  2.0 / 646646.0);
    ck_assert_msg(fabs(r.p - 3.092882349848294e-06) <= 1e-12 * 3.092882349848294e-06, "p 10x12 (scipy)");
}
END_TEST

/* The exact distribution's tables cannot be allocated: the normal
 * approximation instead (same samples as test_mwu_exact_small).
 * ss.mannwhitneyu(a,b,alternative='two-sided',method='asymptotic',use_continuity=True)
 * -> statistic=9.0, pvalue=0.31530245208174557 */
START_TEST(test_mwu_exact_oom)
{
    static const double a[] = {1.5, 3.0, 4.2, 7.7, 9.1}, b[] = {2.0, 5.5, 6.1, 8.0, 10.3, 11.0};
    for (long n = 0; n < 2; n++) {
        failalloc_arm(n, FAILALLOC_ONE);
        kd_mwu r = kd_mann_whitney(a, N(a), b, N(b));
        long failed = failalloc_disarm();
        ck_assert_int_eq(failed, 1);
        ck_assert(!r.exact);
        near(r.u, 9.0, 0, "u");
        near(r.p, 0.31530245208174557, PVAL, "p after OOM");
    }
}
END_TEST

/* ---- Hodges–Lehmann --------------------------------------------------------------- */

/* The shift and Moses bounds, from every pairwise difference:
 *   def hl(a,b,conf=0.95):
 *       a=np.asarray(a,float); b=np.asarray(b,float)
 *       d=np.sort(np.subtract.outer(b,a).ravel()); n,m=len(a),len(b); nm=n*m
 *       z=ss.norm.ppf(1-(1-conf)/2)
 *       craw=nm/2 - z*math.sqrt(n*m*(n+m+1)/12); C=max(0,math.floor(craw))
 *       return r(np.median(d)), r(d[C]), r(d[nm-1-C]), craw
 * (craw is printed to show it is not within rounding of an integer.) */

/* a=[1.5,3.0,4.2,7.7,9.1,12.0,2.2]; b=[2.0,5.5,6.1,8.0,10.3,11.0,14.2,9.9]
 * hl(a,b)      -> ('2.85', '-1.6999999999999993', '7.300000000000001', 11.063975517303515)
 * hl(a,b,0.90) -> ('2.85', '-1.0999999999999996', '6.8', 13.786840209189084) */
START_TEST(test_hl_small)
{
    double a[] = {1.5, 3.0, 4.2, 7.7, 9.1, 12.0, 2.2}, b[] = {2.0, 5.5, 6.1, 8.0, 10.3, 11.0, 14.2, 9.9};
    sort(a, N(a));
    sort(b, N(b));
    kd_hl h;
    ck_assert(kd_hodges_lehmann(a, N(a), b, N(b), 0.95, &h));
    near(h.shift, 2.85, TIGHT, "shift");
    near(h.lo, -1.6999999999999993, TIGHT, "lo 95%");
    near(h.hi, 7.300000000000001, TIGHT, "hi 95%");
    ck_assert(kd_hodges_lehmann(a, N(a), b, N(b), 0.90, &h));
    near(h.shift, 2.85, TIGHT, "shift (90%)");
    near(h.lo, -1.0999999999999996, TIGHT, "lo 90%");
    near(h.hi, 6.8, TIGHT, "hi 90%");
}
END_TEST

/* Heavy ties (the three-way partition) and an odd number of differences:
 * hl([float(i%3) for i in range(30)],[float(i%4+1) for i in range(25)]) -> ('1.0', '1.0', '2.0', 259.04696695459216)
 * hl([float(i%5) for i in range(7)],[float(i%2)*2 for i in range(9)])   -> ('-1.0', '-2.0', '1.0', 12.983785490901475)
 * Two values each: craw < 0, so C = 0 and the interval is [min, max] of the differences:
 * hl([1.0,4.0],[2.0,7.0]) -> ('2.0', '-2.0', '6.0', -0.5303026237633199) */
START_TEST(test_hl_ties_and_tiny)
{
    double a[30], b[25];
    for (int i = 0; i < 30; i++)
        a[i] = i % 3;
    for (int i = 0; i < 25; i++)
        b[i] = i % 4 + 1;
    sort(a, 30);
    sort(b, 25);
    kd_hl h;
    ck_assert(kd_hodges_lehmann(a, 30, b, 25, 0.95, &h));
    near(h.shift, 1.0, TIGHT, "ties shift");
    near(h.lo, 1.0, TIGHT, "ties lo");
    near(h.hi, 2.0, TIGHT, "ties hi");

    double c[7], d[9];
    for (int i = 0; i < 7; i++)
        c[i] = i % 5;
    for (int i = 0; i < 9; i++)
        d[i] = (i % 2) * 2;
    sort(c, 7);
    sort(d, 9);
    ck_assert(kd_hodges_lehmann(c, 7, d, 9, 0.95, &h));
    near(h.shift, -1.0, TIGHT, "odd shift");
    near(h.lo, -2.0, TIGHT, "odd lo");
    near(h.hi, 1.0, TIGHT, "odd hi");

    static const double e[] = {1.0, 4.0}, f[] = {2.0, 7.0};
    ck_assert(kd_hodges_lehmann(e, 2, f, 2, 0.95, &h));
    near(h.shift, 2.0, TIGHT, "tiny shift");
    near(h.lo, -2.0, TIGHT, "tiny lo");
    near(h.hi, 6.0, TIGHT, "tiny hi");
}
END_TEST

/* a = [1.5,3.0,4.2,7.7,9.1,12.0,2.2]; hl(a,a) -> ('0.0', '-4.8999999999999995', '4.8999999999999995', 9.160855539909821) */
START_TEST(test_hl_identical)
{
    double a[] = {1.5, 3.0, 4.2, 7.7, 9.1, 12.0, 2.2};
    sort(a, N(a));
    kd_hl h;
    ck_assert(kd_hodges_lehmann(a, N(a), a, N(a), 0.95, &h));
    ck_assert_msg(h.shift == 0.0, "identical: shift %.17g", h.shift);
    ck_assert(h.lo <= 0.0 && 0.0 <= h.hi);
    near(h.lo, -4.8999999999999995, TIGHT, "identical lo");
    near(h.hi, 4.8999999999999995, TIGHT, "identical hi");
}
END_TEST

START_TEST(test_hl_empty)
{
    static const double a[] = {1, 2, 3};
    kd_hl h;
    ck_assert(kd_hodges_lehmann(a, 3, NULL, 0, 0.95, &h));
    ck_assert(isnan(h.shift) && isnan(h.lo) && isnan(h.hi));
    ck_assert(kd_hodges_lehmann(NULL, 0, a, 3, 0.95, &h));
    ck_assert(isnan(h.shift) && isnan(h.lo) && isnan(h.hi));
}
END_TEST

/* Two samples of 5000 (skewed, deterministic), thinned to 500 each; the
 * full-sample shift from all 25 000 000 differences:
 *   k =np.array([(i*7919)%5000   for i in range(5000)],dtype=np.int64)
 *   k2=np.array([(j*104729)%5000 for j in range(5000)],dtype=np.int64)
 *   A=100.0+(k*k)/250000.0; B=103.0+(k2*k2)/200000.0
 *   r(np.median(np.subtract.outer(B,A).ravel())) -> '7.246965000000003'
 * (For information, hl() on numpy's own 500-point thinning of A and B,
 *  v[floor(k*(n-1)/499+0.5)], gives ('7.2399725', '4.090080999999998', '11.033549000000008').) */
START_TEST(test_hl_thinned)
{
    enum { NS = 5000 };
    double *a = malloc(NS * sizeof *a), *b = malloc(NS * sizeof *b);
    ck_assert(a && b);
    for (long i = 0; i < NS; i++) {
        long k = (i * 7919) % 5000, k2 = (i * 104729) % 5000;
        a[i] = 100.0 + (double)(k * k) / 250000.0;
        b[i] = 103.0 + (double)(k2 * k2) / 200000.0;
    }
    sort(a, NS);
    sort(b, NS);
    const double full = 7.246965000000003;
    kd_hl h;
    ck_assert(kd_hodges_lehmann(a, NS, b, NS, 0.95, &h));
    ck_assert_msg(fabs(h.shift - full) <= 0.01 * full, "thinned shift %.17g, full-sample %.17g", h.shift, full);
    ck_assert_msg(h.lo <= full && full <= h.hi, "interval [%.17g, %.17g] misses the full-sample shift %.17g", h.lo,
                  h.hi, full);
    /* what evenly spaced order statistics give (numpy, above) */
    near(h.shift, 7.2399725, 1e-9, "thinned shift vs numpy thinning");
    near(h.lo, 4.090080999999998, 1e-9, "thinned lo vs numpy thinning");
    near(h.hi, 11.033549000000008, 1e-9, "thinned hi vs numpy thinning");
    free(a);
    free(b);
}
END_TEST

/* Every allocation failing in turn: false, and the result left NaN. */
START_TEST(test_hl_oom)
{
    double a[] = {1.5, 2.2, 3.0, 4.2, 7.7, 9.1, 12.0}, b[] = {2.0, 5.5, 6.1, 8.0, 9.9, 10.3, 11.0, 14.2};
    for (long n = 0;; n++) {
        kd_hl h;
        failalloc_arm(n, FAILALLOC_ONE);
        bool ok = kd_hodges_lehmann(a, N(a), b, N(b), 0.95, &h);
        long failed = failalloc_disarm();
        if (!failed) {
            ck_assert(ok);
            near(h.shift, 2.85, TIGHT, "shift after the OOM runs");
            ck_assert(n >= 1);
            break;
        }
        ck_assert_msg(!ok, "allocation %ld failed but the call succeeded", n);
        ck_assert(isnan(h.shift) && isnan(h.lo) && isnan(h.hi));
        ck_assert(n < 100);
    }
}
END_TEST

/* ---- Benjamini–Hochberg ------------------------------------------------------------ */

/* The standard step-up procedure by hand in numpy:
 *   def bh(p,alpha):
 *       p=np.asarray(p,float); n=len(p); o=np.argsort(p,kind='stable'); ps=p[o]
 *       k=np.arange(1,n+1); ok=np.nonzero(ps<=k/n*alpha)[0]
 *       cut=ok.max()+1 if len(ok) else 0
 *       rej=np.zeros(n,bool); rej[o[:cut]]=True
 *       q=np.minimum.accumulate((ps*n/k)[::-1])[::-1]; q=np.minimum(q,1)
 *       qq=np.empty(n); qq[o]=q
 *       return rej.astype(int).tolist(), [r(x) for x in qq]
 *   p=[0.041,0.001,0.212,0.039,0.074,0.008,0.216,0.042,0.205,0.06]
 *   bh(p,0.05) -> ([0,1,0,0,0,1,0,0,0,0],
 *                  ['0.084','0.01','0.21600000000000003','0.084','0.10571428571428572','0.04',
 *                   '0.21600000000000003','0.084','0.21600000000000003','0.09999999999999999'])
 *   bh(p,0.10) -> ([1,1,0,1,0,1,0,1,0,1], same q)   # 0.039 and 0.041 fail their own
 *                                                   # thresholds, 0.042 and 0.06 pass theirs
 *   bh(p,0.25) -> (all 1, same q) */
START_TEST(test_bh_textbook)
{
    static const double p[] = {0.041, 0.001, 0.212, 0.039, 0.074, 0.008, 0.216, 0.042, 0.205, 0.06};
    static const double want_q[] = {0.084, 0.01,  0.21600000000000003, 0.084, 0.10571428571428572,
                                    0.04,  0.21600000000000003, 0.084, 0.21600000000000003, 0.09999999999999999};
    static const bool at05[] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0};
    static const bool at10[] = {1, 1, 0, 1, 0, 1, 0, 1, 0, 1};
    bool rej[10];
    double q[10];
    ck_assert(kd_benjamini_hochberg(p, 10, 0.05, rej, q));
    for (int i = 0; i < 10; i++) {
        char what[48];
        snprintf(what, sizeof what, "q[%d] (p %g)", i, p[i]);
        near(q[i], want_q[i], TIGHT, what);
        ck_assert_msg(rej[i] == at05[i], "fdr 0.05: p %g rejected %d, want %d", p[i], rej[i], at05[i]);
    }
    ck_assert(kd_benjamini_hochberg(p, 10, 0.10, rej, NULL)); /* q may be NULL */
    for (int i = 0; i < 10; i++)
        ck_assert_msg(rej[i] == at10[i], "fdr 0.10: p %g rejected %d, want %d", p[i], rej[i], at10[i]);
    ck_assert(kd_benjamini_hochberg(p, 10, 0.25, rej, q));
    for (int i = 0; i < 10; i++) {
        ck_assert_msg(rej[i], "fdr 0.25: p %g not rejected", p[i]);
        near(q[i], want_q[i], TIGHT, "q at 0.25");
    }
}
END_TEST

/* bh([0.01,0.04,0.03,0.045],0.05) -> ([1,1,1,1], ['0.04','0.045','0.045','0.045'])
 * bh([0.5,0.9,0.7],0.05)          -> ([0,0,0], ['0.9','0.9','0.9']) */
START_TEST(test_bh_step_up_and_none)
{
    static const double p[] = {0.01, 0.04, 0.03, 0.045};
    static const double want_q[] = {0.04, 0.045, 0.045, 0.045};
    bool rej[4];
    double q[4];
    ck_assert(kd_benjamini_hochberg(p, 4, 0.05, rej, q));
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(rej[i], "step-up: p %g not rejected", p[i]);
        near(q[i], want_q[i], TIGHT, "step-up q");
    }
    static const double p2[] = {0.5, 0.9, 0.7};
    ck_assert(kd_benjamini_hochberg(p2, 3, 0.05, rej, q));
    for (int i = 0; i < 3; i++) {
        ck_assert(!rej[i]);
        near(q[i], 0.9, TIGHT, "none q");
    }
    ck_assert(kd_benjamini_hochberg(NULL, 0, 0.05, rej, q)); /* nothing to do */
}
END_TEST

START_TEST(test_bh_oom)
{
    static const double p[] = {0.001, 0.5};
    bool rej[2] = {true, true};
    double q[2] = {0, 0};
    failalloc_arm(0, FAILALLOC_ONE);
    bool ok = kd_benjamini_hochberg(p, 2, 0.05, rej, q);
    long failed = failalloc_disarm();
    ck_assert_int_eq(failed, 1);
    ck_assert(!ok);
    ck_assert(!rej[0] && !rej[1]);
    ck_assert(isnan(q[0]) && isnan(q[1]));
}
END_TEST

/* ---- the normal distribution ------------------------------------------------------- */

/* [r(ss.norm.sf(z)) for z in (0,1,1.959963984540054,-1.5,3,5,8.5,-6)]
 * [r(ss.norm.ppf(p)) for p in (0.5,0.975,0.9,0.1,0.01,0.02425,0.03,1e-6,0.999999,1e-12,0.999)] */
START_TEST(test_normal)
{
    static const double z[] = {0, 1, 1.959963984540054, -1.5, 3, 5, 8.5, -6};
    static const double sf[] = {0.5,
                                0.15865525393145707,
                                0.025,
                                0.9331927987311419,
                                0.0013498980316300933,
                                2.866515718791933e-07,
                                9.47953482220325e-18,
                                0.9999999990134123};
    for (size_t i = 0; i < N(z); i++) {
        double got = kd_normal_sf(z[i]);
        ck_assert_msg(fabs(got - sf[i]) <= PVAL * sf[i], "normal_sf(%g): got %.17g, want %.17g", z[i], got, sf[i]);
    }
    static const double p[] = {0.5, 0.975, 0.9, 0.1, 0.01, 0.02425, 0.03, 1e-6, 0.999999, 1e-12, 0.999};
    static const double x[] = {0.0,
                               1.959963984540054,
                               1.2815515655446004,
                               -1.2815515655446004,
                               -2.3263478740408408,
                               -1.972961051311885,
                               -1.880793608151251,
                               -4.753424308822899,
                               4.753424308817087,
                               -7.034483825301131,
                               3.090232306167813};
    for (size_t i = 0; i < N(p); i++) {
        double got = kd_normal_quantile(p[i]);
        ck_assert_msg(fabs(got - x[i]) <= PVAL * (fabs(x[i]) > 1 ? fabs(x[i]) : 1.0),
                      "normal_quantile(%g): got %.17g, want %.17g", p[i], got, x[i]);
    }
    ck_assert(isinf(kd_normal_quantile(0.0)) && kd_normal_quantile(0.0) < 0);
    ck_assert(isinf(kd_normal_quantile(1.0)) && kd_normal_quantile(1.0) > 0);
}
END_TEST

Suite *stats_suite(void)
{
    Suite *s = suite_create("stats");
    TCase *tc = tcase_create("dist");
    tcase_add_test(tc, test_dist_small);
    tcase_add_test(tc, test_percentile);
    tcase_add_test(tc, test_dist_one_and_none);
    suite_add_tcase(s, tc);
    tc = tcase_create("mann_whitney");
    tcase_add_test(tc, test_mwu_exact_small);
    tcase_add_test(tc, test_mwu_exact_boundary);
    tcase_add_test(tc, test_mwu_asymptotic_no_ties);
    tcase_add_test(tc, test_mwu_small_ties);
    tcase_add_test(tc, test_mwu_large_ties);
    tcase_add_test(tc, test_mwu_no_difference);
    tcase_add_test(tc, test_mwu_empty);
    tcase_add_test(tc, test_mwu_separation);
    tcase_add_test(tc, test_mwu_exact_oom);
    suite_add_tcase(s, tc);
    tc = tcase_create("hodges_lehmann");
    tcase_add_test(tc, test_hl_small);
    tcase_add_test(tc, test_hl_ties_and_tiny);
    tcase_add_test(tc, test_hl_identical);
    tcase_add_test(tc, test_hl_empty);
    tcase_add_test(tc, test_hl_thinned);
    tcase_add_test(tc, test_hl_oom);
    suite_add_tcase(s, tc);
    tc = tcase_create("benjamini_hochberg");
    tcase_add_test(tc, test_bh_textbook);
    tcase_add_test(tc, test_bh_step_up_and_none);
    tcase_add_test(tc, test_bh_oom);
    suite_add_tcase(s, tc);
    tc = tcase_create("normal");
    tcase_add_test(tc, test_normal);
    suite_add_tcase(s, tc);
    return s;
}
