/*
 * oltp/tpcc_rand.c: TPC-C random inputs (clauses 2.1.6 and 4.3.2): NURand and its
 * constants, a-strings, n-strings, last names from the syllables, "ORIGINAL" data.
 *
 * Strings are drawn 6 bits at a time from one 64-bit random number, rejecting the two
 * values beyond the 62-character alphabet, so they are unbiased and cheap: the loader
 * generates about 60 MB of text per warehouse.
 */
#include "oltp/tpcc_internal.h"

#include <assert.h>
#include <string.h>
#include <time.h>

static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
static const char *const syllables[10] = {"BAR", "OUGHT", "ABLE",  "PRI",   "PRES",
                                          "ESE", "ANTI",  "CALLY", "ATION", "EING"};

uint32_t tpcc_nurand(sim_rng *rng, uint32_t a, uint32_t c, uint32_t x, uint32_t y)
{
    assert(x <= y && c <= a); /* C is drawn in [0, A] (tpcc_consts) */
    uint32_t r1 = (uint32_t)sim_rng_range(rng, 0, a);
    uint32_t r2 = (uint32_t)sim_rng_range(rng, x, y);
    return (((r1 | r2) + c) % (y - x + 1)) + x;
}

void tpcc_consts_load(tpcc_consts *c, sim_rng *rng)
{
    c->c_last = (uint32_t)sim_rng_range(rng, 0, 255);
    c->c_id = (uint32_t)sim_rng_range(rng, 0, 1023);
    c->ol_i_id = (uint32_t)sim_rng_range(rng, 0, 8191);
}

bool tpcc_consts_valid_delta(uint32_t c_run, uint32_t c_load)
{
    uint32_t d = c_run > c_load ? c_run - c_load : c_load - c_run;
    return d >= 65 && d <= 119 && d != 96 && d != 112;
}

void tpcc_consts_run(tpcc_consts *run, const tpcc_consts *load, sim_rng *rng)
{
    /* Any C_LAST in [0, 255] has valid partners (the valid deltas cover 53 values on
     * at least one side), so the loop ends quickly. */
    do {
        run->c_last = (uint32_t)sim_rng_range(rng, 0, 255);
    } while (!tpcc_consts_valid_delta(run->c_last, load->c_last));
    assert(run->c_last <= 255);
    run->c_id = (uint32_t)sim_rng_range(rng, 0, 1023);
    run->ol_i_id = (uint32_t)sim_rng_range(rng, 0, 8191);
}

int tpcc_astring(sim_rng *rng, char *buf, int lo, int hi)
{
    assert(0 <= lo && lo <= hi);
    int len = (int)sim_rng_range(rng, (uint64_t)lo, (uint64_t)hi);
    int i = 0;
    while (i < len) {
        uint64_t r = sim_rng_u64(rng);
        for (int k = 0; k < 10 && i < len; k++, r >>= 6) {
            unsigned v = (unsigned)(r & 63);
            if (v < 62) buf[i++] = alnum[v];
        }
    }
    buf[len] = 0;
    return len;
}

int tpcc_nstring(sim_rng *rng, char *buf, int lo, int hi)
{
    assert(0 <= lo && lo <= hi);
    int len = (int)sim_rng_range(rng, (uint64_t)lo, (uint64_t)hi);
    int i = 0;
    while (i < len) {
        uint64_t r = sim_rng_u64(rng);
        for (int k = 0; k < 16 && i < len; k++, r >>= 4) {
            unsigned v = (unsigned)(r & 15);
            if (v < 10) buf[i++] = (char)('0' + v);
        }
    }
    buf[len] = 0;
    return len;
}

int tpcc_lastname(uint32_t num, char *buf)
{
    assert(num <= 999); /* three syllables */
    const char *a = syllables[(num / 100) % 10], *b = syllables[(num / 10) % 10],
               *c = syllables[num % 10];
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    memcpy(buf, a, la);
    memcpy(buf + la, b, lb);
    memcpy(buf + la + lb, c, lc);
    buf[la + lb + lc] = 0;
    return (int)(la + lb + lc);
}

int tpcc_data_string(sim_rng *rng, char *buf, int lo, int hi)
{
    int len = tpcc_astring(rng, buf, lo, hi);
    assert(lo >= 8); /* room for "ORIGINAL" */
    if (sim_rng_range(rng, 1, 100) <= 10) {
        int at = (int)sim_rng_range(rng, 0, (uint64_t)(len - 8));
        memcpy(buf + at, "ORIGINAL", 8);
    }
    return len;
}

int64_t tpcc_now_unix(void)
{
    return (int64_t)time(NULL);
}
