/*
 * sim/clock.c: the monotonic clock, random numbers and the think-time distribution.
 * xoshiro256** seeded through splitmix64, so that (seed, stream) pairs give
 * independent, reproducible sequences per thread or per virtual user.
 */
#include "sim/sim.h"

#include <errno.h>
#include <math.h>
#include <time.h>

uint64_t sim_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t sim_thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sim_sleep_until_ns(uint64_t t)
{
    struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull),
                          .tv_nsec = (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        if (sim_interrupted()) return;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void sim_rng_seed(sim_rng *rng, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1342543de82ef95ull + 0x2545f4914f6cdd1dull);
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t sim_rng_u64(sim_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double sim_rng_double(sim_rng *rng)
{
    return (double)(sim_rng_u64(rng) >> 11) * 0x1.0p-53;
}

uint64_t sim_rng_range(sim_rng *rng, uint64_t lo, uint64_t hi)
{
    if (hi <= lo) return lo;
    uint64_t span = hi - lo + 1;
    if (span == 0) /* the full 64-bit range */
        return sim_rng_u64(rng);
    /* Lemire's multiply-shift with rejection: unbiased, one multiply in the common case. */
    __uint128_t m = (__uint128_t)sim_rng_u64(rng) * span;
    uint64_t low = (uint64_t)m;
    if (low < span) {
        uint64_t threshold = -span % span;
        while (low < threshold) {
            m = (__uint128_t)sim_rng_u64(rng) * span;
            low = (uint64_t)m;
        }
    }
    return lo + (uint64_t)(m >> 64);
}

uint64_t sim_rng_think_ns(sim_rng *rng, uint64_t mean_ns)
{
    if (mean_ns == 0) return 0;
    /* r in (0, 1]: -ln(r) is finite. */
    double r = 1.0 - sim_rng_double(rng);
    double t = -log(r) * (double)mean_ns;
    double cap = 10.0 * (double)mean_ns;
    return (uint64_t)(t > cap ? cap : t);
}

uint64_t sim_rng_exp_ns(sim_rng *rng, double rate_per_s)
{
    if (rate_per_s <= 0) return UINT64_MAX;
    double r = 1.0 - sim_rng_double(rng);
    return (uint64_t)(-log(r) / rate_per_s * 1e9);
}
