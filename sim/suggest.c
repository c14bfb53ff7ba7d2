/*
 * sim/suggest.c: "did you mean" for a mistyped command, action or option. A typo is
 * one to three edits away from the name meant (more edits allowed as names grow), or
 * the start of one name only (--dur for --duration).
 */
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

size_t sim_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    /* Two rows of the dynamic-programming table: names are short, but stay on the
     * heap so that any length works. */
    size_t *prev = sim_xmalloc((lb + 1) * sizeof *prev), *cur = sim_xmalloc((lb + 1) * sizeof *cur);
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            size_t best = sub < del ? sub : del;
            cur[j] = best < ins ? best : ins;
        }
        size_t *t = prev;
        prev = cur;
        cur = t;
    }
    size_t d = prev[lb];
    free(prev);
    free(cur);
    return d;
}

/* How many edits still read as a typo of a name of this length. */
static size_t typo_budget(size_t len)
{
    return len <= 4 ? 1 : len <= 8 ? 2 : 3;
}

const char *sim_suggest(const char *typed, const char *const *candidates, size_t n)
{
    if (!typed || !*typed) return NULL;
    const char *best = NULL, *prefix_of = NULL;
    size_t best_d = (size_t)-1, tlen = strlen(typed), prefixes = 0;
    for (size_t i = 0; i < n; i++) {
        const char *c = candidates[i];
        if (!c) continue;
        size_t d = sim_edit_distance(typed, c);
        size_t clen = strlen(c);
        if (d <= typo_budget(clen > tlen ? clen : tlen) && d < best_d) {
            best = c;
            best_d = d;
        }
        if (tlen >= 3 && tlen < clen && !strncmp(c, typed, tlen)) {
            prefix_of = c;
            prefixes++;
        }
    }
    if (best) return best;
    return prefixes == 1 ? prefix_of : NULL;
}

int sim_refuse_unknown(const char *what, const char *typed, const char *const *words,
                       const char *see)
{
    size_t n = 0;
    while (words && words[n])
        n++;
    const char *near = sim_suggest(typed, words, n);
    if (near)
        sim_error("unknown %s '%s'; did you mean '%s'? %s", what, typed, near, see);
    else
        sim_error("unknown %s '%s'; %s", what, typed, see);
    return SIM_EXIT_USAGE;
}
