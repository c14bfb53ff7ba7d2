/*
 * oltp/tpcc_waits.c: the result's tpcc.waits: where the connections' time in measured
 * transactions went (tpcc_waits parts, measured in tpcc_txn.c), overall and per
 * transaction type, and how long a write transaction holds the writer lock.
 *
 * The shares add up to the threads' time in transactions: queued for the writer lock,
 * its hand-over, holding it (of which BEGIN, device reads and COMMIT), the group
 * commit's WAL sync after it, device reads outside it (prefetch's included), and the
 * rest (SQL work and waiting for a CPU). Delivery's time is the deferred execution's,
 * on its worker, not the terminal's queueing. The raw totals and the hold-time
 * histograms are kept beside the figures, so that a job of several ranks merges them
 * exactly (tpcc_ranks.c).
 */
#include "oltp/tpcc_cmd_internal.h"

#include <string.h>

/* The figures' parts: the top-level ones are disjoint; the four "under" ones are part
 * of writer_lock_held and prefetch is part of the reads outside and of "other". */
enum {
    F_QUEUE,
    F_HANDOVER,
    F_HELD,
    F_BEGIN,
    F_READS_HELD,
    F_COMMIT,
    F_HELD_CPU,
    F_SYNC,
    F_READS_OUT,
    F_PREFETCH,
    F_OTHER,
    F_N
};
static const char *const figure_names[F_N] = {"writer_lock_queue",
                                              "writer_lock_handover",
                                              "writer_lock_held",
                                              "begin_under_writer_lock",
                                              "reads_under_writer_lock",
                                              "commit_under_writer_lock",
                                              "on_cpu_under_writer_lock",
                                              "group_commit_sync",
                                              "reads_outside_writer_lock",
                                              "prefetch",
                                              "other"};

/* The raw totals' keys, one per tpcc_wait_part. */
static const char *const part_names[TPCC_W_NPARTS] = {
    "lock_queue_ns",  "handover_ns", "held_ns",    "begin_held_ns", "reads_held_ns",
    "commit_held_ns", "held_cpu_ns", "durable_ns", "reads_ns",      "prefetch_ns"};

static void figures(const uint64_t ns[TPCC_W_NPARTS], uint64_t event_ns, double f[F_N])
{
    double reads_out = (double)ns[TPCC_W_READS] - (double)ns[TPCC_W_READS_HELD];
    f[F_QUEUE] = (double)ns[TPCC_W_LOCK_QUEUE];
    f[F_HANDOVER] = (double)ns[TPCC_W_HANDOVER];
    f[F_HELD] = (double)ns[TPCC_W_HELD];
    f[F_BEGIN] = (double)ns[TPCC_W_BEGIN_HELD];
    f[F_READS_HELD] = (double)ns[TPCC_W_READS_HELD];
    f[F_COMMIT] = (double)ns[TPCC_W_COMMIT_HELD];
    f[F_HELD_CPU] = (double)ns[TPCC_W_HELD_CPU];
    f[F_SYNC] = (double)ns[TPCC_W_DURABLE];
    f[F_READS_OUT] = reads_out;
    f[F_PREFETCH] = (double)ns[TPCC_W_PREFETCH];
    f[F_OTHER] = (double)event_ns - f[F_QUEUE] - f[F_HANDOVER] - f[F_HELD] - f[F_SYNC] - reads_out;
}

/* Shares of the thread time and ms per transaction of one set of totals. */
static json_t *breakdown(uint64_t txns, uint64_t event_ns, const uint64_t ns[TPCC_W_NPARTS])
{
    double f[F_N];
    figures(ns, event_ns, f);
    json_t *share = json_object(), *ms = json_object();
    for (int i = 0; i < F_N; i++) {
        json_object_set_new(share, figure_names[i],
                            json_real(event_ns ? f[i] / (double)event_ns : 0));
        json_object_set_new(ms, figure_names[i], json_real(txns ? f[i] / 1e6 / (double)txns : 0));
    }
    return json_pack("{s:I, s:f, s:o, s:o}", "transactions", (json_int_t)txns, "thread_seconds",
                     (double)event_ns / 1e9, "share", share, "ms_per_transaction", ms);
}

