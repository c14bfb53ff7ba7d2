/*
 * sim/ranks_mpi.c: every MPI call of appsim (docs/mpi.md). MPI starts only when a
 * launcher (mpirun, srun) started this process; otherwise this build is one rank, like
 * the build without MPI.
 *
 * No rank may wait forever for another: every collective is non-blocking and waited
 * for by polling, and while waiting a rank reads two kinds of message from its peers.
 * FAIL: a rank whose command failed tells every other rank (sim_ranks_finish); a rank
 * waiting in a step, or running a run, then stops the job with that rank's host and
 * message (MPI_Abort). STOP: a rank whose run ended early (a fault, a guard, a signal,
 * or before its warm-up ended) tells the others, which stop their run too and abandon a
 * step of that run they were waiting in. Steps inside a run use a communicator of
 * their own, so that an abandoned step never pairs with a later collective.
 *
 * Threads: the main thread calls in here before a run starts and after it ends, the
 * run's reporter thread while it lasts, never both at once (MPI_THREAD_SERIALIZED).
 */
#ifdef APPSIM_HAVE_MPI
#include "sim/sim_internal.h"

#include <errno.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { TAG_FAIL = 7101, TAG_STOP = 7102 };

static bool mpi_on;
static int my_rank, nranks = 1;
static char last_error[1024];
static uint64_t nsteps;
static MPI_Comm run_comm = MPI_COMM_NULL;
static uint64_t run_comm_id;
static uint64_t stop_run_id; /* the newest run a peer stopped, and why */
static char stop_why[768];

int sim_ranks_rank(void)
{
    return my_rank;
}

int sim_ranks_size(void)
{
    return nranks;
}

void sim_ranks_note_error(const char *line)
{
    snprintf(last_error, sizeof last_error, "%s", line);
}

int sim_ranks_init(int *argc, char ***argv)
{
    if (!sim_ranks_launched_size()) return SIM_EXIT_OK;
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        sim_error("mpirun or srun started appsim, but MPI did not start; check the launcher's "
                  "messages above");
        return SIM_EXIT_FAIL;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    mpi_on = true;
    /* Rank 0 prints the job's summary; the others' would repeat it with their own
     * figures (which are in the result's "ranks"). Their errors still reach stderr. */
    if (my_rank > 0 && nranks > 1 && !freopen("/dev/null", "w", stdout))
        sim_warn("cannot silence the standard output of this rank: %s", strerror(errno));
    if (provided < MPI_THREAD_SERIALIZED) {
        sim_error("this MPI library offers no thread support (MPI_THREAD_SERIALIZED), which "
                  "appsim's run reporter needs; use Debian's Open MPI");
        MPI_Abort(MPI_COMM_WORLD, SIM_EXIT_FAIL);
    }
    return SIM_EXIT_OK;
}

/* A FAIL message from a peer stops the whole job here. */
static void check_failed_peers(void)
{
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_FAIL, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return;
    char msg[1400] = "";
    MPI_Recv(msg, sizeof msg - 1, MPI_CHAR, st.MPI_SOURCE, TAG_FAIL, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    int status = atoi(msg);
    const char *text = strchr(msg, ' ');
    sim_error("stopping every rank: rank %d %s", st.MPI_SOURCE, text ? text + 1 : msg);
    MPI_Abort(MPI_COMM_WORLD, status > 0 ? status : SIM_EXIT_FAIL);
}

/* Reads every STOP message that has arrived; keeps the newest run's. */
static void read_stops(void)
{
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_STOP, MPI_COMM_WORLD, &flag, &st);
        if (!flag) return;
        char msg[700] = "";
        MPI_Recv(msg, sizeof msg - 1, MPI_CHAR, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        char *text = NULL;
        uint64_t id = strtoull(msg, &text, 10);
        if (id >= stop_run_id) {
            stop_run_id = id;
            snprintf(stop_why, sizeof stop_why, "rank %d %s", st.MPI_SOURCE,
                     text && *text ? text + 1 : "stopped");
        }
    }
}

/* Waits for rq, reading FAIL (and, for run_id > 0, STOP) messages meanwhile. Never
 * spins: a rank waiting for a slower one may share its core with it (several ranks per
 * host, or the other ranks' workers still in their warm-up), so it sleeps between
 * tests, 20 us at first and doubling up to 1 ms, which lets ranks leave a step within
 * about a millisecond of each other. False when a peer stopped run run_id: rq is left
 * pending on that run's communicator. */
static bool wait_req(MPI_Request *rq, uint64_t run_id)
{
    long nap_ns = 20000;
    for (;;) {
        int done = 0;
        MPI_Test(rq, &done, MPI_STATUS_IGNORE);
        if (done) return true;
        check_failed_peers();
        if (run_id) {
            read_stops();
            if (stop_run_id == run_id) return false;
        }
        nanosleep(&(struct timespec){.tv_nsec = nap_ns}, NULL);
        nap_ns = nap_ns < 500000 ? nap_ns * 2 : 1000000;
    }
}

/* FNV-1a of the step's name and ordinal: equal on every rank that is in step. */
static uint64_t step_token(const char *step, uint64_t ordinal)
{
    uint64_t h = 1469598103934665603ull ^ ordinal;
    for (const char *p = step; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h;
}

static void check_in_step(const uint64_t got[2], const char *step)
{
    if (got[0] == ~got[1]) return;
    sim_error("rank %d: the ranks are out of step at '%s' (step %llu): every rank must run "
              "the same command with the same options; stopping every rank",
              my_rank, step, (unsigned long long)nsteps);
    MPI_Abort(MPI_COMM_WORLD, SIM_EXIT_FAIL);
}

void sim_ranks_sync(const char *step)
{
    if (!mpi_on || nranks < 2) return;
    uint64_t t = step_token(step, ++nsteps);
    uint64_t in[2] = {t, ~t}, out[2];
    MPI_Request rq;
    MPI_Iallreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD, &rq);
    wait_req(&rq, 0);
    check_in_step(out, step);
}

