/*
 * oltp/tpcc_mix.c: what a terminal does next. Transaction inputs (clauses 2.4.1,
 * 2.5.1, 2.6.1, 2.7.1, 2.8.1), the mix as a shuffled deck (clause 5.2.4.2: every card
 * of a 100-card deck once per pass, so the mix holds over every 100 transactions of
 * each terminal), and the keying and think times of clause 5.2.5.
 */
#include "oltp/tpcc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double tpcc_keying_s[TPCC_NTYPES] = {18, 3, 2, 2, 2};
const double tpcc_think_s[TPCC_NTYPES] = {12, 12, 10, 5, 5};

static uint32_t other_warehouse(sim_rng *r, int64_t scale, uint32_t home)
{
    if (scale <= 1) return home;
    uint32_t w = (uint32_t)sim_rng_range(r, 1, (uint64_t)scale - 1);
    return w >= home ? w + 1 : w;
}

void tpcc_gen_new_order(sim_rng *r, const tpcc_consts *c, int64_t scale, uint32_t w_id,
                        tpcc_no_in *in)
{
    in->w_id = w_id;
    in->d_id = (uint32_t)sim_rng_range(r, 1, TPCC_DIST_PER_WH);
    in->c_id = tpcc_nurand(r, 1023, c->c_id, 1, TPCC_CUST_PER_DIST);
    in->ol_cnt = (uint32_t)sim_rng_range(r, TPCC_MIN_ORDER_LINES, TPCC_MAX_ORDER_LINES);
    in->rollback = sim_rng_range(r, 1, 100) == 1;
    for (uint32_t i = 0; i < in->ol_cnt; i++) {
        in->i_id[i] = tpcc_nurand(r, 8191, c->ol_i_id, 1, TPCC_ITEMS);
        in->supply_w_id[i] = sim_rng_range(r, 1, 100) > 1 ? w_id : other_warehouse(r, scale, w_id);
        in->qty[i] = (uint32_t)sim_rng_range(r, 1, 10);
    }
    if (in->rollback) in->i_id[in->ol_cnt - 1] = TPCC_ITEMS + 1; /* unused: the order rolls back */
}

void tpcc_gen_payment(sim_rng *r, const tpcc_consts *c, int64_t scale, uint32_t w_id,
                      tpcc_pay_in *in)
{
    in->w_id = w_id;
    in->d_id = (uint32_t)sim_rng_range(r, 1, TPCC_DIST_PER_WH);
    if (sim_rng_range(r, 1, 100) <= 85 || scale <= 1) {
        in->c_w_id = w_id;
        in->c_d_id = in->d_id;
    } else {
        in->c_w_id = other_warehouse(r, scale, w_id);
        in->c_d_id = (uint32_t)sim_rng_range(r, 1, TPCC_DIST_PER_WH);
    }
    in->by_name = sim_rng_range(r, 1, 100) <= 60;
    in->c_id = 0;
    in->c_last[0] = 0;
    if (in->by_name)
        tpcc_lastname(tpcc_nurand(r, 255, c->c_last, 0, 999), in->c_last);
    else
        in->c_id = tpcc_nurand(r, 1023, c->c_id, 1, TPCC_CUST_PER_DIST);
    in->h_amount_cents = (int64_t)sim_rng_range(r, 100, 500000);
}

void tpcc_gen_order_status(sim_rng *r, const tpcc_consts *c, uint32_t w_id, tpcc_os_in *in)
{
    in->w_id = w_id;
    in->d_id = (uint32_t)sim_rng_range(r, 1, TPCC_DIST_PER_WH);
    in->by_name = sim_rng_range(r, 1, 100) <= 60;
    in->c_id = 0;
    in->c_last[0] = 0;
    if (in->by_name)
        tpcc_lastname(tpcc_nurand(r, 255, c->c_last, 0, 999), in->c_last);
    else
        in->c_id = tpcc_nurand(r, 1023, c->c_id, 1, TPCC_CUST_PER_DIST);
}

void tpcc_gen_delivery(sim_rng *r, uint32_t w_id, tpcc_del_in *in)
{
    in->w_id = w_id;
    in->o_carrier_id = (uint32_t)sim_rng_range(r, 1, 10);
}

void tpcc_gen_stock_level(sim_rng *r, uint32_t w_id, uint32_t d_id, tpcc_sl_in *in)
{
    in->w_id = w_id;
    in->d_id = d_id;
    in->threshold = (uint32_t)sim_rng_range(r, 10, 20);
}

int tpcc_mix_parse(const char *s, tpcc_mix *mix, char *err, size_t errlen)
{
    static const int minimum[TPCC_NTYPES] = {0, 43, 4, 4, 4};
    const char *p = s;
    int sum = 0;
    for (int t = 0; t < TPCC_NTYPES; t++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 100 || (t < TPCC_NTYPES - 1 && *end != ',') ||
            (t == TPCC_NTYPES - 1 && *end)) {
            snprintf(err, errlen,
                     "--mix '%s': expected five whole percentages for new_order, payment,"
                     " order_status, delivery, stock_level, e.g. 45,43,4,4,4",
                     s);
            return SIM_ERR;
        }
        if (v < minimum[t]) {
            snprintf(err, errlen,
                     "--mix '%s': %s is %ld %%, below the TPC-C minimum of %d %% (clause "
                     "5.2.3)",
                     s, tpcc_type_names[t], v, minimum[t]);
            return SIM_ERR;
        }
        mix->pct[t] = (int)v;
        sum += (int)v;
        p = end + 1;
    }
    if (sum != 100) {
        snprintf(err, errlen, "--mix '%s': the percentages add up to %d, not 100", s, sum);
        return SIM_ERR;
    }
    return SIM_OK;
}

static void deck_shuffle(tpcc_deck *d, const tpcc_mix *mix, sim_rng *rng)
{
    int n = 0;
    for (int t = 0; t < TPCC_NTYPES; t++)
        for (int k = 0; k < mix->pct[t]; k++)
            d->cards[n++] = (uint8_t)t;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)sim_rng_range(rng, 0, (uint64_t)i);
        uint8_t tmp = d->cards[i];
        d->cards[i] = d->cards[j];
        d->cards[j] = tmp;
    }
    d->pos = 0;
}

void tpcc_deck_init(tpcc_deck *d, const tpcc_mix *mix, sim_rng *rng)
{
    deck_shuffle(d, mix, rng);
}

int tpcc_deck_draw(tpcc_deck *d, const tpcc_mix *mix, sim_rng *rng)
{
    if (d->pos >= TPCC_DECK_MAX) deck_shuffle(d, mix, rng);
    return d->cards[d->pos++];
}
