/*
 * sim/registry.c: the one registry of things registered by name (commands, database
 * engines, I/O engines, trace formats, trace subcommands). Entries are added from
 * constructors, before main, on one thread; the table stays sorted by name so that help
 * text and messages are stable, and is NULL-terminated for iteration. Overflowing it is
 * a build mistake, reported at start-up rather than silently dropping an entry.
 */
#include "sim/sim.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static const char *name_of(const sim_registry *r, const void *item)
{
    return *(const char *const *)((const char *)item + r->name_offset);
}

void sim_registry_add(sim_registry *r, const void *item)
{
    assert(item && name_of(r, item));
    if (r->n == r->cap) {
        fprintf(stderr, "appsim: more than %d %s registered: raise the registry's size\n", r->cap,
                r->what);
        abort();
    }
    const char *name = name_of(r, item);
    if (sim_registry_find(r, name)) {
        fprintf(stderr, "appsim: two %s named '%s' registered\n", r->what, name);
        abort();
    }
    int i = r->n++;
    while (i > 0 && strcmp(name_of(r, r->items[i - 1]), name) > 0) {
        r->items[i] = r->items[i - 1];
        i--;
    }
    r->items[i] = item;
    r->items[r->n] = NULL;
}

const void *sim_registry_find(const sim_registry *r, const char *name)
{
    assert(r->n >= 0 && r->n <= r->cap && !r->items[r->n]); /* items[0..n) then NULL */
    for (int i = 0; i < r->n; i++)
        if (!strcmp(name_of(r, r->items[i]), name)) return r->items[i];
    return NULL;
}

const char *sim_registry_names(sim_registry *r, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < r->n && used < len; i++)
        used +=
            (size_t)snprintf(buf + used, len - used, "%s%s", i ? "|" : "", name_of(r, r->items[i]));
    return buf;
}
