/*
 * sim/run.c: one measured run: phases, per-thread meters, interval reports, probes.
 *
 * Timeline: t_start, warm-up until t_measure = t_start + warmup, measured phase until
 * t_end = t_measure + duration (or until sim_run_finish). A sample belongs to the
 * phase in which it ended; samples ending after t_end are dropped, so the measured
 * phase holds exactly the work completed inside it. With a steady-state warm-up,
 * t_measure and t_end stay open (UINT64_MAX) until the reporter finds the rate steady
 * at a round boundary (sim/steady.c); they are then set once, t_end first.
 *
 * Meters are written by one thread each without locks. Each meter keeps, per type, a
 * measured histogram and error count, one warm-up histogram, and one cumulative
 * histogram of every sample of the run; the reporter thread reads the cumulative
 * ones (relaxed atomics) and reports each interval as the difference from the
 * previous snapshot. The reporter also takes the probe snapshots at the phase
 * boundaries, so device counters cover exactly the measured phase.
 */
#include "sim/sim_internal.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef _Atomic uint64_t counter_t;

struct sim_meter {
    sim_run *run;
    int instance;
    sim_hist **measured; /* [ntypes] */
    counter_t *errors;   /* [ntypes], measured phase */
    sim_hist *warmup;
    counter_t warmup_errors;
    sim_hist *cumulative; /* every sample, both phases: interval deltas */
    counter_t cumulative_errors;
    counter_t *counters; /* [ncounters], measured phase */
    /* Counts of the operation in progress (sim_meter_count), written by the meter's
     * thread only; they join the phase that operation is recorded in. */
    uint64_t *pending; /* [ncounters] */
    bool has_pending;
    sim_meter *next;
};

/* A boundary of the interval series: the cumulative histogram and errors at time t.
 * The run keeps two: the last printed interval and the last stored point. */
typedef struct series_mark {
    sim_hist *cumulative;
    uint64_t errors;
    uint64_t t;
} series_mark;

typedef struct probe {
    const sim_probe_ops *ops;
    void *ctx;
    void *at_measure; /* snapshot at the start of the measured phase */
    void *at_end;
    void *at_interval; /* previous interval boundary */
} probe;

struct sim_run {
    sim_run_config cfg;
    pthread_mutex_t lock; /* meters list, probes, intervals */
    sim_meter *meters;
    probe probes[8];
    int nprobes;
    sim_hist *late; /* the harness's lateness (sim_run_track_lateness), or NULL */

    uint64_t t_start;
    _Atomic uint64_t t_measure;      /* UINT64_MAX while a steady-state warm-up lasts */
    _Atomic uint64_t t_end;          /* UINT64_MAX while open-ended */
    _Atomic uint64_t units_measured; /* operations counted against cfg.max_units */
    atomic_bool finished;
    atomic_bool interrupted;
    atomic_bool stopped; /* by a guard; stop_reason says why */
    char stop_reason[512];
    atomic_bool failed; /* a storage fault (sim/fault.c) was noted before it finished */
    struct {
        sim_guard_fn fn;
        void *ctx;
    } guards[4];
    int nguards;

    pthread_t reporter;
    bool reporter_running;
    pthread_mutex_t wake_lock;
    pthread_cond_t wake;

    /* interval state, reporter thread only: the last printed boundary ... */
    series_mark printed;
    /* ... and the last stored one (a stored point spans `stride` report intervals) */
    series_mark stored;
    unsigned stride, since_stored, series_cap;
    json_t *intervals;
    bool progress_tty;
    sim_progress progress; /* its line's form and ETA, on a terminal */

    /* steady-state rounds, reporter thread only until it is joined */
    double *round_rates; /* [steady_max_rounds] */
    unsigned nrounds;
    uint64_t round_prev_units, round_prev_t;
    json_t *rounds;
    bool steady_reached;

    /* Ranks in step (docs/mpi.md), with more than one rank only. */
    uint64_t run_id;           /* ordinal of this run in the process: the same on every rank */
    uint64_t sync_at;          /* warm-up end: the measured phase starts once all ranks are here */
    int64_t realtime_off;      /* CLOCK_REALTIME - CLOCK_MONOTONIC at the start, ns */
    bool peer_stopped;         /* another rank stopped this run */
    struct merged_run *merged; /* rank 0, after sim_run_merge_ranks: the job's figures */
};

/* The job's figures over all ranks, which rank 0's read-outs return once merged. */
typedef struct merged_run {
    sim_hist **measured; /* [ntypes] */
    uint64_t *errors;    /* [ntypes] */
    uint64_t *counters;  /* [ncounters] */
    sim_hist *warmup;
    uint64_t warmup_errors;
    double seconds;
} merged_run;

static inline uint64_t measure_at(const sim_run *r)
{
    return atomic_load_explicit(&r->t_measure, memory_order_relaxed);
}

static const char *const default_type[] = {"op"};

static void init_series(sim_run *r);

sim_run *sim_run_new(const sim_run_config *cfg)
{
    sim_run *r = sim_xcalloc(1, sizeof *r);
    r->cfg = *cfg;
    if (r->cfg.ntypes < 1) {
        r->cfg.type_names = default_type;
        r->cfg.ntypes = 1;
    }
    if (r->cfg.instances < 1) r->cfg.instances = 1;
    if (!r->cfg.unit) r->cfg.unit = "tps";
    pthread_mutex_init(&r->lock, NULL);
    pthread_mutex_init(&r->wake_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->wake, &ca);
    pthread_condattr_destroy(&ca);
    atomic_store(&r->t_end, UINT64_MAX);
    r->intervals = json_array();
    r->probes[r->nprobes++] = (probe){.ops = &sim_cpu_probe};
    r->printed.cumulative = sim_hist_new();
    r->stored.cumulative = sim_hist_new();
    init_series(r);
    if (r->cfg.steady_round_ns) {
        if (r->cfg.steady_max_rounds < (unsigned)SIM_STEADY_RULE_PTS.window)
            r->cfg.steady_max_rounds = (unsigned)SIM_STEADY_RULE_PTS.window;
        r->round_rates = sim_xcalloc(r->cfg.steady_max_rounds, sizeof *r->round_rates);
        r->rounds = json_array();
    }
    return r;
}

