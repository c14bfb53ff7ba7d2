/*
 * sim/sim_internal.h: what sim/'s own files share beyond the public contract
 * (the result writer reads a run's warm-up, intervals and probes).
 */
#ifndef APPSIM_SIM_INTERNAL_H
#define APPSIM_SIM_INTERNAL_H

#include "sim/sim.h"

sim_hist *sim_run_warmup_hist(const sim_run *r, uint64_t *errors);
double sim_run_warmup_seconds(const sim_run *r);
const json_t *sim_run_intervals(const sim_run *r);
int sim_run_nprobes(const sim_run *r);
/* Delta of probe i over the measured phase (NULL when not sampled); *name set. */
json_t *sim_run_probe_json(const sim_run *r, int i, const char **name);
/* The steady-state warm-up: rule, rounds, verdict; NULL when the warm-up was fixed. */
json_t *sim_run_steady_json(const sim_run *r);

/* --json - was given (sim_opts_parse): from now until the command returns, the
 * result document alone goes to the real stdout, and what the command prints on stdout
 * goes to stderr. */
void sim_json_claim_stdout(void);
/* The descriptor of the real stdout while it is claimed, else -1. */
int sim_json_stdout_fd(void);

#endif
