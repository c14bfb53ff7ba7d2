/*
 * oltp/tpcc_ranks.c: the "tpcc" section of a job of several ranks (docs/mpi.md). Every
 * rank's own section is in the result's ranks[i].tpcc; the job's is merged from them
 * exactly: deferred deliveries from the ranks' histograms (summed bucket by bucket, so
 * the job's p90 is that of every rank's deliveries together) and counts, block reads per
 * transaction from the ranks' block and transaction counts, the waits from their raw
 * totals and writer-lock hold histograms, every rank's instances side
 * by side, the user scheduler's counts summed and its worst lateness. Rates and the
 * per-type 90th percentiles come from the job's merged run (tpcc_run.c).
 */
#include "oltp/tpcc_cmd_internal.h"

#include <string.h>

static const char *const block_names[4] = {"db_reads", "db_device_reads", "wal_reads",
                                           "wal_device_reads"};

json_t *tpcc_reads_json(const uint64_t txns[TPCC_NTYPES], const uint64_t blocks[TPCC_NTYPES][4])
{
    json_t *j = json_object();
    for (int ty = 0; ty < TPCC_NTYPES; ty++) {
        uint64_t n = txns[ty];
        const uint64_t *b = blocks[ty];
        json_t *one = json_pack("{s:I}", "transactions", (json_int_t)n);
        json_t *totals = json_object();
        for (int k = 0; k < 4; k++) {
            json_object_set_new(one, block_names[k],
                                n ? json_real((double)b[k] / (double)n) : json_null());
            json_object_set_new(totals, block_names[k], json_integer((json_int_t)b[k]));
        }
        json_object_set_new(one, "device_reads",
                            n ? json_real((double)(b[1] + b[3]) / (double)n) : json_null());
        json_object_set_new(one, "blocks", totals); /* so that ranks' figures sum exactly */
        json_object_set_new(j, tpcc_type_names[ty], one);
    }
    return j;
}

static uint64_t u64(const json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 ? (uint64_t)v : 0;
}

/* Deferred deliveries of every rank: histograms merged, counts summed. */
static void merge_deferred(json_t *tj, const json_t *ranks)
{
    sim_hist *h = sim_hist_new();
    uint64_t errors = 0, skipped = 0, pending = 0;
    size_t i;
    const json_t *rk;
    json_array_foreach(ranks, i, rk)
    {
        const json_t *d = json_object_get(json_object_get(rk, "tpcc"), "delivery_deferred");
        sim_hist *one = sim_hist_from_json(json_object_get(d, "histogram"), NULL, 0);
        if (one) sim_hist_merge(h, one);
        sim_hist_free(one);
        errors += u64(d, "errors");
        skipped += u64(d, "skipped_districts");
        pending += u64(d, "pending_at_end");
    }
    json_object_set_new(tj, "delivery_deferred", tpcc_deferred_json(h, errors, skipped, pending));
    json_object_set_new(json_object_get(tj, "p90_limits"), "delivery_deferred",
                        tpcc_p90_json(h, TPCC_DELIVERY_DEFERRED_P90_LIMIT_S));
    sim_hist_free(h);
}

static void merge_reads(json_t *tj, const json_t *ranks)
{
    uint64_t txns[TPCC_NTYPES] = {0}, b[TPCC_NTYPES][4] = {{0}};
    size_t i;
    const json_t *rk;
    json_array_foreach(ranks, i, rk)
    {
        const json_t *r = json_object_get(json_object_get(rk, "tpcc"), "reads_per_txn");
        for (int ty = 0; ty < TPCC_NTYPES; ty++) {
            const json_t *one = json_object_get(r, tpcc_type_names[ty]);
            txns[ty] += u64(one, "transactions");
            for (int k = 0; k < 4; k++)
                b[ty][k] += u64(json_object_get(one, "blocks"), block_names[k]);
        }
    }
    json_object_set_new(tj, "reads_per_txn", tpcc_reads_json(txns, b));
}

/* Every rank's instances, each saying its rank. */
static void merge_instances(json_t *tj, const json_t *ranks)
{
    json_t *all = json_array();
    size_t i, k;
    const json_t *rk, *inst;
    json_array_foreach(ranks, i, rk)
    {
        json_array_foreach(json_object_get(json_object_get(rk, "tpcc"), "per_instance"), k, inst)
        {
            json_t *one = json_copy((json_t *)inst);
            json_object_set(one, "rank", json_object_get(rk, "rank"));
            json_array_append_new(all, one);
        }
    }
    json_object_set_new(tj, "per_instance", all);
}

/* The scheduler's units summed, its worst queue and lateness over the ranks; a
 * percentile of lateness cannot be merged from the ranks' percentiles, so the job has
 * none (each rank's is in ranks[].tpcc.vu_engine). */
static void merge_scheduler(json_t *tj, const json_t *ranks)
{
    uint64_t units = 0, queue = 0;
    double late = 0;
    size_t i;
    const json_t *rk;
    json_array_foreach(ranks, i, rk)
    {
        const json_t *v = json_object_get(json_object_get(rk, "tpcc"), "vu_engine");
        units += u64(v, "units");
        queue = u64(v, "max_queue") > queue ? u64(v, "max_queue") : queue;
        double l = json_number_value(json_object_get(v, "wake_late_max_us"));
        late = l > late ? l : late;
    }
    json_object_set_new(tj, "vu_engine",
                        json_pack("{s:I, s:I, s:n, s:f, s:s}", "units", (json_int_t)units,
                                  "max_queue", (json_int_t)queue, "wake_late_p99_us",
                                  "wake_late_max_us", late, "note",
                                  "over the ranks; each rank's lateness p99 is in "
                                  "ranks[].tpcc.vu_engine"));
}

/* Every rank's wait totals summed and hold-time histograms merged. */
static void merge_waits(json_t *tj, const json_t *ranks)
{
    tpcc_wait_totals t = {0};
    sim_hist *held[TPCC_NTYPES];
    for (int ty = 0; ty < TPCC_NTYPES; ty++)
        held[ty] = sim_hist_new();
    size_t i;
    const json_t *rk;
    json_array_foreach(ranks, i, rk)
    {
        tpcc_waits_add_json(json_object_get(json_object_get(rk, "tpcc"), "waits"), &t, held);
    }
    json_object_set_new(tj, "waits", tpcc_waits_json(&t, held));
    for (int ty = 0; ty < TPCC_NTYPES; ty++)
        sim_hist_free(held[ty]);
}

void tpcc_merge_ranks(json_t *tj, const json_t *ranks)
{
    merge_deferred(tj, ranks);
    merge_reads(tj, ranks);
    merge_waits(tj, ranks);
    merge_instances(tj, ranks);
    merge_scheduler(tj, ranks);
}