static void meter_free(sim_meter *m, int ntypes)
{
    for (int t = 0; t < ntypes; t++)
        sim_hist_free(m->measured[t]);
    free(m->measured);
    free((void *)m->errors);
    free((void *)m->counters);
    free(m->pending);
    sim_hist_free(m->warmup);
    sim_hist_free(m->cumulative);
    free(m);
}

void sim_run_free(sim_run *r)
{
    if (!r) return;
    sim_run_finish(r);
    for (sim_meter *m = r->meters, *n; m; m = n) {
        n = m->next;
        meter_free(m, r->cfg.ntypes);
    }
    for (int i = 0; i < r->nprobes; i++) {
        probe *p = &r->probes[i];
        if (p->ops->free_snapshot) {
            if (p->at_measure) p->ops->free_snapshot(p->ctx, p->at_measure);
            if (p->at_end) p->ops->free_snapshot(p->ctx, p->at_end);
            if (p->at_interval) p->ops->free_snapshot(p->ctx, p->at_interval);
        }
    }
    if (r->merged) {
        for (int t = 0; t < r->cfg.ntypes; t++)
            sim_hist_free(r->merged->measured[t]);
        free(r->merged->measured);
        free(r->merged->errors);
        free(r->merged->counters);
        sim_hist_free(r->merged->warmup);
        free(r->merged);
    }
    sim_hist_free(r->late); /* after the probe's snapshots, which were copies of it */
    json_decref(r->intervals);
    json_decref(r->rounds);
    free(r->round_rates);
    sim_hist_free(r->printed.cumulative);
    sim_hist_free(r->stored.cumulative);
    pthread_mutex_destroy(&r->lock);
    pthread_mutex_destroy(&r->wake_lock);
    pthread_cond_destroy(&r->wake);
    free(r);
}

const sim_run_config *sim_run_cfg(const sim_run *r)
{
    return &r->cfg;
}

sim_meter *sim_run_meter(sim_run *r, int instance)
{
    sim_meter *m = sim_xcalloc(1, sizeof *m);
    m->run = r;
    m->instance = instance < 0 ? 0 : instance;
    m->measured = sim_xcalloc((size_t)r->cfg.ntypes, sizeof *m->measured);
    m->errors = sim_xcalloc((size_t)r->cfg.ntypes, sizeof *m->errors);
    size_t ncounters = (size_t)(r->cfg.ncounters > 0 ? r->cfg.ncounters : 1);
    m->counters = sim_xcalloc(ncounters, sizeof *m->counters);
    m->pending = sim_xcalloc(ncounters, sizeof *m->pending);
    for (int t = 0; t < r->cfg.ntypes; t++)
        m->measured[t] = sim_hist_new();
    m->warmup = sim_hist_new();
    m->cumulative = sim_hist_new();
    pthread_mutex_lock(&r->lock);
    m->next = r->meters;
    r->meters = m;
    pthread_mutex_unlock(&r->lock);
    return m;
}

void sim_run_add_probe(sim_run *r, const sim_probe_ops *ops, void *ctx)
{
    pthread_mutex_lock(&r->lock);
    /* a build mistake, not an input: stop rather than run without a probe's figures */
    if (r->nprobes == (int)(sizeof r->probes / sizeof r->probes[0])) {
        fprintf(stderr, "appsim: too many run probes\n");
        abort();
    }
    r->probes[r->nprobes++] = (probe){.ops = ops, .ctx = ctx};
    pthread_mutex_unlock(&r->lock);
}

void sim_run_track_lateness(sim_run *r)
{
    if (r->late) return;
    r->late = sim_hist_new();
    sim_run_add_probe(r, &sim_harness_probe, r);
}

void sim_run_note_late(sim_run *r, uint64_t late_ns)
{
    if (r->late) sim_hist_record(r->late, late_ns);
}

sim_hist *sim_run_late_hist(const sim_run *r)
{
    return r->late;
}

void sim_run_add_guard(sim_run *r, sim_guard_fn fn, void *ctx)
{
    pthread_mutex_lock(&r->lock);
    if (r->nguards == (int)(sizeof r->guards / sizeof r->guards[0])) {
        fprintf(stderr, "appsim: too many run guards\n");
        abort();
    }
    r->guards[r->nguards].fn = fn;
    r->guards[r->nguards++].ctx = ctx;
    pthread_mutex_unlock(&r->lock);
}

const char *sim_run_stopped_by(const sim_run *r)
{
    if (atomic_load(&r->failed)) return sim_fault_message();
    return atomic_load(&r->stopped) ? r->stop_reason : NULL;
}

bool sim_run_failed(const sim_run *r)
{
    return atomic_load(&r->failed);
}