static bool is_write(int type)
{
    return type == TPCC_NEW_ORDER || type == TPCC_PAYMENT || type == TPCC_DELIVERY;
}

/* Hold time per write transaction: every write type's and all together (us). */
static json_t *hold_json(sim_hist *const held[TPCC_NTYPES])
{
    json_t *j = json_object(), *hists = json_object();
    sim_hist *all = sim_hist_new();
    for (int ty = 0; ty < TPCC_NTYPES; ty++) {
        if (!is_write(ty)) continue;
        sim_hist_merge(all, held[ty]);
        json_object_set_new(j, tpcc_type_names[ty], sim_hist_summary_json(held[ty]));
        json_object_set_new(hists, tpcc_type_names[ty], sim_hist_to_json(held[ty]));
    }
    json_object_set_new(j, "all_writes", sim_hist_summary_json(all));
    json_object_set_new(j, "histograms", hists);
    sim_hist_free(all);
    return j;
}

static json_t *totals_json(const tpcc_wait_totals *t)
{
    json_t *j = json_object();
    for (int ty = 0; ty < TPCC_NTYPES; ty++) {
        json_t *one = json_pack("{s:I, s:I}", "transactions", (json_int_t)t->txns[ty], "event_ns",
                                (json_int_t)t->event_ns[ty]);
        for (int p = 0; p < TPCC_W_NPARTS; p++)
            json_object_set_new(one, part_names[p], json_integer((json_int_t)t->ns[ty][p]));
        json_object_set_new(j, tpcc_type_names[ty], one);
    }
    return j;
}

json_t *tpcc_waits_json(const tpcc_wait_totals *t, sim_hist *const held[TPCC_NTYPES])
{
    uint64_t txns = 0, ev = 0, ns[TPCC_W_NPARTS] = {0};
    json_t *by_type = json_object();
    for (int ty = 0; ty < TPCC_NTYPES; ty++) {
        txns += t->txns[ty];
        ev += t->event_ns[ty];
        for (int p = 0; p < TPCC_W_NPARTS; p++)
            ns[p] += t->ns[ty][p];
        json_object_set_new(by_type, tpcc_type_names[ty],
                            breakdown(t->txns[ty], t->event_ns[ty], t->ns[ty]));
    }
    json_t *j = breakdown(txns, ev, ns);
    json_object_set_new(j, "by_type", by_type);
    json_object_set_new(j, "writer_lock_hold_us", hold_json(held));
    json_object_set_new(j, "totals", totals_json(t));
    json_object_set_new(
        j, "note",
        json_string("connections' time in measured transactions (Delivery: the deferred "
                    "execution); writer_lock_held includes begin_, reads_ and "
                    "commit_under_writer_lock; reads_outside_writer_lock includes prefetch's "
                    "reads; other = SQL work and waiting for a CPU (it includes prefetch's "
                    "SQL work); writer_lock_hold_us: per write transaction, all attempts"));
    return j;
}

static uint64_t u64_of(const json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 ? (uint64_t)v : 0;
}

void tpcc_waits_add_json(const json_t *waits, tpcc_wait_totals *t, sim_hist *held[TPCC_NTYPES])
{
    const json_t *tot = json_object_get(waits, "totals");
    const json_t *hists =
        json_object_get(json_object_get(waits, "writer_lock_hold_us"), "histograms");
    for (int ty = 0; ty < TPCC_NTYPES; ty++) {
        const json_t *one = json_object_get(tot, tpcc_type_names[ty]);
        t->txns[ty] += u64_of(one, "transactions");
        t->event_ns[ty] += u64_of(one, "event_ns");
        for (int p = 0; p < TPCC_W_NPARTS; p++)
            t->ns[ty][p] += u64_of(one, part_names[p]);
        sim_hist *h = sim_hist_from_json(json_object_get(hists, tpcc_type_names[ty]), NULL, 0);
        if (h) sim_hist_merge(held[ty], h);
        sim_hist_free(h);
    }
}
