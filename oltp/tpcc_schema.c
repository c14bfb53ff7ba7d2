/*
 * oltp/tpcc_schema.c: the nine TPC-C tables (clause 1.3) with the spec's table and
 * column names, the secondary indexes the transactions need, and appsim's metadata
 * row (scale, seed, C-Load, complete, fresh).
 *
 * Rows are clustered by their primary key, as SQL Server's clustered indexes are in the
 * published setup; the loader inserts in key order, so the b-trees are built by
 * appending. Tables of narrow rows are WITHOUT ROWID on the composite key. Stock and
 * customer, whose rows are wide, are rowid tables keyed by an integer made from the
 * composite key in the same order (s_key, c_key; tpcc_internal.h says why), with a CHECK
 * that ties it to the key's columns. History has no key in the spec and stays a rowid
 * table.
 */
#include "oltp/tpcc_internal.h"

#include <stdio.h>
#include <string.h>

#define STOCK_KEY_OF_COLUMNS TPCC_STOCK_KEY_SQL("s_w_id", "s_i_id")
#define CUSTOMER_KEY_OF_COLUMNS TPCC_CUSTOMER_KEY_SQL("c_w_id", "c_d_id", "c_id")
static const char schema_sql[] =
    "CREATE TABLE warehouse (w_id INTEGER, w_name TEXT, w_street_1 TEXT,"
    " w_street_2 TEXT, w_city TEXT, w_state TEXT, w_zip TEXT, w_tax REAL,"
    " w_ytd INTEGER, PRIMARY KEY (w_id)) WITHOUT ROWID;"
    "CREATE TABLE district (d_w_id INTEGER, d_id INTEGER, d_name TEXT,"
    " d_street_1 TEXT, d_street_2 TEXT, d_city TEXT, d_state TEXT, d_zip TEXT,"
    " d_tax REAL, d_ytd INTEGER, d_next_o_id INTEGER,"
    " PRIMARY KEY (d_w_id, d_id)) WITHOUT ROWID;"
    "CREATE TABLE customer (c_key INTEGER PRIMARY KEY, c_w_id INTEGER NOT NULL,"
    " c_d_id INTEGER NOT NULL, c_id INTEGER NOT NULL, c_first TEXT, c_middle TEXT,"
    " c_last TEXT, c_street_1 TEXT, c_street_2 TEXT, c_city TEXT, c_state TEXT, c_zip TEXT,"
    " c_phone TEXT, c_since INTEGER, c_credit TEXT, c_credit_lim INTEGER,"
    " c_discount REAL, c_balance INTEGER, c_ytd_payment INTEGER, c_payment_cnt INTEGER,"
    " c_delivery_cnt INTEGER, c_data TEXT, CHECK (c_key = " CUSTOMER_KEY_OF_COLUMNS "));"
    "CREATE TABLE history (h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER,"
    " h_d_id INTEGER, h_w_id INTEGER, h_date INTEGER, h_amount INTEGER, h_data TEXT);"
    "CREATE TABLE new_order (no_w_id INTEGER, no_d_id INTEGER,"
    " no_o_id INTEGER, PRIMARY KEY (no_w_id, no_d_id, no_o_id)) WITHOUT ROWID;"
    "CREATE TABLE orders (o_w_id INTEGER, o_d_id INTEGER,"
    " o_id INTEGER, o_c_id INTEGER, o_entry_d INTEGER, o_carrier_id INTEGER,"
    " o_ol_cnt INTEGER, o_all_local INTEGER,"
    " PRIMARY KEY (o_w_id, o_d_id, o_id)) WITHOUT ROWID;"
    "CREATE TABLE order_line (ol_w_id INTEGER, ol_d_id INTEGER,"
    " ol_o_id INTEGER, ol_number INTEGER, ol_i_id INTEGER,"
    " ol_supply_w_id INTEGER, ol_delivery_d INTEGER, ol_quantity INTEGER,"
    " ol_amount INTEGER, ol_dist_info TEXT,"
    " PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) WITHOUT ROWID;"
    "CREATE TABLE item (i_id INTEGER, i_im_id INTEGER, i_name TEXT,"
    " i_price INTEGER, i_data TEXT, PRIMARY KEY (i_id)) WITHOUT ROWID;"
    "CREATE TABLE stock (s_key INTEGER PRIMARY KEY, s_w_id INTEGER NOT NULL,"
    " s_i_id INTEGER NOT NULL, s_quantity INTEGER, s_dist_01 TEXT, s_dist_02 TEXT,"
    " s_dist_03 TEXT, s_dist_04 TEXT, s_dist_05 TEXT, s_dist_06 TEXT, s_dist_07 TEXT,"
    " s_dist_08 TEXT, s_dist_09 TEXT, s_dist_10 TEXT, s_ytd INTEGER, s_order_cnt INTEGER,"
    " s_remote_cnt INTEGER, s_data TEXT, CHECK (s_key = " STOCK_KEY_OF_COLUMNS "));"
    "CREATE TABLE appsim_tpcc (id INTEGER PRIMARY KEY CHECK (id = 1), format INTEGER,"
    " scale INTEGER, seed INTEGER, c_load_last INTEGER, c_load_id INTEGER,"
    " c_load_ol_i_id INTEGER, complete INTEGER, fresh INTEGER, loaded_at INTEGER);";