/* Reporter thread: true when a guard asks the run to stop. */
static bool check_guards(sim_run *r)
{
    for (int i = 0; i < r->nguards; i++) {
        char why[sizeof r->stop_reason] = "";
        if (r->guards[i].fn(r->guards[i].ctx, why, sizeof why)) {
            snprintf(r->stop_reason, sizeof r->stop_reason, "%s", why[0] ? why : "a guard");
            atomic_store(&r->stopped, true); /* after the reason: readers see it whole */
            sim_warn("stopping the run: %s", r->stop_reason);
            return true;
        }
    }
    return false;
}

/* Reporter thread: true when another rank stopped this run early. */
static bool check_peers(sim_run *r)
{
    char why[sizeof r->stop_reason] = "";
    if (!sim_ranks_poll_stop(r->run_id, why, sizeof why)) return false;
    snprintf(r->stop_reason, sizeof r->stop_reason, "%s", why);
    r->peer_stopped = true;
    atomic_store(&r->stopped, true);
    sim_warn("stopping the run: %s", r->stop_reason);
    return true;
}

sim_phase sim_run_phase(const sim_run *r)
{
    if (!r->t_start) return SIM_PHASE_IDLE;
    if (atomic_load_explicit(&r->finished, memory_order_relaxed) ||
        atomic_load_explicit(&r->stopped, memory_order_relaxed))
        return SIM_PHASE_DONE;
    if (sim_fault_noted()) {
        atomic_store((atomic_bool *)&r->failed, true);
        return SIM_PHASE_DONE;
    }
    if (sim_interrupted()) {
        atomic_store((atomic_bool *)&r->interrupted, true);
        return SIM_PHASE_DONE;
    }
    uint64_t now = sim_now_ns();
    if (now < measure_at(r)) return SIM_PHASE_WARMUP;
    if (now >= atomic_load_explicit(&r->t_end, memory_order_relaxed)) return SIM_PHASE_DONE;
    return SIM_PHASE_MEASURE;
}

bool sim_run_interrupted(const sim_run *r)
{
    return atomic_load(&r->interrupted);
}

static inline uint64_t ld(const counter_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}
static inline void bump(counter_t *c, uint64_t n)
{
    atomic_store_explicit(c, ld(c) + n, memory_order_relaxed);
}

/* Where an operation that ended at `at` belongs. The phase boundaries are read once
 * per operation, so its sample, its error and its counts can never be split across a
 * boundary that moves (the end of a run cut short, a steady-state warm-up that ends)
 * or that falls between two of its clock readings. */
typedef enum op_phase { OP_DROPPED, OP_WARMUP, OP_MEASURED } op_phase;
static op_phase phase_at(const sim_run *r, uint64_t at)
{
    if (at >= atomic_load_explicit(&r->t_end, memory_order_relaxed)) return OP_DROPPED;
    return at < measure_at(r) ? OP_WARMUP : OP_MEASURED;
}

/* The operation's counts go where the operation went: the measured counters, or
 * nowhere (warm-up, after the end). */
static void settle_pending(sim_meter *m, op_phase ph)
{
    if (!m->has_pending) return;
    for (int c = 0; c < m->run->cfg.ncounters; c++) {
        if (ph == OP_MEASURED && m->pending[c]) bump(&m->counters[c], m->pending[c]);
        m->pending[c] = 0;
    }
    m->has_pending = false;
}

/* A run of at most cfg.max_units measured operations: the one that reaches the limit
 * ends the measured phase just after itself (operations still in flight then end after
 * it and are dropped, as at the end of a duration); one that counts past it, having
 * ended before but been recorded after, is dropped too, so that exactly max_units are
 * measured. */
static op_phase count_unit(sim_run *r, uint64_t phase_ns)
{
    uint64_t n = atomic_fetch_add(&r->units_measured, 1) + 1;
    if (n > r->cfg.max_units) return OP_DROPPED;
    if (n == r->cfg.max_units) {
        uint64_t end = atomic_load(&r->t_end);
        while (phase_ns + 1 < end && !atomic_compare_exchange_weak(&r->t_end, &end, phase_ns + 1))
            ;
    }
    return OP_MEASURED;
}

/* One operation of latency end_ns - intended_ns into the phase that holds phase_ns. */
static void record_in_phase(sim_meter *m, int type, uint64_t intended_ns, uint64_t end_ns,
                            uint64_t phase_ns)
{
    sim_run *r = m->run;
    assert(type >= 0 && type < r->cfg.ntypes); /* an index into cfg.type_names */
    if (type < 0 || type >= r->cfg.ntypes) return;
    uint64_t lat = end_ns > intended_ns ? end_ns - intended_ns : 0;
    op_phase ph = phase_at(r, phase_ns);
    if (ph == OP_MEASURED && r->cfg.max_units) ph = count_unit(r, phase_ns);
    settle_pending(m, ph);
    if (ph == OP_DROPPED) return;
    sim_hist_record(m->cumulative, lat);
    if (ph == OP_WARMUP)
        sim_hist_record(m->warmup, lat);
    else
        sim_hist_record(m->measured[type], lat);
}

void sim_meter_record(sim_meter *m, int type, uint64_t intended_ns, uint64_t end_ns)
{
    record_in_phase(m, type, intended_ns, end_ns, end_ns);
}

void sim_meter_record_arrival(sim_meter *m, int type, uint64_t intended_ns, uint64_t end_ns)
{
    record_in_phase(m, type, intended_ns, end_ns, intended_ns);
}

void sim_meter_error(sim_meter *m, int type)
{
    sim_run *r = m->run;
    assert(type >= 0 && type < r->cfg.ntypes);
    if (type < 0 || type >= r->cfg.ntypes) return;
    op_phase ph = phase_at(r, sim_now_ns());
    settle_pending(m, ph);
    if (ph == OP_DROPPED) return;
    bump(&m->cumulative_errors, 1);
    if (ph == OP_WARMUP)
        bump(&m->warmup_errors, 1);
    else
        bump(&m->errors[type], 1);
}

