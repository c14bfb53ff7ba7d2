/*
 * sim/steady.c: the steady-state rule of the SNIA Solid State Storage Performance Test
 * Specification, as a pure function of a series of per-round rates.
 *
 * Over the last `window` rounds (5): the data excursion, max - min, must stay within
 * max_range (20 %) of the window's mean, and the least-squares line through the
 * window must change by at most max_slope (10 %) of the mean from its first round to
 * its last (|slope| x (window - 1), with the round index as x). Both together: a flat
 * but noisy series fails the first, a smooth drift the second.
 */
#include "sim/sim.h"

#include <math.h>

sim_steady_eval sim_steady_judge(const double *rates, size_t n, const sim_steady_rule *rule)
{
    sim_steady_eval ev = {0};
    size_t w = rule->window > 1 ? (size_t)rule->window : 2;
    if (n < w) return ev;
    const double *x = rates + (n - w);
    double sum = 0, lo = x[0], hi = x[0];
    for (size_t i = 0; i < w; i++) {
        if (!isfinite(x[i])) return ev;
        sum += x[i];
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    ev.mean = sum / (double)w;
    ev.range = hi - lo;
    /* Least squares with x = 0..w-1: slope = sum((i - i_mean)(y - y_mean)) / sum((i - i_mean)^2).
     */
    double i_mean = (double)(w - 1) / 2, sxy = 0, sxx = 0;
    for (size_t i = 0; i < w; i++) {
        double dx = (double)i - i_mean;
        sxy += dx * (x[i] - ev.mean);
        sxx += dx * dx;
    }
    ev.slope_change = fabs(sxy / sxx) * (double)(w - 1);
    ev.judged = true;
    /* A workload that completes nothing is stalled, not steady. */
    ev.steady = ev.mean > 0 && ev.range <= rule->max_range * ev.mean &&
                ev.slope_change <= rule->max_slope * ev.mean;
    return ev;
}
