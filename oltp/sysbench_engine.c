/*
 * oltp/sysbench_engine.c: the registry of sysbench database engines. Engines register
 * from constructors (SB_REGISTER_ENGINE), before main, on one thread; the table stays
 * sorted by name so that help text and error messages are stable.
 */
#include "oltp/oltp.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ENGINES 8

static const sb_engine_ops *engines[MAX_ENGINES];
static int nengines;
static char names[256];

void sb_register_engine(const sb_engine_ops *ops)
{
    if (nengines == MAX_ENGINES) {
        fprintf(stderr, "appsim: too many sysbench engines registered\n");
        abort();
    }
    int i = nengines++;
    while (i > 0 && strcmp(engines[i - 1]->name, ops->name) > 0) {
        engines[i] = engines[i - 1];
        i--;
    }
    engines[i] = ops;
    names[0] = '\0';
    for (int j = 0; j < nengines; j++) {
        if (j) strncat(names, "|", sizeof names - strlen(names) - 1);
        strncat(names, engines[j]->name, sizeof names - strlen(names) - 1);
    }
}

const sb_engine_ops *sb_find_engine(const char *name)
{
    for (int i = 0; i < nengines; i++)
        if (!strcmp(engines[i]->name, name)) return engines[i];
    return NULL;
}

const char *sb_engine_names(void)
{
    return names;
}