void sim_meter_count(sim_meter *m, int counter, uint64_t n)
{
    assert(counter >= 0 && counter < m->run->cfg.ncounters); /* into cfg.counter_names */
    if (counter < 0 || counter >= m->run->cfg.ncounters) return;
    m->pending[counter] += n;
    m->has_pending = true;
}

bool sim_meter_settle(sim_meter *m, uint64_t at_ns)
{
    op_phase ph = phase_at(m->run, at_ns);
    settle_pending(m, ph);
    return ph == OP_MEASURED;
}

/* ------------------------------------------------------------------ reporter */

static void take_probe_snapshots(sim_run *r, int which /* 0 measure, 1 end */)
{
    for (int i = 0; i < r->nprobes; i++) {
        probe *p = &r->probes[i];
        void **slot = which == 0 ? &p->at_measure : &p->at_end;
        if (*slot) continue;
        *slot = p->ops->snapshot(p->ctx);
    }
}

/* Units completed so far, both phases (for the progress line). */
static uint64_t total_units(sim_run *r)
{
    uint64_t n = 0;
    pthread_mutex_lock(&r->lock);
    for (sim_meter *m = r->meters; m; m = m->next)
        n += sim_hist_count(m->cumulative);
    pthread_mutex_unlock(&r->lock);
    return n;
}

/* The series' bound and the report intervals per stored point: enough that the planned
 * run (warm-up or all steady rounds, plus the measured phase) fits in the bound. */
static void init_series(sim_run *r)
{
    r->series_cap = r->cfg.series_max_points ? r->cfg.series_max_points : SIM_SERIES_MAX_POINTS;
    assert(r->series_cap >= 2);
    r->stride = 1;
    uint64_t iv = r->cfg.report_interval_ns;
    if (!iv || !r->cfg.duration_ns) return; /* open-ended: widened as it goes (store_point) */
    uint64_t warm = r->cfg.steady_round_ns ? r->cfg.steady_round_ns * r->cfg.steady_max_rounds
                                           : r->cfg.warmup_ns;
    uint64_t intervals = (warm + r->cfg.duration_ns + iv - 1) / iv;
    while ((uint64_t)r->stride * r->series_cap < intervals)
        r->stride *= 2;
}

/* What happened between a mark and now (cur, errors: the run's cumulative figures). */
typedef struct span {
    sim_hist *delta; /* the caller frees it */
    double secs, t;  /* length, and end since the start of the run */
    uint64_t n, errs;
    bool warm;
} span;

static span span_since(const sim_run *r, const series_mark *m, uint64_t now, const sim_hist *cur,
                       uint64_t errors)
{
    span sp = {.delta = sim_hist_new(),
               .secs = (double)(now - m->t) / 1e9,
               .t = (double)(now - r->t_start) / 1e9,
               .errs = errors - m->errors,
               .warm = now <= measure_at(r)};
    sim_hist_add_delta(sp.delta, cur, m->cumulative);
    sp.n = sim_hist_count(sp.delta);
    return sp;
}

static void mark_at(series_mark *m, uint64_t now, const sim_hist *cur, uint64_t errors)
{
    sim_hist_reset(m->cumulative);
    sim_hist_merge(m->cumulative, cur);
    m->errors = errors;
    m->t = now;
}

/* Store one point [stored.t, now) of the series: rate, errors, latency and every
 * probe's delta. */
static void store_point(sim_run *r, uint64_t now, const sim_hist *cur, uint64_t errors)
{
    span sp = span_since(r, &r->stored, now, cur, errors);
    json_t *iv = json_pack("{s:f, s:f, s:s, s:f, s:I, s:f, s:o}", "t", sp.t, "seconds", sp.secs,
                           "phase", sp.warm ? "warmup" : "measure", "rate",
                           sp.secs > 0 ? (double)sp.n / sp.secs : 0.0, "count", (json_int_t)sp.n,
                           "errors_per_s", sp.secs > 0 ? (double)sp.errs / sp.secs : 0.0,
                           "latency_us", sim_hist_summary_json(sp.delta));
    for (int i = 0; i < r->nprobes; i++) {
        probe *p = &r->probes[i];
        void *snap = p->ops->snapshot(p->ctx);
        if (snap && p->at_interval) {
            json_t *d = p->ops->delta(p->ctx, p->at_interval, snap, sp.secs, sp.n);
            if (d) json_object_set_new(iv, p->ops->name, d);
        }
        if (p->at_interval && p->ops->free_snapshot) p->ops->free_snapshot(p->ctx, p->at_interval);
        p->at_interval = snap;
    }
    if (sim_ranks_size() > 1) /* summed over the ranks at the end (sim_run_merge_ranks) */
        json_object_set_new(iv, "histogram", sim_hist_to_json(sp.delta));
    json_array_append_new(r->intervals, iv);
    mark_at(&r->stored, now, cur, errors);
    r->since_stored = 0;
    /* A run past its plan (or open-ended) widens its later points instead of growing
     * without bound: each time the bound is reached, half of it again at twice the
     * stride, so hours cost a logarithmic number of extra points. */
    if (json_array_size(r->intervals) >= r->series_cap) {
        r->stride *= 2;
        r->series_cap += r->series_cap / 2 > 0 ? r->series_cap / 2 : 1;
    }
    sim_hist_free(sp.delta);
}

/* One report interval [printed.t, now): a line on stderr, and a stored point when it
 * completes one (or `last`, the run's end). */
