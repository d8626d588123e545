/* stats.c — distributions, the Mann–Whitney test, the Hodges–Lehmann shift
 * and Benjamini–Hochberg (stats.h). */
#include "config.h"

#include "kerndiff/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

double kd_percentile(const double *v, size_t n, double p)
{
    if (!n)
        return 0.0;
    double pos = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    if (lo >= n - 1)
        return v[n - 1];
    double frac = pos - (double)lo;
    return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

void kd_dist_of(double *v, size_t n, kd_dist *out)
{
    memset(out, 0, sizeof *out);
    if (!n)
        return;
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / (double)n, ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    *out = (kd_dist){n,
                     sum,
                     mean,
                     kd_percentile(v, n, 50.0),
                     kd_percentile(v, n, 10.0),
                     kd_percentile(v, n, 90.0),
                     v[0],
                     v[n - 1],
                     n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0};
}

/* ---- the normal distribution ------------------------------------------------ */

double kd_normal_sf(double z) { return 0.5 * erfc(z / sqrt(2.0)); }

/* Acklam's rational approximation of the normal quantile (relative error
 * below 1.2e-9), then one Halley step against erfc. */
double kd_normal_quantile(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01,  -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    if (p <= 0.0)
        return -INFINITY;
    if (p >= 1.0)
        return INFINITY;
    double q, r, x;
    if (p < 0.02425) {
        q = sqrt(-2.0 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    } else if (p > 1.0 - 0.02425) {
        q = sqrt(-2.0 * log(1.0 - p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    } else {
        q = p - 0.5;
        r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
    }
    double e = 0.5 * erfc(-x / sqrt(2.0)) - p;
    double u = e * 2.5066282746310002 * exp(x * x / 2.0); /* sqrt(2 pi) */
    return x - u / (1.0 + x * u / 2.0);
}

double kd_t_quantile(double p, double df)
{
    /* t_{0.975, df} for df = 1..30 (the interval every caller asks for) */
    static const double t975[] = {12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
                                  2.446911851, 2.364624252, 2.306004135, 2.262157163, 2.228138852,
                                  2.200985160, 2.178812830, 2.160368656, 2.144786688, 2.131449546,
                                  2.119905299, 2.109815578, 2.100922040, 2.093024054, 2.085963447,
                                  2.079613845, 2.073873068, 2.068657610, 2.063898562, 2.059538553,
                                  2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456};
    if (p == 0.975 && df >= 1.0 && df <= 30.0 && df == floor(df))
        return t975[(size_t)df - 1];
    double z = kd_normal_quantile(p), z3 = z * z * z, z5 = z3 * z * z;
    return z + (z3 + z) / (4.0 * df) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df);
}

/* ---- Mann–Whitney -------------------------------------------------------------- */

/* The exact two-sided p of U for samples of sizes n, m without ties: the
 * number of arrangements with U <= u (or >= u), by the recurrence on the
 * largest value (it comes from one sample or the other). */
#define EXACT_MAX_PRODUCT 400
static double exact_p(double u, size_t n, size_t m)
{
    size_t maxu = n * m;
    /* f[i][j][k]: arrangements of i and j values with U = k; rolled over i */
    double *prev = calloc((m + 1) * (maxu + 1), sizeof *prev);
    double *cur = calloc((m + 1) * (maxu + 1), sizeof *cur);
    if (!prev || !cur) {
        free(prev);
        free(cur);
        return NAN;
    }
#define AT(t, j, k) (t)[(j) * (maxu + 1) + (k)]
    for (size_t j = 0; j <= m; j++)
        AT(prev, j, 0) = 1.0; /* i = 0: one arrangement, U = 0 */
    for (size_t i = 1; i <= n; i++) {
        memset(cur, 0, (m + 1) * (maxu + 1) * sizeof *cur);
        AT(cur, 0, 0) = 1.0;
        for (size_t j = 1; j <= m; j++)
            for (size_t k = 0; k <= i * j; k++) {
                /* the largest value is from the first sample: it beats the j others */
                double from_a = k >= j ? AT(prev, j, k - j) : 0.0;
                double from_b = AT(cur, j - 1, k);
                AT(cur, j, k) = from_a + from_b;
            }
        double *t = prev;
        prev = cur;
        cur = t;
    }
    double total = 0.0, le = 0.0, ge = 0.0;
    for (size_t k = 0; k <= maxu; k++) {
        double c = AT(prev, m, k);
        total += c;
        if ((double)k <= u + 1e-9)
            le += c;
        if ((double)k >= u - 1e-9)
            ge += c;
    }
#undef AT
    free(prev);
    free(cur);
    double p = 2.0 * fmin(le, ge) / total;
    return p > 1.0 ? 1.0 : p;
}

kd_mwu kd_mann_whitney(const double *a, size_t na, const double *b, size_t nb)
{
    kd_mwu r = {0.0, 1.0, false};
    if (!na || !nb)
        return r;
    /* the ranks of the merged sorted samples, ties at their mid-rank */
    double rank_a = 0.0, tie_term = 0.0;
    size_t i = 0, j = 0, pos = 0;
    bool ties = false;
    while (i < na || j < nb) {
        double v = i < na && (j >= nb || a[i] <= b[j]) ? a[i] : b[j];
        size_t ca = 0, cb = 0;
        while (i < na && a[i] == v) {
            i++;
            ca++;
        }
        while (j < nb && b[j] == v) {
            j++;
            cb++;
        }
        size_t t = ca + cb;
        double mid = (double)pos + ((double)t + 1.0) / 2.0;
        rank_a += mid * (double)ca;
        if (t > 1) {
            ties = true;
            tie_term += (double)t * (double)t * (double)t - (double)t;
        }
        pos += t;
    }
    double n1 = (double)na, n2 = (double)nb, n = n1 + n2;
    r.u = rank_a - n1 * (n1 + 1.0) / 2.0;
    if (!ties && na * nb <= EXACT_MAX_PRODUCT) {
        double p = exact_p(r.u, na, nb);
        if (!isnan(p)) {
            r.p = p;
            r.exact = true;
            return r;
        }
    }
    double mu = n1 * n2 / 2.0;
    double var = n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if (var <= 0.0)
        return r; /* every value equal: nothing moved */
    double z = (fabs(r.u - mu) - 0.5) / sqrt(var);
    r.p = z <= 0.0 ? 1.0 : fmin(1.0, 2.0 * kd_normal_sf(z));
    return r;
}

/* ---- Hodges–Lehmann --------------------------------------------------------- */

/* At most KD_HL_MAX_SAMPLE evenly spaced order statistics of a sorted sample. */
static const double *thinned(const double *v, size_t n, double *buf, size_t *out_n)
{
    if (n <= KD_HL_MAX_SAMPLE) {
        *out_n = n;
        return v;
    }
    for (size_t k = 0; k < KD_HL_MAX_SAMPLE; k++)
        buf[k] = v[(size_t)((double)k * (double)(n - 1) / (double)(KD_HL_MAX_SAMPLE - 1) + 0.5)];
    *out_n = KD_HL_MAX_SAMPLE;
    return buf;
}

static void swap_d(double *x, double *y)
{
    double t = *x;
    *x = *y;
    *y = t;
}

/* the k-th smallest (0-based) of d[0..n): quickselect with a three-way
 * partition (durations repeat a lot), median-of-three pivot; d is reordered */
static double kth(double *d, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the answer is in d[lo..hi) */
    while (hi - lo > 1) {
        double x = d[lo], y = d[lo + (hi - lo) / 2], z = d[hi - 1];
        double pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (d[i] < pivot)
                swap_d(&d[lt++], &d[i++]);
            else if (d[i] > pivot)
                swap_d(&d[i], &d[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
    return d[lo];
}

bool kd_hodges_lehmann(const double *a, size_t na, const double *b, size_t nb, double conf, kd_hl *out)
{
    *out = (kd_hl){NAN, NAN, NAN};
    if (!na || !nb)
        return true;
    double *ba = malloc(KD_HL_MAX_SAMPLE * sizeof *ba), *bb = malloc(KD_HL_MAX_SAMPLE * sizeof *bb);
    size_t n = 0, m = 0;
    const double *x = ba ? thinned(a, na, ba, &n) : NULL, *y = bb ? thinned(b, nb, bb, &m) : NULL;
    double *d = x && y ? malloc(n * m * sizeof *d) : NULL;
    if (!d) {
        free(ba);
        free(bb);
        return false;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++)
            d[k++] = y[j] - x[i];
    size_t nm = n * m;
    /* the median of the differences */
    double hi_mid = kth(d, nm, nm / 2);
    out->shift = nm % 2 ? hi_mid : (kth(d, nm, nm / 2 - 1) + hi_mid) / 2.0;
    /* Moses: the C-th smallest and largest differences bound the interval,
     * C from the normal approximation of U's lower quantile */
    double z = kd_normal_quantile(1.0 - (1.0 - conf) / 2.0);
    double c = floor((double)nm / 2.0 - z * sqrt((double)n * (double)m * ((double)(n + m) + 1.0) / 12.0));
    if (c < 0.0)
        c = 0.0;
    size_t ci = (size_t)c;
    if (ci >= nm)
        ci = nm - 1;
    out->lo = kth(d, nm, ci);
    out->hi = kth(d, nm, nm - 1 - ci);
    free(d);
    free(ba);
    free(bb);
    return true;
}

/* ---- Benjamini–Hochberg ------------------------------------------------------- */

typedef struct {
    double p;
    size_t i;
} p_index;

static int cmp_p(const void *pa, const void *pb)
{
    const p_index *a = pa, *b = pb;
    if (a->p != b->p)
        return a->p < b->p ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

bool kd_benjamini_hochberg(const double *p, size_t n, double fdr, bool *reject, double *q)
{
    for (size_t i = 0; i < n; i++) {
        reject[i] = false;
        if (q)
            q[i] = NAN;
    }
    if (!n)
        return true;
    p_index *s = malloc(n * sizeof *s);
    if (!s)
        return false;
    for (size_t i = 0; i < n; i++)
        s[i] = (p_index){isnan(p[i]) ? 1.0 : p[i], i};
    qsort(s, n, sizeof *s, cmp_p);
    /* the largest k with p_(k) <= k / n * fdr: the k smallest are discoveries */
    size_t cut = 0;
    for (size_t k = n; k > 0; k--)
        if (s[k - 1].p <= (double)k / (double)n * fdr) {
            cut = k;
            break;
        }
    for (size_t k = 0; k < cut; k++)
        reject[s[k].i] = true;
    if (q) {
        /* adjusted p: the running minimum of p_(k) * n / k from the top */
        double run = 1.0;
        for (size_t k = n; k > 0; k--) {
            double adj = s[k - 1].p * (double)n / (double)k;
            run = fmin(run, adj);
            q[s[k - 1].i] = fmin(run, 1.0);
        }
    }
    free(s);
    return true;
}
