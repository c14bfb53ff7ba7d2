/*
 * The SQLite WAL's bound (st_db_opts.wal_limit_bytes, storage/sqlite/sqlite_db.c): writers
 * commit while readers keep overlapping snapshots open, so that some snapshot always
 * uses the WAL and passive checkpoints alone never let it restart (checkpoint
 * starvation). With a 1 MiB bound the WAL restarts and neither its frames nor its file
 * ever pass the bound; without one (the control) the same workload grows it past the
 * bound, so the first case can fail. Every committed update is in the database after
 * the run and after close and reopen, and the restarts wrote at the checkpointer's full
 * depth. A bound below 64 frames is refused. The checkpointer's write depth follows its
 * backlog (adaptive flushing). The trigger both OLTP workloads ask for fits the buffer.
 */
#include "storage/sqlite/sqlite.h"
#include "storage/sqlite/sqlite_internal.h"
#include "vfs_workload.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NROWS 5000
#define WRITERS 2
#define READERS 2
#define TXNS_PER_WRITER 1500
#define LIMIT (1u << 20)

static char root[256];

static int setup(void **state)
{
    snprintf(root, sizeof root, "/tmp/appsim-test-wal-limit-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd);
}

static st_target *open_target(const char *sub)
{
    char p[300], err[1024];
    snprintf(p, sizeof p, "%s/%s", root, sub);
    st_target_opts o = {.path = p};
    st_target *t = NULL;
    int rc = st_target_open(&o, &t, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    return t;
}

static st_db *open_db(st_target *t, uint64_t limit, bool create)
{
    char err[1024];
    /* sync off: the test is about the WAL's size, not the drive's flush latency */
    st_db_opts o = {.buffer_bytes = 2 << 20,
                    .max_connections = WRITERS + READERS + 1,
                    .checkpoint_wal_bytes = 128 * 1024,
                    .sync = "off",
                    .wal_limit_bytes = limit};
    st_db *db = NULL;
    int rc = st_db_open(t, "test.db", &o, create, &db, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    return db;
}

static sqlite3 *connect(st_db *db)
{
    char err[1024];
    sqlite3 *c = NULL;
    int rc = st_db_connect(db, &c, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    return c;
}

typedef struct job {
    st_db *db;
    atomic_bool *stop;
    int id;
    int committed, errors, snapshots;
} job;

static void *writer(void *arg)
{
    job *j = arg;
    sqlite3 *c = NULL;
    char err[512];
    wl_conn wc;
    if (st_db_connect(j->db, &c, err, sizeof err) || wl_prepare(&wc, c)) {
        j->errors++;
        sqlite3_close(c);
        return NULL;
    }
    sim_rng rng;
    sim_rng_seed(&rng, 7, (uint64_t)j->id);
    for (int i = 0; i < TXNS_PER_WRITER; i++) {
        int rc = wl_txn(&wc, &rng, NROWS, 1, 0);
        if (rc == SQLITE_OK)
            j->committed++;
        else if ((rc & 0xff) != SQLITE_BUSY)
            j->errors++;
    }
    wl_finish(&wc);
    sqlite3_close(c);
    return NULL;
}

/* Snapshots of 2 ms, the readers offset by 1 ms: one is nearly always open. */
static void *reader(void *arg)
{
    job *j = arg;
    sqlite3 *c = NULL;
    char err[512];
    if (st_db_connect(j->db, &c, err, sizeof err)) {
        j->errors++;
        return NULL;
    }
    sim_sleep_until_ns(sim_now_ns() + (uint64_t)j->id * 1000000ull);
    while (!*j->stop) {
        if (wl_exec(c, "BEGIN") || wl_query_i64(c, "SELECT v FROM t WHERE id = 1") < 0) {
            j->errors++;
            break;
        }
        sim_sleep_until_ns(sim_now_ns() + 2000000ull);
        wl_exec(c, "COMMIT");
        j->snapshots++;
    }
    sqlite3_close(c);
    return NULL;
}

static json_int_t jint(json_t *j, const char *k)
{
    return json_integer_value(json_object_get(j, k));
}

/* Loads the table without a bound (the load is one transaction larger than it) and
 * reopens the database with `limit`. */
static st_db *load_and_reopen(st_target *t, uint64_t limit)
{
    st_db *db = open_db(t, UINT64_MAX, true);
    sqlite3 *c = connect(db);
    assert_int_equal(wl_load(c, NROWS, 200), 0);
    sqlite3_close(c);
    st_db_close(db);
    return open_db(t, limit, false);
}

/* Runs the workload; returns the number of committed updates and the "db" section. */
static int run_workload(st_db *db, json_t **out)
{
    sqlite3 *c = connect(db);
    atomic_bool stop = false;
    job w[WRITERS], r[READERS];
    pthread_t wt[WRITERS], rt[READERS];
    for (int i = 0; i < READERS; i++) {
        r[i] = (job){.db = db, .stop = &stop, .id = i};
        assert_int_equal(pthread_create(&rt[i], NULL, reader, &r[i]), 0);
    }
    for (int i = 0; i < WRITERS; i++) {
        w[i] = (job){.db = db, .stop = &stop, .id = i};
        assert_int_equal(pthread_create(&wt[i], NULL, writer, &w[i]), 0);
    }
    int committed = 0;
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(wt[i], NULL);
        assert_int_equal(w[i].errors, 0);
        committed += w[i].committed;
    }
    stop = true;
    for (int i = 0; i < READERS; i++) {
        pthread_join(rt[i], NULL);
        assert_int_equal(r[i].errors, 0);
        assert_true(r[i].snapshots > 0);
    }
    /* writers wait for restarts; none gives up */
    assert_int_equal(committed, WRITERS * TXNS_PER_WRITER);
    assert_int_equal(wl_query_i64(c, "SELECT sum(v) FROM t"), committed);
    char msg[256];
    assert_true(wl_integrity_ok(c, msg, sizeof msg));
    *out = st_db_json(db);
    char *text = json_dumps(json_object_get(*out, "checkpoint"), JSON_INDENT(1));
    fprintf(stderr, "checkpoint: %s\nfiles: ", text);
    free(text);
    text = json_dumps(json_object_get(*out, "files"), 0);
    fprintf(stderr, "%s\n", text);
    free(text);
    sqlite3_close(c);
    return committed;
}

static void wal_stays_under_bound(void **state)
{
    st_target *t = open_target("bounded");
    st_db *db = load_and_reopen(t, LIMIT);
    json_t *j = NULL;
    int committed = run_workload(db, &j);
    json_t *ck = json_object_get(j, "checkpoint");
    json_t *lim = json_object_get(ck, "wal_limit");
    assert_int_equal(jint(lim, "limit_bytes"), LIMIT);
    assert_true(json_is_true(json_object_get(lim, "within_limit")));
    assert_true(jint(ck, "wal_bytes_max") > 0);
    assert_true(jint(ck, "wal_bytes_max") <= LIMIT);
    assert_true(jint(lim, "wal_restarts") > 0);
    assert_true(jint(lim, "restart_checkpoints") > 0);
    assert_int_equal(jint(ck, "errors"), 0);
    /* a restart holds writers back: it and its catch-up write at the full depth */
    json_t *depth = json_object_get(ck, "write_depth");
    assert_int_equal(jint(depth, "max"), VF_DB_DEPTH_MAX);
    assert_true(jint(depth, "deeper_count") >= jint(lim, "restart_checkpoints"));
    /* restarts held writers from the WAL write lock on, copying the last frames and
     * then waiting for readers of the WAL: the two parts make up the whole */
    json_t *held = json_object_get(lim, "restart_held");
    assert_non_null(json_object_get(json_object_get(lim, "writers_held"), "count"));
    double held_ms = json_number_value(json_object_get(held, "ms_total"));
    double parts = json_number_value(json_object_get(held, "copying_ms")) +
                   json_number_value(json_object_get(held, "waiting_for_readers_ms"));
    assert_true(held_ms > 0);
    assert_true(parts > held_ms * 0.999 && parts < held_ms * 1.001);
    assert_true(json_number_value(json_object_get(held, "ms_max")) <= held_ms);
    assert_true(json_number_value(json_object_get(held, "waiting_for_readers_ms")) > 0);
    /* the file too: a restart keeps the blocks it has, never more than the bound */
    json_t *wal = json_object_get(json_object_get(j, "files"), "wal");
    assert_true(jint(wal, "end_bytes") <= LIMIT);
    json_decref(j);
    st_db_close(db);

    db = open_db(t, LIMIT, false);
    sqlite3 *c = connect(db);
    assert_int_equal(wl_query_i64(c, "SELECT sum(v) FROM t"), committed);
    sqlite3_close(c);
    st_db_close(db);
    st_target_close(t);
}

/* The control: the same workload without a bound grows the WAL past it. */
static void without_bound_wal_grows(void **state)
{
    st_target *t = open_target("unbounded");
    st_db *db = load_and_reopen(t, UINT64_MAX);
    json_t *j = NULL;
    run_workload(db, &j);
    json_t *ck = json_object_get(j, "checkpoint");
    assert_true(jint(ck, "wal_bytes_max") > LIMIT);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(ck, "wal_limit"), "policy")),
        "none (SQLite's own: no bound)");
    json_decref(j);
    st_db_close(db);
    st_target_close(t);
}