static void report_interval(sim_run *r, uint64_t now, bool last)
{
    sim_hist *cur = sim_hist_new();
    uint64_t errors = 0;
    pthread_mutex_lock(&r->lock);
    for (sim_meter *m = r->meters; m; m = m->next) {
        sim_hist_merge(cur, m->cumulative);
        errors += ld(&m->cumulative_errors);
    }
    pthread_mutex_unlock(&r->lock);
    if (++r->since_stored >= r->stride || last) store_point(r, now, cur, errors);
    /* A tail under a tenth of an interval is stored (it closes a wide point) but not
     * printed: its rate would be noise. */
    if (!r->cfg.quiet && !(last && now <= r->printed.t + r->cfg.report_interval_ns / 10)) {
        span sp = span_since(r, &r->printed, now, cur, errors);
        /* In a log, where no progress line is drawn, each interval line says what is left. */
        char eta[64] = "", left[48];
        uint64_t end = atomic_load(&r->t_end);
        if (!r->progress_tty && !last && end != UINT64_MAX)
            snprintf(eta, sizeof eta, ", ETA %s",
                     sim_format_eta(end > now ? (double)(end - now) / 1e9 : 0, left, sizeof left));
        fprintf(stderr, "%s[ %4.0fs ] %s: %.2f lat (ms, avg/p99): %.3f/%.3f err/s: %.2f%s%s\n",
                r->progress_tty ? "\r\033[K" : "", sp.t, r->cfg.unit,
                sp.secs > 0 ? (double)sp.n / sp.secs : 0.0, sim_hist_mean(sp.delta) / 1e6,
                (double)sim_hist_percentile(sp.delta, 99) / 1e6,
                sp.secs > 0 ? (double)sp.errs / sp.secs : 0.0, sp.warm ? " (warm-up)" : "", eta);
        sim_hist_free(sp.delta);
    }
    mark_at(&r->printed, now, cur, errors);
    sim_hist_free(cur);
}

/* The terminal's progress line (sim_progress's form): the phase, the time so far of the
 * planned whole, and the ETA; a steady-state warm-up has no planned end, so no ETA. */
static void progress_line(sim_run *r, uint64_t now)
{
    uint64_t end = atomic_load(&r->t_end);
    const char *phase = now < measure_at(r) ? "warm-up" : "measuring";
    double el = (double)(now - r->t_start) / 1e9;
    unsigned long long units = (unsigned long long)total_units(r);
    if (end == UINT64_MAX) {
        fprintf(stderr, "\r\033[Krun: %s, %.0f s so far, %llu done (until steady; ETA unknown)",
                phase, el, units);
        fflush(stderr);
        return;
    }
    if (now > end) now = end; /* the last line may come late */
    char detail[160];
    r->progress.total = end - r->t_start;
    snprintf(detail, sizeof detail, "%s, %.0f s of %.0f s, %llu %s done", phase,
             (double)(now - r->t_start) / 1e9, (double)r->progress.total / 1e9, units,
             strcmp(r->cfg.unit, "iops") ? "transactions" : "I/Os");
    sim_progress_line(&r->progress, now, now - r->t_start, detail, false);
}

static void wait_until(sim_run *r, uint64_t t)
{
    struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull),
                          .tv_nsec = (long)(t % 1000000000ull)};
    pthread_mutex_lock(&r->wake_lock);
    if (!atomic_load(&r->finished)) pthread_cond_timedwait(&r->wake, &r->wake_lock, &ts);
    pthread_mutex_unlock(&r->wake_lock);
}

/* Opens the measured phase now (the end of a steady-state warm-up). */
static void begin_measure(sim_run *r, uint64_t now)
{
    assert(measure_at(r) == UINT64_MAX); /* set once, when the warm-up ends */
    assert(now >= r->t_start);
    if (r->cfg.duration_ns) atomic_store(&r->t_end, now + r->cfg.duration_ns);
    atomic_store(&r->t_measure, now);
}

/* One steady-state round ended at `now`: its rate, one line, the verdict. Returns
 * true when the warm-up is over (steady, or the last round allowed). */
static bool steady_round(sim_run *r, uint64_t now)
{
    uint64_t units = total_units(r);
    double secs = (double)(now - r->round_prev_t) / 1e9;
    double rate = secs > 0 ? (double)(units - r->round_prev_units) / secs : 0.0;
    /* With several ranks the rule judges the job's rate, the same on every rank. */
    if (!sim_ranks_run_step(r->run_id, "steady-state round", &rate)) {
        check_peers(r);
        return false;
    }
    r->round_prev_units = units;
    r->round_prev_t = now;
    r->round_rates[r->nrounds++] = rate;
    sim_steady_rule rule = SIM_STEADY_RULE_PTS;
    sim_steady_eval ev = sim_steady_judge(r->round_rates, r->nrounds, &rule);
    double t = (double)(now - r->t_start) / 1e9;
    json_t *round = json_pack("{s:i, s:f, s:f, s:f, s:b}", "round", (int)r->nrounds, "t", t,
                              "seconds", secs, "rate", rate, "steady", ev.steady);
    if (ev.judged && ev.mean > 0) {
        json_object_set_new(round, "window_mean", json_real(ev.mean));
        json_object_set_new(round, "range_pct", json_real(100 * ev.range / ev.mean));
        json_object_set_new(round, "slope_pct", json_real(100 * ev.slope_change / ev.mean));
    }
    json_array_append_new(r->rounds, round);
    bool last = r->nrounds >= r->cfg.steady_max_rounds;
    if (!r->cfg.quiet) {
        char window[160] = "";
        if (ev.judged && ev.mean > 0)
            snprintf(window, sizeof window, ", last %d: mean %.2f, range %.1f%%, slope %.1f%%",
                     rule.window, ev.mean, 100 * ev.range / ev.mean,
                     100 * ev.slope_change / ev.mean);
        fprintf(stderr, "%s[ %4.0fs ] steady-state round %u/%u: %s %.2f%s: %s\n",
                r->progress_tty ? "\r\033[K" : "", t, r->nrounds, r->cfg.steady_max_rounds,
                r->cfg.unit, rate, window,
                ev.steady ? "steady, measuring from now"
                : last    ? "not steady"
                          : "not yet");
    }
    if (ev.steady) {
        r->steady_reached = true;
        return true;
    }
    if (last)
        sim_warn("steady state not reached in %u rounds of %.0f s; measuring anyway, and the "
                 "result says so (steady_state.reached = false)",
                 r->nrounds, (double)r->cfg.steady_round_ns / 1e9);
    return last;
}

