/*
 * sim/review/compare_foreign.c: other processes' share of the disk's I/O during a
 * drive's runs (device_io.foreign_io_share, storage/device_io.c), as a row of its table
 * and, where a run's device figures carry the foreign-I/O warning, as a warning under
 * it naming the drive and the result file. The device rows above it are the whole
 * disk's: this row says how much of them was not appsim's.
 */
#include "sim/review/review_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PHASES 512

/* One result's foreign and total bytes over every measured phase it holds (the run, or
 * each curve point's run), and its first warning. */
typedef struct foreign_sum {
    double foreign, total;
    int phases, warned; /* measured phases with foreign figures; of them with a warning */
    const char *warning;
    const json_t *seen[MAX_PHASES]; /* the device figures counted */
} foreign_sum;

/* Series (intervals), ranks and warm-up rounds repeat or split a phase already counted. */
static bool repeats_a_phase(const char *key)
{
    static const char *const keys[] = {"intervals", "ranks", "rounds", "warmup"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!strcmp(key, keys[i])) return true;
    return false;
}

/* A result may repeat a phase's figures: a curve's top-level device_io is its
 * maximum-rate point's. */
static bool counted(const foreign_sum *s, const json_t *dev)
{
    for (int i = 0; i < s->phases && i < MAX_PHASES; i++)
        if (json_equal((json_t *)s->seen[i], (json_t *)dev)) return true;
    return false;
}

static void add_device_io(foreign_sum *s, const json_t *dev)
{
    double fr, fw, rb, wb;
    if (!cmp_num(dev, "foreign_read_bytes", &fr) || !cmp_num(dev, "foreign_write_bytes", &fw) ||
        !cmp_num(dev, "read_bytes", &rb) || !cmp_num(dev, "write_bytes", &wb))
        return; /* the kernel kept no per-process figures */
    if (counted(s, dev)) return;
    if (s->phases < MAX_PHASES) s->seen[s->phases] = dev;
    s->foreign += fr + fw;
    s->total += rb + wb;
    s->phases++;
    const char *w = cmp_str(dev, "warning");
    if (w) {
        s->warned++;
        if (!s->warning) s->warning = w;
    }
}

static void walk(foreign_sum *s, const json_t *j, int depth)
{
    if (depth > 8) return;
    if (json_is_array(j)) {
        size_t i;
        const json_t *v;
        json_array_foreach(j, i, v) walk(s, v, depth + 1);
        return;
    }
    if (!json_is_object(j)) return;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)j, k, v)
    {
        if (!strcmp(k, "device_io"))
            add_device_io(s, v);
        else if (!repeats_a_phase(k))
            walk(s, v, depth + 1);
    }
}

static void foreign_of(const json_t *doc, foreign_sum *s)
{
    memset(s, 0, sizeof *s);
    walk(s, doc, 0);
}

void cmp_foreign_metrics(cmp_result **runs, int n, cmp_mlist *out, char **warn)
{
    double foreign = 0, total = 0;
    bool have = n > 0;
    for (int i = 0; i < n; i++) {
        foreign_sum *s = sim_xmalloc(sizeof *s);
        foreign_of(runs[i]->doc, s);
        have = have && s->phases > 0;
        foreign += s->foreign;
        total += s->total;
        char msg[1024] = "";
        if (s->warning && s->phases > 1)
            snprintf(msg, sizeof msg, "%s (%s): foreign I/O in %d of its %d measured phases: %s",
                     runs[i]->label, runs[i]->path, s->warned, s->phases, s->warning);
        else if (s->warning)
            snprintf(msg, sizeof msg, "%s (%s): %s", runs[i]->label, runs[i]->path, s->warning);
        free(s);
        if (msg[0]) cmp_warn_append(warn, msg);
    }
    cmp_mlist_add(out, "dev.foreign_io_share", "foreign I/O share of the disk", "%", CMP_NONE, have,
                  total > 0 ? 100 * foreign / total : 0);
}