/* A number in the result's "checkpoint.wal_limit" (section NULL) or in its section. */
static double wal_limit_num(st_db *db, const char *section, const char *key)
{
    json_t *j = st_db_json(db);
    json_t *v = json_object_get(json_object_get(j, "checkpoint"), "wal_limit");
    if (section) v = json_object_get(v, section);
    double n = json_number_value(json_object_get(v, key));
    json_decref(j);
    return n;
}

static double held_ms(st_db *db, const char *key)
{
    return wal_limit_num(db, "restart_held", key);
}

/* Commits one update every pace_ns until the deadline or until stop(db) says so
 * (asked every 16 commits: it builds the whole result); returns whether stop did. */
static bool commit_until(wl_conn *wc, sim_rng *rng, st_db *db, uint64_t pace_ns,
                         uint64_t deadline_ns, bool (*stop)(st_db *))
{
    for (unsigned i = 1; sim_now_ns() < deadline_ns; i++) {
        assert_int_equal(wl_txn(wc, rng, NROWS, 0, 0), SQLITE_OK);
        if (stop && i % 16 == 0 && stop(db)) return true;
        if (pace_ns) sim_sleep_until_ns(sim_now_ns() + pace_ns);
    }
    return false;
}

static bool gave_up_once(st_db *db)
{
    return wal_limit_num(db, NULL, "restart_gave_up") > 0;
}

