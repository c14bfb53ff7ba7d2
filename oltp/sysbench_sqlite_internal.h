/*
 * oltp/sysbench_sqlite_internal.h: what the SQLite sysbench engine's files share
 * (sysbench_sqlite.c: the engine; sysbench_sqlite_load.c: prepare's two load paths).
 */
#ifndef APPSIM_SYSBENCH_SQLITE_INTERNAL_H
#define APPSIM_SYSBENCH_SQLITE_INTERNAL_H

#include "oltp/oltp.h"
#include "storage/sqlite/sqlite.h"

#include <pthread.h>

/* A database file holding sbtest tables: all of an instance's (--table-files shared)
 * or one (per-table). */
typedef struct sq_file {
    st_db *db;               /* through st_db (run, check); NULL while loading */
    sim_fifo_lock *writers;  /* the file's FIFO writer queue (sysbench_sqlite.c) */
    sqlite3 *load;           /* prepare: the loader's connection, see the load file */
    pthread_mutex_t load_mu; /* prepare: one table loads into the file at a time */
    bool group_commit;       /* connections commit in group-commit mode (st_db) */
    uint32_t page_size;
    char name[64]; /* in the target */
    char path[4096];
} sq_file;

int sq_exec(sqlite3 *c, const char *sql, char *err, size_t errlen);

/* Creates sbtest<table> with `rows` rows and its k index in f (created by st_db, then
 * closed), by `via` ("pages" or "sql"); on return the loader's connection is closed and
 * the file synced with its cached pages dropped. Not thread-safe for one file (the
 * caller holds f->load_mu); different files load at once. */
int sq_load_file(sq_file *f, st_target *t, const char *via, uint32_t table, uint64_t rows,
                 sim_rng *rng, char *err, size_t errlen);

#endif
