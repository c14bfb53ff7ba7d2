/*
 * oltp/sysbench_rand.c: sysbench's id distributions (--rand-type) and row strings.
 *
 * The distributions follow the definitions of sysbench 1.x (src/sb_rand.c), written
 * anew: uniform; gaussian = mean of spec_iter uniforms; special = spec_res percent of
 * the draws uniform inside a window of spec_pct percent in the middle of the range,
 * the rest gaussian; pareto with shape h; zipfian with exponent s by rejection-
 * inversion (Hoermann and Derflinger 1996), which is exact for any s >= 0 and costs
 * O(1) per draw whatever the range. Every draw stays inside [lo, hi].
 */
#include "oltp/oltp.h"

#include <math.h>
#include <string.h>

static const char *const type_names[] = {
    [SB_RAND_UNIFORM] = "uniform", [SB_RAND_GAUSSIAN] = "gaussian", [SB_RAND_SPECIAL] = "special",
    [SB_RAND_PARETO] = "pareto",   [SB_RAND_ZIPFIAN] = "zipfian",
};

const char *sb_rand_type_name(sb_rand_type t)
{
    return (unsigned)t < sizeof type_names / sizeof type_names[0] ? type_names[t] : "?";
}

/* ---- zipfian helpers: H(x) = ((x^(1-e)) - 1) / (1-e), with the e -> 1 limit log(x)
 * handled by the series forms below so that e near 1 loses no precision. */

/* (exp(x) - 1) / x, accurate near 0. */
static double expm1_over_x(double x)
{
    return fabs(x) > 1e-8 ? expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + x * 0.25));
}

/* log(1 + x) / x, accurate near 0. */
static double log1p_over_x(double x)
{
    return fabs(x) > 1e-8 ? log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - x * 0.25));
}

static double zipf_h(double x, double e)
{
    return exp(-e * log(x));
}

static double zipf_hint(double x, double e)
{
    double lx = log(x);
    return expm1_over_x((1.0 - e) * lx) * lx;
}

static double zipf_hint_inv(double x, double e)
{
    double t = x * (1.0 - e);
    if (t < -1.0) t = -1.0; /* numerical guard: the true value never goes below */
    return exp(log1p_over_x(t) * x);
}

int sb_dist_init(sb_dist *d, const char *type, unsigned spec_iter, unsigned spec_pct,
                 unsigned spec_res, double pareto_h, double zipf_exp, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    int found = -1;
    for (unsigned i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (!strcmp(type, type_names[i])) found = (int)i;
    if (found < 0) {
        snprintf(err, errlen, "--rand-type '%s': use uniform, zipfian, pareto, gaussian or special",
                 type);
        return SIM_ERR;
    }
    if (spec_iter < 1) {
        snprintf(err, errlen, "--rand-spec-iter must be at least 1");
        return SIM_ERR;
    }
    if (spec_pct > 100 || spec_res >= 100) {
        snprintf(err, errlen, "--rand-spec-pct must be 0..100 and --rand-spec-res 0..99");
        return SIM_ERR;
    }
    if (!(pareto_h > 0.0 && pareto_h < 1.0)) {
        snprintf(err, errlen, "--rand-pareto-h must be strictly between 0 and 1");
        return SIM_ERR;
    }
    if (!(zipf_exp >= 0.0)) {
        snprintf(err, errlen, "--rand-zipfian-exp must be >= 0");
        return SIM_ERR;
    }
    d->type = (sb_rand_type)found;
    d->spec_iter = spec_iter;
    d->spec_pct = spec_pct;
    d->spec_res = spec_res;
    d->pareto_h = pareto_h;
    d->zipf_exp = zipf_exp;
    d->pareto_power = log(pareto_h) / log(1.0 - pareto_h);
    d->zipf_s = 2.0 - zipf_hint_inv(zipf_hint(2.5, zipf_exp) - zipf_h(2.0, zipf_exp), zipf_exp);
    d->zipf_hx1 = zipf_hint(1.5, zipf_exp) - 1.0;
    return SIM_OK;
}

/* A value in 1..n with P(k) proportional to k^-e. */
static uint64_t zipf_draw(const sb_dist *d, sim_rng *rng, uint64_t n)
{
    const double e = d->zipf_exp;
    const double hn = zipf_hint((double)n + 0.5, e);
    for (;;) {
        double u = hn + sim_rng_double(rng) * (d->zipf_hx1 - hn);
        double x = zipf_hint_inv(u, e);
        double kd = floor(x + 0.5);
        uint64_t k = kd < 1.0 ? 1 : kd > (double)n ? n : (uint64_t)kd;
        if ((double)k - x <= d->zipf_s || u >= zipf_hint((double)k + 0.5, e) - zipf_h((double)k, e))
            return k;
    }
}

uint64_t sb_dist_next(const sb_dist *d, sim_rng *rng, uint64_t lo, uint64_t hi)
{
    if (hi <= lo) return lo;
    const uint64_t span = hi - lo; /* values lo..hi: span + 1 of them */
    uint64_t v;
    switch (d->type) {
    case SB_RAND_GAUSSIAN: {
        double sum = 0;
        for (unsigned i = 0; i < d->spec_iter; i++)
            sum += sim_rng_double(rng);
        v = (uint64_t)(sum / d->spec_iter * (double)(span + 1));
        break;
    }
    case SB_RAND_SPECIAL: {
        /* spec_res percent of draws fall uniformly into the hot window of spec_pct
         * percent of the range centred in the middle; the others are gaussian. */
        double r = sim_rng_double(rng) * 100.0;
        if (r < (double)d->spec_res) {
            double w = (double)span * d->spec_pct / 100.0;
            double start = (double)span / 2.0 - w / 2.0;
            v = (uint64_t)(start + sim_rng_double(rng) * (w + 1.0));
        } else {
            double sum = 0;
            for (unsigned i = 0; i < d->spec_iter; i++)
                sum += sim_rng_double(rng);
            v = (uint64_t)(sum / d->spec_iter * (double)span);
        }
        break;
    }
    case SB_RAND_PARETO:
        v = (uint64_t)((double)(span + 1) * pow(sim_rng_double(rng), d->pareto_power));
        break;
    case SB_RAND_ZIPFIAN:
        v = zipf_draw(d, rng, span + 1) - 1;
        break;
    case SB_RAND_UNIFORM:
    default:
        return sim_rng_range(rng, lo, hi);
    }
    return lo + (v > span ? span : v);
}

/* ---- row strings: groups of eleven decimal digits. One 64-bit draw yields one group
 * (x mod 10^11: the bias is below 10^11 / 2^64 = 5e-9, far under anything sysbench's
 * own double-based digits achieve), written two digits at a time. */

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

static inline void put_group(char *out, uint64_t x)
{
    x %= 100000000000ULL;
    out[10] = (char)('0' + x % 10);
    x /= 10;
    for (int i = 8; i >= 0; i -= 2) {
        unsigned p = (unsigned)(x % 100);
        x /= 100;
        out[i] = digit_pairs[2 * p];
        out[i + 1] = digit_pairs[2 * p + 1];
    }
}

static void gen_groups(sim_rng *rng, char *out, int groups)
{
    for (int g = 0; g < groups; g++) {
        put_group(out + g * 12, sim_rng_u64(rng));
        if (g + 1 < groups) out[g * 12 + 11] = '-';
    }
}

void sb_gen_c(sim_rng *rng, char out[SB_C_LEN])
{
    gen_groups(rng, out, 10);
}

void sb_gen_pad(sim_rng *rng, char out[SB_PAD_LEN])
{
    gen_groups(rng, out, 5);
}