static bool restarted(st_db *db)
{
    return wal_limit_num(db, NULL, "wal_restarts") > 0;
}

/* A reader keeps one snapshot open far longer than a restart's wait for readers. Each
 * try holds every writer while it waits, so after one gives up writers go on for at
 * least as long as they were held: over a second of commits the restarts hold them at
 * most about half of it (retrying at the next commit would hold them nearly all of
 * it). Each give-up waited out its whole wait, twice
 * the one before; when the reader ends, the WAL restarts (by the checkpointer, or by
 * a writer that finds it all copied and unread). */
static void restart_backs_off_from_a_long_reader(void **state)
{
    const uint64_t limit = 8u << 20, ms = 1000000ull;
    st_target *t = open_target("long-reader");
    st_db *db = load_and_reopen(t, limit);
    sqlite3 *w = connect(db), *r = connect(db);
    wl_conn wc;
    assert_int_equal(wl_prepare(&wc, w), 0);
    sim_rng rng;
    sim_rng_seed(&rng, 9, 0);
    /* a frame in the WAL, then the reader's snapshot, which uses it */
    assert_int_equal(wl_txn(&wc, &rng, NROWS, 0, 0), SQLITE_OK);
    assert_int_equal(wl_exec(r, "BEGIN"), 0);
    assert_true(wl_query_i64(r, "SELECT v FROM t WHERE id = 1") >= 0);
    /* past half the bound as fast as commits go, until a restart has given up */
    assert_true(commit_until(&wc, &rng, db, 0, sim_now_ns() + 20000 * ms, gave_up_once));
    double gave_up0 = wal_limit_num(db, NULL, "restart_gave_up");
    double held0 = held_ms(db, "ms_total");
    uint64_t t0 = sim_now_ns();
    commit_until(&wc, &rng, db, 2 * ms, t0 + 1000 * ms, NULL);
    double window_ms = (double)(sim_now_ns() - t0) / 1e6;
    double held = held_ms(db, "ms_total") - held0;
    double gave_up1 = wal_limit_num(db, NULL, "restart_gave_up");
    double restarts = wal_limit_num(db, NULL, "wal_restarts");
    fprintf(stderr, "long reader: held %.1f of %.1f ms, %lld more give-ups\n", held, window_ms,
            (long long)(gave_up1 - gave_up0));
    assert_int_equal(restarts, 0);
    assert_true(gave_up1 - gave_up0 >= 2);
    assert_true(held < 0.7 * window_ms);
    /* waits of 25, 50, 100, ... ms, each waited out */
    double waits = 0, wait = 25;
    for (json_int_t i = 0; i < gave_up1; i++) {
        waits += wait;
        wait = wait < 200 ? 2 * wait : 400;
    }
    assert_true(held_ms(db, "waiting_for_readers_ms") >= 0.95 * waits);
    /* the reader ends: the next try restarts the WAL */
    assert_int_equal(wl_exec(r, "COMMIT"), 0);
    assert_true(commit_until(&wc, &rng, db, 2 * ms, sim_now_ns() + 10000 * ms, restarted));
    wl_finish(&wc);
    sqlite3_close(w);
    sqlite3_close(r);
    st_db_close(db);
    st_target_close(t);
}

