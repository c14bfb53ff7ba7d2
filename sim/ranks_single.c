/*
 * sim/ranks_single.c: the build without MPI is always one rank. Every collective step
 * returns at once. Started by a launcher (mpirun, srun) as one of several ranks, it hands
 * over to appsim-mpi in its own directory (the appsim-mpi package, or the build tree),
 * so that `mpirun appsim ...` works wherever MPI is installed; without appsim-mpi it is
 * refused, since each copy would run alone and write the same files.
 */
#ifndef APPSIM_HAVE_MPI
#include "sim/sim_internal.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* The path of appsim-mpi beside this executable, in buf; false when it cannot be named. */
static bool mpi_sibling(char *buf, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return false;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return false;
    *slash = 0;
    return snprintf(buf, len, "%s/appsim-mpi", self) < (int)len;
}

int sim_ranks_init(int *argc, char ***argv)
{
    long n = sim_ranks_launched_size();
    if (n <= 1) return SIM_EXIT_OK;
    char mpi[PATH_MAX];
    if (mpi_sibling(mpi, sizeof mpi) && access(mpi, X_OK) == 0) {
        (*argv)[0] = mpi;
        execv(mpi, *argv);
        sim_error("started as one of %ld ranks, but cannot start %s: %s", n, mpi, strerror(errno));
        return SIM_EXIT_FAIL;
    }
    sim_error("mpirun or srun started appsim as one of %ld ranks, but this appsim has no "
              "MPI and no appsim-mpi beside it: each rank would run alone and write the same "
              "files. Install the appsim-mpi package (or build with Open MPI: apt-get install "
              "openmpi-bin libopenmpi-dev, then cmake -DAPPSIM_MPI=ON), or run a single "
              "appsim",
              n);
    return SIM_EXIT_USAGE;
}

int sim_ranks_finish(int status)
{
    return status;
}

int sim_ranks_rank(void)
{
    return 0;
}

int sim_ranks_size(void)
{
    return 1;
}

double sim_ranks_total(double x)
{
    return x;
}

void sim_ranks_sync(const char *step) {}

void sim_ranks_run_begin(uint64_t run_id) {}

bool sim_ranks_run_step(uint64_t run_id, const char *step, double *x)
{
    return true;
}

void sim_ranks_min_max_all(uint64_t *min, uint64_t *max) {}

void sim_ranks_sum_u64(uint64_t *v, size_t n) {}

void sim_ranks_sum_hist(sim_hist *h) {}

json_t *sim_ranks_gather(const json_t *mine)
{
    json_t *all = json_array();
    json_array_append(all, (json_t *)mine);
    return all;
}

void sim_ranks_send_stop(uint64_t run_id, const char *why) {}

bool sim_ranks_poll_stop(uint64_t run_id, char *why, size_t whylen)
{
    return false;
}

void sim_ranks_note_error(const char *line) {}
#endif