/* Several ranks: this rank's warm-up is over; the measured phase starts when every
 * rank's is (or the run stops when another rank stopped it). The interval series
 * starts again at the measured phase, so that the ranks' intervals line up. */
static void measure_in_step(sim_run *r, uint64_t *next_report)
{
    if (!sim_ranks_run_step(r->run_id, "measured phase", NULL)) {
        check_peers(r);
        return;
    }
    uint64_t now = sim_now_ns();
    if (r->cfg.report_interval_ns) {
        if (now > r->printed.t + 1000000ull)
            report_interval(r, now, true); /* the last, partial warm-up interval */
        *next_report = now + r->cfg.report_interval_ns;
    }
    begin_measure(r, now);
}

static void *reporter_main(void *arg)
{
    sim_run *r = arg;
    uint64_t interval = r->cfg.report_interval_ns;
    uint64_t next_report = interval ? r->t_start + interval : UINT64_MAX;
    /* On a terminal, a countdown line between the interval lines (each interval line
     * clears it first and ends its own line). */
    uint64_t next_progress = r->progress_tty ? r->t_start + 1000000000ull : UINT64_MAX;
    bool measure_snapped = measure_at(r) == r->t_start;
    uint64_t next_guard = r->t_start + 1000000000ull;
    uint64_t round = r->cfg.steady_round_ns;
    uint64_t next_round = round ? r->t_start + round : UINT64_MAX;
    while (!atomic_load(&r->finished)) {
        uint64_t end = atomic_load(&r->t_end);
        uint64_t due = next_report < next_progress ? next_report : next_progress;
        if (!measure_snapped && measure_at(r) < due) due = measure_at(r);
        if (next_round < due) due = next_round;
        if (r->sync_at < due) due = r->sync_at;
        if (end < due) due = end;
        if (due > sim_now_ns() + 100000000ull)
            due = sim_now_ns() + 100000000ull; /* notice signals promptly */
        wait_until(r, due);
        if (sim_interrupted()) atomic_store(&r->interrupted, true);
        uint64_t now = sim_now_ns();
        if (now >= next_round && !atomic_load(&r->finished) && !atomic_load(&r->interrupted)) {
            if (steady_round(r, now)) {
                begin_measure(r, now);
                next_round = UINT64_MAX;
                if (interval && sim_ranks_size() > 1)
                    next_report = now + interval; /* aligned on the measured phase */
            } else {
                next_round += round;
            }
        }
        if (now >= r->sync_at && !atomic_load(&r->finished) && !atomic_load(&r->interrupted)) {
            r->sync_at = UINT64_MAX;
            measure_in_step(r, &next_report);
            now = sim_now_ns();
        }
        pthread_mutex_lock(&r->lock);
        if (!measure_snapped && now >= measure_at(r)) {
            take_probe_snapshots(r, 0);
            measure_snapped = true;
        }
        pthread_mutex_unlock(&r->lock);
        if (now >= next_report && !atomic_load(&r->finished)) {
            report_interval(r, next_report < end ? next_report : end, false);
            next_report += interval;
        }
        if (now >= next_progress) {
            progress_line(r, now);
            next_progress += 1000000000ull;
        }
        if (now >= next_guard) {
            if (check_guards(r) || check_peers(r)) break;
            next_guard = now + 1000000000ull;
        }
        if (now >= end || atomic_load(&r->interrupted) || atomic_load(&r->stopped)) break;
    }
    return NULL;
}

static uint64_t runs_started; /* main thread only */

void sim_run_start(sim_run *r)
{
    /* Every rank has prepared: the warm-up starts together. */
    r->run_id = ++runs_started;
    r->sync_at = UINT64_MAX;
    sim_ranks_sync("run start");
    sim_ranks_run_begin(r->run_id);
    uint64_t now = sim_now_ns();
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    r->realtime_off =
        (int64_t)((uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec) - (int64_t)now;
    r->t_start = now;
    r->round_prev_t = now;
    if (r->cfg.steady_round_ns) {
        atomic_store(&r->t_measure, UINT64_MAX);
    } else if (r->cfg.warmup_ns && sim_ranks_size() > 1) {
        atomic_store(&r->t_measure, UINT64_MAX); /* until every rank's warm-up is over */
        r->sync_at = now + r->cfg.warmup_ns;
    } else {
        atomic_store(&r->t_measure, now + r->cfg.warmup_ns);
        if (r->cfg.duration_ns) atomic_store(&r->t_end, measure_at(r) + r->cfg.duration_ns);
    }
    r->printed.t = now;
    r->stored.t = now;
    r->progress_tty = !r->cfg.quiet && isatty(2);
    sim_progress_start(&r->progress, "run", 0, !r->progress_tty);
    r->progress.t0 = r->t_start;
    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < r->nprobes; i++)
        r->probes[i].at_interval = r->probes[i].ops->snapshot(r->probes[i].ctx);
    if (measure_at(r) == r->t_start) take_probe_snapshots(r, 0);
    pthread_mutex_unlock(&r->lock);
    r->reporter_running = pthread_create(&r->reporter, NULL, reporter_main, r) == 0;
}