/* Payment and Order-Status by last name (with c_id, so that the index answers them
 * alone); Order-Status's latest order of a customer. */
static const char index_sql[] =
    "CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first, c_id);"
    "CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);";

int tpcc_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return SIM_ERR;
    }
    return SIM_OK;
}

int tpcc_schema_create(sqlite3 *db, char *err, size_t errlen)
{
    return tpcc_exec(db, schema_sql, err, errlen);
}

int tpcc_schema_indexes(sqlite3 *db, char *err, size_t errlen)
{
    return tpcc_exec(db, index_sql, err, errlen);
}

int tpcc_meta_read(sqlite3 *db, tpcc_meta *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (errlen) err[0] = '\0';
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT scale, seed, c_load_last, c_load_id, c_load_ol_i_id,"
                                " complete, fresh, loaded_at, format FROM appsim_tpcc"
                                " WHERE id = 1",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) {
        /* No such table: an empty file, another program's database, or a load that
         * stopped before its schema was committed. */
        if (strstr(sqlite3_errmsg(db), "no such table")) return TPCC_META_NONE;
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return SIM_ERR;
    }
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        m->scale = sqlite3_column_int64(st, 0);
        m->seed = (uint64_t)sqlite3_column_int64(st, 1);
        m->c_load.c_last = (uint32_t)sqlite3_column_int(st, 2);
        m->c_load.c_id = (uint32_t)sqlite3_column_int(st, 3);
        m->c_load.ol_i_id = (uint32_t)sqlite3_column_int(st, 4);
        m->complete = sqlite3_column_int(st, 5) != 0;
        m->fresh = sqlite3_column_int(st, 6) != 0;
        m->loaded_at = sqlite3_column_int64(st, 7);
        int format = sqlite3_column_int(st, 8);
        sqlite3_finalize(st);
        if (format != TPCC_FORMAT) {
            snprintf(err, errlen,
                     "its tables are laid out as an earlier appsim did (format %d; this appsim "
                     "reads format %d)",
                     format, TPCC_FORMAT);
            return TPCC_META_OLD;
        }
        return TPCC_META_READ;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return TPCC_META_NONE;
    snprintf(err, errlen, "%s", sqlite3_errmsg(db));
    return SIM_ERR;
}

int tpcc_meta_set_fresh(sqlite3 *db, bool fresh, char *err, size_t errlen)
{
    return tpcc_exec(db,
                     fresh ? "UPDATE appsim_tpcc SET fresh = 1 WHERE id = 1"
                           : "UPDATE appsim_tpcc SET fresh = 0 WHERE id = 1",
                     err, errlen);
}