void sim_ranks_run_begin(uint64_t run_id)
{
    if (!mpi_on || nranks < 2) return;
    /* The communicator of an earlier run is kept, never freed: a step abandoned on it
     * may still be pending. */
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    run_comm = c;
    run_comm_id = run_id;
}

bool sim_ranks_run_step(uint64_t run_id, const char *step, double *x)
{
    if (!mpi_on || nranks < 2 || run_comm_id != run_id) return true;
    double in = x ? *x : 0.0, out = 0.0;
    MPI_Request rq;
    MPI_Iallreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, run_comm, &rq);
    if (!wait_req(&rq, run_id)) return false;
    if (x) *x = out;
    return true;
}

double sim_ranks_total(double x)
{
    if (!mpi_on || nranks < 2) return x;
    double sum = 0;
    MPI_Request rq;
    MPI_Iallreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq);
    wait_req(&rq, 0);
    return sum;
}

void sim_ranks_min_max_all(uint64_t *min, uint64_t *max)
{
    if (!mpi_on || nranks < 2) return;
    uint64_t in[2] = {~*min, *max}, out[2];
    MPI_Request rq;
    MPI_Iallreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD, &rq);
    wait_req(&rq, 0);
    *min = ~out[0];
    *max = out[1];
}

void sim_ranks_sum_u64(uint64_t *v, size_t n)
{
    if (!mpi_on || nranks < 2) return;
    MPI_Request rq;
    if (my_rank == 0)
        MPI_Ireduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD, &rq);
    else
        MPI_Ireduce(v, NULL, (int)n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD, &rq);
    wait_req(&rq, 0);
}

void sim_ranks_sum_hist(sim_hist *h)
{
    if (!mpi_on || nranks < 2) return;
    size_t n = sim_hist_dense_len();
    uint64_t *dense = sim_xmalloc(n * sizeof *dense);
    uint64_t lo, hi;
    sim_hist_to_dense(h, dense, &lo, &hi);
    sim_ranks_sum_u64(dense, n);
    sim_ranks_min_max_all(&lo, &hi);
    if (my_rank == 0) sim_hist_from_dense(h, dense, lo, hi);
    free(dense);
}

json_t *sim_ranks_gather(const json_t *mine)
{
    if (!mpi_on || nranks < 2) {
        json_t *all = json_array();
        json_array_append(all, (json_t *)mine);
        return all;
    }
    char *text = json_dumps(mine, JSON_COMPACT | JSON_ENCODE_ANY);
    int len = (int)strlen(text);
    int *lens = my_rank == 0 ? sim_xcalloc((size_t)nranks, sizeof *lens) : NULL;
    int *offs = my_rank == 0 ? sim_xcalloc((size_t)nranks, sizeof *offs) : NULL;
    MPI_Request rq;
    MPI_Igather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    wait_req(&rq, 0);
    char *buf = NULL;
    if (my_rank == 0) {
        size_t total = 0;
        for (int i = 0; i < nranks; i++) {
            offs[i] = (int)total;
            total += (size_t)lens[i];
        }
        buf = sim_xmalloc(total + 1);
    }
    MPI_Igatherv(text, len, MPI_CHAR, buf, lens, offs, MPI_CHAR, 0, MPI_COMM_WORLD, &rq);
    wait_req(&rq, 0);
    free(text);
    json_t *all = NULL;
    if (my_rank == 0) {
        all = json_array();
        for (int i = 0; i < nranks; i++) {
            json_t *one = json_loadb(buf + offs[i], (size_t)lens[i], JSON_DECODE_ANY, NULL);
            json_array_append_new(all, one ? one : json_null());
        }
    }
    free(buf);
    free(lens);
    free(offs);
    return all;
}

/* Sends text to every other rank with tag, without waiting (the buffer is kept). */
static void send_all(int tag, const char *text)
{
    char *copy = sim_xstrdup(text);
    for (int r = 0; r < nranks; r++) {
        if (r == my_rank) continue;
        MPI_Request rq;
        MPI_Isend(copy, (int)strlen(copy) + 1, MPI_CHAR, r, tag, MPI_COMM_WORLD, &rq);
        MPI_Request_free(&rq);
    }
}

void sim_ranks_send_stop(uint64_t run_id, const char *why)
{
    if (!mpi_on || nranks < 2) return;
    char msg[700];
    snprintf(msg, sizeof msg, "%llu on %s: %s", (unsigned long long)run_id, sim_ranks_host(), why);
    send_all(TAG_STOP, msg);
}

bool sim_ranks_poll_stop(uint64_t run_id, char *why, size_t whylen)
{
    if (!mpi_on || nranks < 2) return false;
    check_failed_peers();
    read_stops();
    if (stop_run_id != run_id) return false;
    snprintf(why, whylen, "%s", stop_why);
    return true;
}

int sim_ranks_finish(int status)
{
    if (!mpi_on) return status;
    if (nranks > 1 && status != SIM_EXIT_OK && status < 128) {
        char msg[1400];
        snprintf(msg, sizeof msg, "%d on %s failed (exit status %d): %s", status, sim_ranks_host(),
                 status, last_error[0] ? last_error : "see its messages");
        send_all(TAG_FAIL, msg);
    }
    /* The job's status is the highest of the ranks'. A rank that never comes here is
     * waiting in a step for this one: it reads the FAIL message and stops the job. */
    int worst = status;
    MPI_Request rq;
    MPI_Iallreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq);
    for (int done = 0; !done;) {
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (!done) nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    MPI_Finalize();
    return worst;
}
#endif
