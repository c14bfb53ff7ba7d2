/*
 * The SQLite sysbench engine (oltp/sysbench_sqlite.c) through st_db: the shared
 * engine cases (load with the k index, sysbench's statements, index and row count
 * consistent under concurrent read_write, insert and delete workloads). Runs on the
 * direct-I/O VFS unless APPSIM_TEST_BUFFERED is set.
 */
#include "sysbench_engine_cases.h"

int main(void)
{
    engine_name = "sqlite";
    target_buffered = getenv("APPSIM_TEST_BUFFERED") != NULL;
    return run_engine_cases();
}
