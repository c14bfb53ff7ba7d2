/*
 * sim/ranks_single.c: the build without MPI is always one rank. Every collective step
 * returns at once; a launcher that starts this build as several ranks is refused,
 * since each copy would run alone and write the same files.
 */
#ifndef APPSIM_HAVE_MPI
#include "sim/sim_internal.h"

int sim_ranks_init(int *argc, char ***argv)
{
    long n = sim_ranks_launched_size();
    if (n > 1) {
        sim_error("this appsim was built without MPI, but mpirun or srun started it as one "
                  "of %ld ranks, which would each run alone and write the same files; install "
                  "Open MPI (apt-get install openmpi-bin libopenmpi-dev) and build again "
                  "(cmake -DAPPSIM_MPI=ON), or run a single appsim",
                  n);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
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
