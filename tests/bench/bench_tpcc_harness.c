/*
 * tests/bench/bench_tpcc_harness.c: what the harness (virtual-user engine, deck, random
 * inputs, meters, interval reporter, deferred-delivery queue) costs in CPU against the
 * same transactions run in a bare loop.
 *
 * usage: bench_tpcc_harness DIR [SECONDS] [buffered]
 * DIR must hold a database prepared with `appsim tpcc prepare --target DIR` (scale 1).
 * Both sides use the same target, the same VFS and buffer (st_db), one connection:
 *   bare:    inputs drawn beforehand (deck and generators), then a timed loop calling
 *            the five transaction functions (Delivery inline on a second connection);
 *   harness: `appsim tpcc run --pacing off --vusers 1 --connections 1` in this process.
 * CPU per transaction comes from getrusage (user + system) over each phase; the two
 * alternate twice and the lower figure of each side is kept. With "buffered", both
 * sides use SQLite's default VFS through the page cache with synchronous=off, so the
 * transactions are CPU-bound and the comparison is less disturbed by I/O.
 */
#include "oltp/oltp.h"
#include "oltp/tpcc_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

typedef struct input {
    int type;
    union {
        tpcc_no_in no;
        tpcc_pay_in pay;
        tpcc_os_in os;
        tpcc_del_in del;
        tpcc_sl_in sl;
    };
} input;

static bool buffered;

static double bare(const char *dir, double seconds, uint64_t *count)
{
    char err[512];
    st_target_opts to = {.path = dir, .buffered = buffered};
    st_target *t;
    if (st_target_open(&to, &t, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    st_db_opts dbo = {
        .buffer_bytes = 16u << 20, .sync = buffered ? "off" : "full", .max_connections = 3};
    st_db *db;
    sqlite3 *c;
    if (st_db_open(t, "tpcc-1.db", &dbo, false, &db, err, sizeof err) ||
        st_db_connect(db, &c, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    tpcc_meta m;
    if (tpcc_meta_read(c, &m, err, sizeof err) || m.scale != 1) {
        fprintf(stderr, "prepare scale 1 first: appsim tpcc prepare --target %s\n", dir);
        exit(1);
    }
    tpcc_conn *tc = tpcc_conn_new(c, 1, NULL, err, sizeof err);
    /* Deliveries on a second connection, as the harness's deferred delivery worker
     * runs them: a write from another connection costs the first one its page cache,
     * which is the workload's cost, not the harness's. */
    sqlite3 *c2;
    if (st_db_connect(db, &c2, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    tpcc_conn *tc2 = tpcc_conn_new(c2, 1, NULL, err, sizeof err);
    size_t n = 200000;
    input *in = malloc(n * sizeof *in);
    sim_rng r;
    sim_rng_seed(&r, 5, 5);
    tpcc_consts cr;
    tpcc_consts_run(&cr, &m.c_load, &r);
    tpcc_mix mix;
    tpcc_mix_parse("45,43,4,4,4", &mix, err, sizeof err);
    tpcc_deck deck;
    tpcc_deck_init(&deck, &mix, &r);
    for (size_t i = 0; i < n; i++) {
        in[i].type = tpcc_deck_draw(&deck, &mix, &r);
        switch (in[i].type) {
        case TPCC_NEW_ORDER:
            tpcc_gen_new_order(&r, &cr, 1, 1, &in[i].no);
            break;
        case TPCC_PAYMENT:
            tpcc_gen_payment(&r, &cr, 1, 1, &in[i].pay);
            break;
        case TPCC_ORDER_STATUS:
            tpcc_gen_order_status(&r, &cr, 1, &in[i].os);
            break;
        case TPCC_DELIVERY:
            tpcc_gen_delivery(&r, 1, &in[i].del);
            break;
        default:
            tpcc_gen_stock_level(&r, 1, 1, &in[i].sl);
            break;
        }
    }
    double c0 = cpu_s();
    uint64_t t_end = sim_now_ns() + (uint64_t)(seconds * 1e9);
    size_t i = 0;
    for (; i < n && sim_now_ns() < t_end; i++) {
        bool rb;
        int low, sk;
        switch (in[i].type) {
        case TPCC_NEW_ORDER:
            tpcc_new_order(tc, &in[i].no, &rb, err, sizeof err);
            break;
        case TPCC_PAYMENT:
            tpcc_payment(tc, &in[i].pay, err, sizeof err);
            break;
        case TPCC_ORDER_STATUS:
            tpcc_order_status(tc, &in[i].os, err, sizeof err);
            break;
        case TPCC_DELIVERY:
            tpcc_delivery(tc2, &in[i].del, &sk, err, sizeof err);
            break;
        default:
            tpcc_stock_level(tc, &in[i].sl, &low, err, sizeof err);
            break;
        }
    }
    double cpu = cpu_s() - c0;
    *count = i;
    tpcc_conn_free(tc);
    tpcc_conn_free(tc2);
    sqlite3_close(c);
    sqlite3_close(c2);
    st_db_close(db);
    st_target_close(t);
    free(in);
    return cpu / (double)i;
}

static double harness(const char *dir, double seconds, uint64_t *count)
{
    char dur[32];
    snprintf(dur, sizeof dur, "%gs", seconds);
    char *argv[] = {"tpcc",
                    "run",
                    "--target",
                    (char *)dir,
                    "--pacing",
                    "off",
                    "--vusers",
                    "1",
                    "--connections",
                    "1",
                    "--duration",
                    dur,
                    "--warmup",
                    "0",
                    "--buffer",
                    "16M",
                    "--quiet",
                    "--json",
                    "/tmp/bench_tpcc_harness.json",
                    "--sync",
                    buffered ? "off" : "full",
                    buffered ? "--buffered" : NULL,
                    NULL};
    int argc = 0;
    while (argv[argc])
        argc++;
    const sim_command *cmd = sim_find_command("tpcc");
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");
    double c0 = cpu_s();
    int rc = cmd->main(argc, argv);
    double cpu = cpu_s() - c0;
    fclose(stdout);
    stdout = saved;
    if (rc) {
        fprintf(stderr, "appsim tpcc run failed (%d)\n", rc);
        exit(1);
    }
    json_t *doc = json_load_file("/tmp/bench_tpcc_harness.json", 0, NULL);
    uint64_t n =
        (uint64_t)json_integer_value(json_object_get(json_object_get(doc, "summary"), "count"));
    /* Completed units include those in flight at the end: count what ran. */
    uint64_t units = (uint64_t)json_integer_value(
        json_object_get(json_object_get(json_object_get(doc, "tpcc"), "vu_engine"), "units"));
    json_decref(doc);
    *count = units > n ? units : n;
    return cpu / (double)*count;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [SECONDS]\n", argv[0]);
        return 2;
    }
    double secs = argc > 2 ? atof(argv[2]) : 10;
    buffered = argc > 3 && !strcmp(argv[3], "buffered");
    double b = 1e9, h = 1e9;
    for (int k = 0; k < 2; k++) {
        uint64_t nb, nh;
        double x = bare(argv[1], secs, &nb);
        double y = harness(argv[1], secs, &nh);
        printf("round %d: bare %.1f us CPU/txn (%llu txns), harness %.1f us CPU/txn (%llu txns)\n",
               k + 1, x * 1e6, (unsigned long long)nb, y * 1e6, (unsigned long long)nh);
        b = x < b ? x : b;
        h = y < h ? y : h;
    }
    printf("harness overhead: %.1f %% of the transactions' CPU (bare %.1f us, harness %.1f us)\n",
           100.0 * (h - b) / b, b * 1e6, h * 1e6);
    return 0;
}