/* Several ranks: a run that ends early here would leave the others waiting for it at
 * the end of the warm-up, or measuring a job that is over; they stop too. */
static void tell_peers_why(sim_run *r, bool in_warmup)
{
    if (sim_ranks_size() < 2 || r->peer_stopped) return;
    const char *why = atomic_load(&r->failed)        ? sim_fault_message()
                      : atomic_load(&r->stopped)     ? r->stop_reason
                      : atomic_load(&r->interrupted) ? "interrupted by a signal"
                      : in_warmup                    ? "its run ended before its warm-up did"
                                                     : NULL;
    if (why) sim_ranks_send_stop(r->run_id, why);
}

void sim_run_finish(sim_run *r)
{
    if (!r->t_start || atomic_exchange(&r->finished, true)) return;
    uint64_t now = sim_now_ns();
    bool in_warmup = measure_at(r) == UINT64_MAX;
    if (sim_interrupted()) atomic_store(&r->interrupted, true);
    if (sim_fault_noted()) atomic_store(&r->failed, true);
    /* Close the measured phase now if it was open-ended or cut short; a steady-state
     * warm-up cut short ends here with an empty measured phase. */
    if (measure_at(r) == UINT64_MAX) {
        atomic_store(&r->t_end, now);
        atomic_store(&r->t_measure, now);
    }
    if (now < atomic_load(&r->t_end))
        atomic_store(&r->t_end, now < measure_at(r) ? measure_at(r) : now);
    pthread_mutex_lock(&r->wake_lock);
    pthread_cond_broadcast(&r->wake);
    pthread_mutex_unlock(&r->wake_lock);
    if (r->reporter_running) pthread_join(r->reporter, NULL);
    tell_peers_why(r, in_warmup);
    pthread_mutex_lock(&r->lock);
    take_probe_snapshots(r, 0);
    take_probe_snapshots(r, 1);
    pthread_mutex_unlock(&r->lock);
    /* A last partial interval, so that the series covers the whole run. */
    uint64_t end = atomic_load(&r->t_end);
    if (r->cfg.report_interval_ns &&
        (end > r->printed.t + r->cfg.report_interval_ns / 10 || r->since_stored > 0))
        report_interval(r, end, true);
    if (r->progress_tty) fprintf(stderr, "\r\033[K");
}

double sim_run_measured_seconds(const sim_run *r)
{
    if (r->merged) return r->merged->seconds;
    uint64_t end = atomic_load(&r->t_end);
    if (!r->t_start || end == UINT64_MAX || end <= measure_at(r)) return 0.0;
    return (double)(end - measure_at(r)) / 1e9;
}

/* ------------------------------------------------------------------ read-out */

sim_hist *sim_run_merged_hist(const sim_run *r, int type, int instance)
{
    sim_hist *h = sim_hist_new();
    if (r->merged && instance < 0) {
        for (int t = 0; t < r->cfg.ntypes; t++)
            if (type < 0 || t == type) sim_hist_merge(h, r->merged->measured[t]);
        return h;
    }
    for (sim_meter *m = r->meters; m; m = m->next) {
        if (instance >= 0 && m->instance != instance) continue;
        for (int t = 0; t < r->cfg.ntypes; t++)
            if (type < 0 || t == type) sim_hist_merge(h, m->measured[t]);
    }
    return h;
}

/* Sum over the meters of `instance` (all when < 0) and types `type` (all when < 0)
 * of the completed count (errors = false) or the error count. */
static uint64_t sum_measured(const sim_run *r, int type, int instance, bool errors)
{
    uint64_t n = 0;
    if (r->merged && instance < 0) {
        for (int t = 0; t < r->cfg.ntypes; t++)
            if (type < 0 || t == type)
                n += errors ? r->merged->errors[t] : sim_hist_count(r->merged->measured[t]);
        return n;
    }
    for (sim_meter *m = r->meters; m; m = m->next) {
        if (instance >= 0 && m->instance != instance) continue;
        for (int t = 0; t < r->cfg.ntypes; t++)
            if (type < 0 || t == type)
                n += errors ? ld(&m->errors[t]) : sim_hist_count(m->measured[t]);
    }
    return n;
}

uint64_t sim_run_count(const sim_run *r, int type, int instance)
{
    return sum_measured(r, type, instance, false);
}

uint64_t sim_run_errors(const sim_run *r, int type, int instance)
{
    return sum_measured(r, type, instance, true);
}

uint64_t sim_run_counter(const sim_run *r, int counter, int instance)
{
    uint64_t n = 0;
    if (counter < 0 || counter >= r->cfg.ncounters) return 0;
    if (r->merged && instance < 0) return r->merged->counters[counter];
    for (sim_meter *m = r->meters; m; m = m->next)
        if (instance < 0 || m->instance == instance) n += ld(&m->counters[counter]);
    return n;
}

