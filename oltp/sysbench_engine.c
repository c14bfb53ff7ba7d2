/*
 * oltp/sysbench_engine.c: the registry of sysbench database engines. Engines register
 * from constructors (SB_REGISTER_ENGINE), before main, on one thread; the table stays
 * sorted by name so that help text and error messages are stable.
 */
#include "oltp/oltp.h"

#include <stdlib.h>
#include <string.h>

SIM_REGISTRY(engines, sb_engine_ops, "sysbench database engines", 8);
static char names[256]; /* "lmdb|sqlite", kept in step with the registry */

const char *sb_status_name(int status)
{
    switch (status) {
    case SB_OK:
        return "ok";
    case SB_RETRY:
        return "retry";
    case SB_FAIL:
        return "fail";
    }
    return "unknown";
}

void sb_register_engine(const sb_engine_ops *ops)
{
    sim_registry_add(&engines, ops);
    sim_registry_names(&engines, names, sizeof names);
}

const sb_engine_ops *sb_find_engine(const char *name)
{
    return sim_registry_find(&engines, name);
}

const char *sb_engine_names(void)
{
    return names;
}
