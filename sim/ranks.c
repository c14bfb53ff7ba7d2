/*
 * sim/ranks.c: what every build shares about ranks (docs/mpi.md): telling whether a
 * launcher started this process, "{rank}" and "{host}" in paths, the host name. The
 * MPI calls themselves are in sim/ranks_mpi.c (APPSIM_HAVE_MPI) and the one-rank
 * stand-ins in sim/ranks_single.c.
 */
#include "sim/sim_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

long sim_ranks_launched_size(void)
{
    /* Open MPI's mpirun, the PMI-1/2 and PMIx launchers, and Slurm's srun (which sets
     * SLURM_STEP_NUM_TASKS only inside a job step, not in a batch script). */
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                       "SLURM_STEP_NUM_TASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return strtol(v, NULL, 10) > 0 ? strtol(v, NULL, 10) : 1;
    }
    return getenv("PMIX_RANK") || getenv("PMI_RANK") ? 1 : 0;
}

const char *sim_ranks_host(void)
{
    static char host[256];
    if (!host[0]) {
        struct utsname u;
        snprintf(host, sizeof host, "%s", uname(&u) ? "unknown" : u.nodename);
    }
    return host;
}

/* Strings made by sim_ranks_expand, kept (and reachable) until the process ends. */
static char **expanded;
static size_t nexpanded;

static void append(char **out, size_t *len, const char *s, size_t n)
{
    *out = sim_xrealloc(*out, *len + n + 1);
    memcpy(*out + *len, s, n);
    *len += n;
    (*out)[*len] = 0;
}

const char *sim_ranks_expand(const char *s)
{
    if (!s || (!strstr(s, "{rank}") && !strstr(s, "{host}"))) return s;
    char rank[24];
    snprintf(rank, sizeof rank, "%d", sim_ranks_rank());
    char *out = NULL;
    size_t len = 0;
    append(&out, &len, "", 0);
    while (*s) {
        if (!strncmp(s, "{rank}", 6)) {
            append(&out, &len, rank, strlen(rank));
            s += 6;
        } else if (!strncmp(s, "{host}", 6)) {
            append(&out, &len, sim_ranks_host(), strlen(sim_ranks_host()));
            s += 6;
        } else {
            append(&out, &len, s++, 1);
        }
    }
    char **grown = sim_xrealloc(expanded, (nexpanded + 1) * sizeof *expanded);
    expanded = grown;
    expanded[nexpanded++] = out;
    return out;
}