sim_hist *sim_run_warmup_hist(const sim_run *r, uint64_t *errors)
{
    sim_hist *h = sim_hist_new();
    uint64_t e = 0;
    if (r->merged) {
        sim_hist_merge(h, r->merged->warmup);
        if (errors) *errors = r->merged->warmup_errors;
        return h;
    }
    for (sim_meter *m = r->meters; m; m = m->next) {
        sim_hist_merge(h, m->warmup);
        e += ld(&m->warmup_errors);
    }
    if (errors) *errors = e;
    return h;
}

double sim_run_warmup_seconds(const sim_run *r)
{
    return (double)(measure_at(r) - r->t_start) / 1e9;
}

uint64_t sim_run_measure_start_ns(const sim_run *r)
{
    return measure_at(r);
}

uint64_t sim_run_measure_end_ns(const sim_run *r)
{
    return atomic_load_explicit(&r->t_end, memory_order_relaxed);
}

void sim_run_config_warmup(sim_run_config *c, uint64_t warmup, uint64_t round_ns,
                           uint64_t max_rounds)
{
    if (warmup != SIM_WARMUP_STEADY) {
        c->warmup_ns = warmup;
        return;
    }
    c->warmup_ns = 0;
    c->steady_round_ns = round_ns ? round_ns : SIM_STEADY_DEFAULT_ROUND_NS;
    c->steady_max_rounds = max_rounds > UINT32_MAX ? UINT32_MAX : (unsigned)max_rounds;
}

json_t *sim_run_steady_json(const sim_run *r)
{
    if (!r->cfg.steady_round_ns) return NULL;
    sim_steady_rule rule = SIM_STEADY_RULE_PTS;
    bool ended = measure_at(r) != UINT64_MAX && r->t_start;
    double after = ended ? (double)(measure_at(r) - r->t_start) / 1e9 : 0.0;
    json_t *j = json_pack(
        "{s:s, s:i, s:f, s:f, s:f, s:i, s:s, s:b, s:b, s:i, s:o, s:O}", "rule",
        "SNIA PTS: over the last rounds, max - min <= max_range x mean and the least-squares "
        "line changes by <= max_slope x mean",
        "window", rule.window, "max_range", rule.max_range, "max_slope", rule.max_slope, "round_s",
        (double)r->cfg.steady_round_ns / 1e9, "max_rounds", (int)r->cfg.steady_max_rounds, "unit",
        r->cfg.unit, "reached", r->steady_reached, "gave_up",
        !r->steady_reached && r->nrounds >= r->cfg.steady_max_rounds, "after_rounds",
        (int)r->nrounds, "measure_start_s", ended ? json_real(after) : json_null(), "rounds",
        r->rounds);
    return j;
}

const json_t *sim_run_intervals(const sim_run *r)
{
    return r->intervals;
}

int sim_run_nprobes(const sim_run *r)
{
    return r->nprobes;
}

const sim_probe_ops *sim_run_probe_ops(const sim_run *r, int i)
{
    return r->probes[i].ops;
}

json_t *sim_run_probe_json(const sim_run *r, int i, const char **name)
{
    const probe *p = &r->probes[i];
    *name = p->ops->name;
    if (!p->at_measure || !p->at_end) return NULL;
    return p->ops->delta(p->ctx, p->at_measure, p->at_end, sim_run_measured_seconds(r),
                         sim_run_count(r, -1, -1));
}

/* ------------------------------------------------------------------ ranks */

void sim_run_sum_ranks(sim_run *r)
{
    if (sim_ranks_size() < 2 || r->merged) return;
    int nt = r->cfg.ntypes, nc = r->cfg.ncounters > 0 ? r->cfg.ncounters : 0;
    merged_run *m = sim_xcalloc(1, sizeof *m);
    size_t nv = (size_t)nt + (size_t)nc + 1;
    uint64_t *v = sim_xcalloc(nv, sizeof *v);
    m->measured = sim_xcalloc((size_t)nt, sizeof *m->measured);
    for (int t = 0; t < nt; t++) {
        m->measured[t] = sim_run_merged_hist(r, t, -1);
        sim_ranks_sum_hist(m->measured[t]);
        v[t] = sim_run_errors(r, t, -1);
    }
    for (int c = 0; c < nc; c++)
        v[nt + c] = sim_run_counter(r, c, -1);
    m->warmup = sim_run_warmup_hist(r, &v[nt + nc]);
    sim_ranks_sum_hist(m->warmup);
    sim_ranks_sum_u64(v, nv);
    m->errors = v; /* [nt] errors, then the counters, then the warm-up errors */
    m->counters = v + nt;
    m->warmup_errors = v[nt + nc];
    m->seconds = sim_run_measured_seconds(r);
    if (sim_ranks_rank() == 0) {
        m->counters = sim_xcalloc((size_t)(nc ? nc : 1), sizeof *m->counters);
        memcpy(m->counters, v + nt, (size_t)nc * sizeof *v);
        r->merged = m;
        return;
    }
    for (int t = 0; t < nt; t++)
        sim_hist_free(m->measured[t]);
    free(m->measured);
    sim_hist_free(m->warmup);
    free(v);
    free(m);
}

void sim_run_adopt_merged(sim_run *r, double seconds, json_t *intervals)
{
    if (!r->merged) return;
    r->merged->seconds = seconds;
    json_decref(r->intervals);
    r->intervals = intervals;
}

void sim_run_measure_times(const sim_run *r, double *start_unix_s, double *end_unix_s)
{
    uint64_t from = measure_at(r), to = atomic_load(&r->t_end);
    *start_unix_s = from == UINT64_MAX ? 0 : (double)((int64_t)from + r->realtime_off) / 1e9;
    *end_unix_s = to == UINT64_MAX ? 0 : (double)((int64_t)to + r->realtime_off) / 1e9;
}
