/*
 * tests/unit/vfs_workload.h: a small self-contained SQLite workload for the VFS tests
 * and benchmarks (no dependency on the tpcc/sysbench workloads): a table of N rows of
 * `pad` bytes, transactions of uniform random point reads plus one update, and an
 * append-only log of committed transaction ids for crash checks.
 * Header-only (static functions) because each test is its own executable.
 */
#ifndef APPSIM_TESTS_VFS_WORKLOAD_H
#define APPSIM_TESTS_VFS_WORKLOAD_H

#include "sim/sim.h"
#include "storage/sqlite/sqlite.h"

#include <stdio.h>
#include <string.h>

static inline int wl_exec(sqlite3 *c, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(c, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "wl: %s: %s\n", sql, msg ? msg : sqlite3_errmsg(c));
        sqlite3_free(msg);
    }
    return rc;
}

/* Creates t(id, v, pad) with nrows rows of pad bytes each, and the commit log. */
static inline int wl_load(sqlite3 *c, uint64_t nrows, int pad)
{
    if (wl_exec(c, "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v INTEGER, pad BLOB);"
                   "CREATE TABLE IF NOT EXISTS log(txid INTEGER PRIMARY KEY, rid INTEGER);"))
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c, "INSERT INTO t VALUES(?1, 0, randomblob(?2))", -1, &st, NULL))
        return -1;
    int rc = wl_exec(c, "BEGIN");
    for (uint64_t i = 1; rc == SQLITE_OK && i <= nrows; i++) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)i);
        sqlite3_bind_int(st, 2, pad);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(st);
        if (rc == SQLITE_OK && i % 5000 == 0) rc = wl_exec(c, "COMMIT; BEGIN");
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_OK) rc = wl_exec(c, "COMMIT");
    return rc == SQLITE_OK ? 0 : -1;
}

typedef struct wl_conn {
    sqlite3 *c;
    sqlite3_stmt *get, *upd, *log;
} wl_conn;

static inline int wl_prepare(wl_conn *w, sqlite3 *c)
{
    memset(w, 0, sizeof *w);
    w->c = c;
    if (sqlite3_prepare_v2(c, "SELECT v FROM t WHERE id=?1", -1, &w->get, NULL) ||
        sqlite3_prepare_v2(c, "UPDATE t SET v=v+1 WHERE id=?1", -1, &w->upd, NULL) ||
        sqlite3_prepare_v2(c, "INSERT INTO log VALUES(?1, ?2)", -1, &w->log, NULL))
        return -1;
    return 0;
}

static inline void wl_finish(wl_conn *w)
{
    sqlite3_finalize(w->get);
    sqlite3_finalize(w->upd);
    sqlite3_finalize(w->log);
}

/* One transaction (BEGIN IMMEDIATE: writers queue on the busy handler instead of failing
 * a read-to-write upgrade): `reads` point reads, one update, and (txid > 0) a log row. Returns
 * SQLITE_OK once committed, SQLITE_BUSY (rolled back) or another error. */
static inline int wl_txn(wl_conn *w, sim_rng *rng, uint64_t nrows, int reads, int64_t txid)
{
    int rc = wl_exec(w->c, "BEGIN IMMEDIATE");
    if (rc) return rc;
    for (int i = 0; i < reads && rc == SQLITE_OK; i++) {
        sqlite3_bind_int64(w->get, 1, (sqlite3_int64)sim_rng_range(rng, 1, nrows));
        int s = sqlite3_step(w->get);
        rc = (s == SQLITE_ROW || s == SQLITE_DONE) ? SQLITE_OK : s;
        sqlite3_reset(w->get);
    }
    uint64_t rid = sim_rng_range(rng, 1, nrows);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(w->upd, 1, (sqlite3_int64)rid);
        int s = sqlite3_step(w->upd);
        rc = s == SQLITE_DONE ? SQLITE_OK : s;
        sqlite3_reset(w->upd);
    }
    if (rc == SQLITE_OK && txid > 0) {
        sqlite3_bind_int64(w->log, 1, txid);
        sqlite3_bind_int64(w->log, 2, (sqlite3_int64)rid);
        int s = sqlite3_step(w->log);
        rc = s == SQLITE_DONE ? SQLITE_OK : s;
        sqlite3_reset(w->log);
    }
    if (rc == SQLITE_OK) rc = sqlite3_exec(w->c, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) sqlite3_exec(w->c, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* "ok" from PRAGMA integrity_check, else the first complaint in msg. */
static inline bool wl_integrity_ok(sqlite3 *c, char *msg, size_t len)
{
    sqlite3_stmt *st;
    snprintf(msg, len, "cannot run integrity_check");
    if (sqlite3_prepare_v2(c, "PRAGMA integrity_check", -1, &st, NULL)) return false;
    bool ok = false;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *r = (const char *)sqlite3_column_text(st, 0);
        snprintf(msg, len, "%s", r ? r : "(null)");
        ok = r && !strcmp(r, "ok");
    }
    sqlite3_finalize(st);
    return ok;
}

static inline int64_t wl_query_i64(sqlite3 *c, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(c, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

#endif