static void tiny_bound_refused(void **state)
{
    st_target *t = open_target("tiny");
    char err[1024];
    st_db_opts o = {.buffer_bytes = 2 << 20, .wal_limit_bytes = 64 * 1024};
    st_db *db = NULL;
    assert_int_equal(st_db_open(t, "x.db", &o, true, &db, err, sizeof err), SIM_EXIT_USAGE);
    assert_null(db);
    assert_non_null(strstr(err, "WAL limit 64.0 KiB is too small"));
    st_target_close(t);
}

/* The checkpoint's trigger under a WAL bound: whole early in a generation, then a
 * quarter of the room left before the restart, never under SQLite's default; a trigger
 * at or under the default, or no bound, is kept as it is. */
static void checkpoint_trigger_tapers_to_restart(void **state)
{
    (void)state;
    const uint64_t mib = 1ull << 20, def = ST_DB_DEFAULT_CHECKPOINT_WAL_BYTES;
    const uint64_t restart = 512 * mib, trigger = 64 * mib;
    assert_int_equal(vf_ck_due_bytes(trigger, restart, 0), trigger);
    assert_int_equal(vf_ck_due_bytes(trigger, restart, 256 * mib), trigger);
    assert_int_equal(vf_ck_due_bytes(trigger, restart, 448 * mib), 16 * mib);
    assert_int_equal(vf_ck_due_bytes(trigger, restart, 500 * mib), def);
    assert_int_equal(vf_ck_due_bytes(trigger, restart, 600 * mib), def); /* past it */
    uint64_t last = trigger;
    for (uint64_t w = 0; w < restart + 64 * mib; w += mib) {
        uint64_t d = vf_ck_due_bytes(trigger, restart, w);
        assert_true(d >= def && d <= trigger && d <= last); /* only ever lower */
        last = d;
    }
    assert_int_equal(vf_ck_due_bytes(def, restart, 500 * mib), def);
    assert_int_equal(vf_ck_due_bytes(mib, restart, 500 * mib), mib);
    assert_int_equal(vf_ck_due_bytes(trigger, 0, 1ull << 40), trigger);
}

