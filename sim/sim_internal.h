/*
 * sim/sim_internal.h: what sim/'s own files share beyond the public contract
 * (the result writer reads a run's warm-up, intervals and probes).
 */
#ifndef APPSIM_SIM_INTERNAL_H
#define APPSIM_SIM_INTERNAL_H

#include "sim/sim.h"

sim_hist *sim_run_warmup_hist(const sim_run *r, uint64_t *errors);
double sim_run_warmup_seconds(const sim_run *r);
/* A number field of a result's JSON object (0 when absent or o is NULL): the result's
 * printers (result.c, result_steadiness.c) read many. */
static inline double sim_json_num(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}
const json_t *sim_run_intervals(const sim_run *r);
int sim_run_nprobes(const sim_run *r);
/* Delta of probe i over the measured phase (NULL when not sampled); *name set. */
json_t *sim_run_probe_json(const sim_run *r, int i, const char **name);
/* Probe i's operations (its name, its ranks_adjust). */
const sim_probe_ops *sim_run_probe_ops(const sim_run *r, int i);
/* The steady-state warm-up: rule, rounds, verdict; NULL when the warm-up was fixed. */
json_t *sim_run_steady_json(const sim_run *r);
/* The process's CPU use ("cpu"), a probe every run adds first (sim/cpu_probe.c). */
extern const sim_probe_ops sim_cpu_probe;
/* The harness's lateness ("harness"), with the run as its context: the probe
 * sim_run_track_lateness adds (sim/harness_probe.c), over the run's lateness
 * histogram. That histogram, or NULL when the run does not track lateness; the VU
 * scheduler records into it directly (its one writer). */
extern const sim_probe_ops sim_harness_probe;
sim_hist *sim_run_late_hist(const sim_run *r);

/* --json - was given (sim_opts_parse): from now until the command returns, the
 * result document alone goes to the real stdout, and what the command prints on stdout
 * goes to stderr. */
void sim_json_claim_stdout(void);
/* The descriptor of the real stdout while it is claimed, else -1. */
int sim_json_stdout_fd(void);

/* Several ranks (sim/result_ranks.c, docs/mpi.md). Collective: sums this run's
 * measured and warm-up histograms, errors and counters over the ranks; rank 0's
 * read-outs (instance < 0) then return the job's figures. */
void sim_run_sum_ranks(sim_run *r);
/* Rank 0: the job's measured seconds and interval series (the run takes intervals). */
void sim_run_adopt_merged(sim_run *r, double seconds, json_t *intervals);
/* Start and end of this rank's measured phase, seconds since the epoch (0: unknown). */
void sim_run_measure_times(const sim_run *r, double *start_unix_s, double *end_unix_s);
/* The summary and per-type sections of a run (sim/result.c). */
json_t *sim_result_summary_json(const sim_run *r, int instance);
json_t *sim_result_per_type_json(const sim_run *r, int instance);
/* "measure": when the measured phase started and stopped (UTC, and ns since the epoch). */
json_t *sim_result_measure_json(const sim_run *r);
/* "instances": each instance's summary, per type and histogram (numbered from 1). */
json_t *sim_result_instances_json(const sim_run *r);
/* The measured phase's histogram per operation type (and "all" first when with_all),
 * and the warm-up's summary: the same shape in a result and in a rank's section. */
json_t *sim_result_type_hists_json(const sim_run *r, bool with_all);
json_t *sim_result_warmup_json(const sim_run *r);
/* Collective, in sim_result_put_run with several ranks: every rank's own section of
 * this run (host, target, summary, device counters...) gathered, and the run's figures
 * summed; returns the ranks' sections on rank 0, NULL on the others. */
json_t *sim_result_merge_ranks(const json_t *doc, sim_run *r);
/* Rank 0: the "mpi" section (ranks, hosts, spread of the measured phases' start and
 * stop) and the job's interrupted/failed state, from the ranks' sections, into dst. */
void sim_result_put_ranks(json_t *doc, json_t *dst, json_t *ranks);

/* ---- ranks (sim/ranks*.c): the collective steps the run and the result take. Every
 * rank calls them in the same order; each returns at once with one rank. */
/* Waits for every rank at the point named `step`, and checks that all are at the same
 * step (ranks out of step stop the job with a message). */
void sim_ranks_sync(const char *step);
/* Inside run `run_id` (sim_ranks_run_begin), from the run's reporter thread: waits for
 * every rank at `step`, or *x summed over the ranks when x is not NULL. Returns false,
 * abandoning the step, when another rank stopped that run early (sim_ranks_send_stop):
 * the caller then stops its run too. */
void sim_ranks_run_begin(uint64_t run_id);
bool sim_ranks_run_step(uint64_t run_id, const char *step, double *x);
/* min and max of *min and *max over the ranks, on every rank. */
void sim_ranks_min_max_all(uint64_t *min, uint64_t *max);
/* v[0..n) summed over the ranks into rank 0's v (others' v unchanged). */
void sim_ranks_sum_u64(uint64_t *v, size_t n);
/* The number of ranks a launcher (mpirun, srun) started, from its environment; 0 when
 * no launcher started this process. */
long sim_ranks_launched_size(void);
/* h summed over the ranks into rank 0's h, bucket by bucket (exact). */
void sim_ranks_sum_hist(sim_hist *h);
/* Every rank's `mine` (serialized) as an array on rank 0; NULL on the others. */
json_t *sim_ranks_gather(const json_t *mine);
/* Tells the other ranks that this rank's run `run_id` stopped early, and why. */
void sim_ranks_send_stop(uint64_t run_id, const char *why);
/* True when another rank stopped its run `run_id` early, with its rank, host and reason
 * in why. Also stops the job at once (MPI_Abort) when another rank failed. */
bool sim_ranks_poll_stop(uint64_t run_id, char *why, size_t whylen);
/* The last error message of this process (sim_error), for the message a failing rank
 * sends its peers. */
void sim_ranks_note_error(const char *line);

/* ---- dense histogram form, for sums over ranks (sim/hist.c) */
size_t sim_hist_dense_len(void);
/* buckets, then count, clamped, sum; min and max apart */
void sim_hist_to_dense(const sim_hist *h, uint64_t *dense, uint64_t *min, uint64_t *max);
/* Replaces h's counts with dense (from sim_hist_to_dense or a sum of them). */
void sim_hist_from_dense(sim_hist *h, const uint64_t *dense, uint64_t min, uint64_t max);

#endif