/* Adaptive flushing: the minimum depth while the backlog is small, deeper in proportion
 * beyond that, never past the maximum; the maximum whenever writers are held back. */
static void write_depth_follows_backlog(void **state)
{
    const uint64_t trigger = 1000, easy = VF_CK_EASY_TRIGGERS * trigger;
    assert_int_equal(vf_ck_write_depth(false, 0, trigger), VF_DB_DEPTH_MIN);
    assert_int_equal(vf_ck_write_depth(false, easy, trigger), VF_DB_DEPTH_MIN);
    assert_int_equal(vf_ck_write_depth(false, 2 * easy, trigger), 2 * VF_DB_DEPTH_MIN);
    assert_int_equal(vf_ck_write_depth(false, 1000 * easy, trigger), VF_DB_DEPTH_MAX);
    for (uint64_t b = 0; b < 20 * easy; b += easy / 4) {
        unsigned d = vf_ck_write_depth(false, b, trigger);
        assert_true(d >= VF_DB_DEPTH_MIN && d <= VF_DB_DEPTH_MAX);
        assert_true(d <= vf_ck_write_depth(false, b + easy / 4, trigger)); /* never shallower */
        assert_int_equal(vf_ck_write_depth(true, b, trigger), VF_DB_DEPTH_MAX);
    }
    /* a trigger under one frame counts as one */
    assert_int_equal(vf_ck_write_depth(false, 5, 0), vf_ck_write_depth(false, 5, 1));
}

/* The trigger that fits the buffer (st_db_checkpoint_bytes_for): a sixteenth of the
 * smaller of the buffer and the WAL bound, so the frames a checkpoint copies are still in
 * the pool; never over 64 MiB; storage's default (0) where the share is under SQLite's
 * 4 MiB. A 58-MiB pool, smaller than a fixed 64-MiB trigger, gets SQLite's 4 MiB. */
static void checkpoint_trigger_fits_the_buffer(void **state)
{
    (void)state;
    const uint64_t mib = 1ull << 20, gib = 1ull << 30;
    assert_int_equal(st_db_checkpoint_bytes_for(256 * mib, 0), 16 * mib);
    assert_int_equal(st_db_checkpoint_bytes_for(256 * mib, 1ull << 40), 16 * mib);
    assert_int_equal(st_db_checkpoint_bytes_for(256 * mib, 128 * mib), 8 * mib); /* the bound */
    assert_int_equal(st_db_checkpoint_bytes_for(4 * gib, 0), 64 * mib);          /* the cap */
    assert_int_equal(st_db_checkpoint_bytes_for(58 * mib, 0), 0);
    assert_int_equal(st_db_checkpoint_bytes_for(64 * mib, 0), 0); /* == the default */
    assert_int_equal(st_db_checkpoint_bytes_for(65 * mib, 0), 65 * mib / 16);
    assert_int_equal(st_db_checkpoint_bytes_for(0, 0), 0);
    for (uint64_t b = mib; b < 8 * gib; b += b / 3) {
        uint64_t t = st_db_checkpoint_bytes_for(b, 0);
        assert_true(t == 0 || (t > ST_DB_DEFAULT_CHECKPOINT_WAL_BYTES && t <= b / 16 &&
                               t <= ST_DB_MAX_CHECKPOINT_BYTES));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wal_stays_under_bound),
        cmocka_unit_test(without_bound_wal_grows),
        cmocka_unit_test(restart_backs_off_from_a_long_reader),
        cmocka_unit_test(tiny_bound_refused),
        cmocka_unit_test(write_depth_follows_backlog),
        cmocka_unit_test(checkpoint_trigger_tapers_to_restart),
        cmocka_unit_test(checkpoint_trigger_fits_the_buffer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
