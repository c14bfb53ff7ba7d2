/*
 * sim/vu.c: the virtual-user engine. Thousands of users are timers, not threads.
 *
 * One scheduler thread owns a min-heap of wake-up times (user think/keying delays in
 * closed loop; the next Poisson arrival of each instance in open loop). When a time
 * comes due, the unit is appended to its instance's run queue with its due time as
 * the intended start. Each instance has `workers` threads (one connection each)
 * taking units from the queue in order. A unit's latency runs from its due time to
 * its end, so waiting for a free connection counts (no coordinated omission).
 *
 * Locks: the heap lock and one lock per run queue. Only the scheduler holds both,
 * always heap first; workers take one at a time. A user is in at most one place
 * (heap, queue, or running) in closed loop, so its state needs no lock.
 */
#include "sim/sim_internal.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct vuser {
    sim_rng rng;
    int32_t last_type;
} vuser;

typedef struct timer {
    uint64_t due;
    uint32_t id; /* global user id, or ARRIVAL_BASE + instance in open loop */
} timer;

#define ARRIVAL_BASE 0xF0000000u

typedef struct unit {
    uint64_t intended;
    uint32_t vu; /* within the instance */
} unit;

typedef struct run_queue {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    unit *items;
    size_t cap, head, len;
    size_t max_len;
} run_queue;

typedef struct engine engine;

typedef struct worker {
    engine *e;
    int instance, index;
    pthread_t thread;
    bool started;
    sim_rng rng;
} worker;

struct engine {
    sim_run *run;
    const sim_vu_config *cfg;
    const sim_vu_ops *ops;
    void *wl;
    vuser *users;
    timer *heap;
    size_t nheap, heap_cap;
    pthread_mutex_t heap_lock;
    pthread_cond_t heap_changed;
    run_queue *queues;
    uint64_t *arrival_seq; /* open loop, per instance */
    /* open loop, exponential, per instance: arrivals still to place in the measured
     * phase (-1 before the phase is entered) */
    int64_t *window_left;
    sim_rng arrival_rng;
    atomic_bool stop;
    atomic_bool failed;
    _Atomic uint64_t units;
    /* open loop: arrivals due in the measured phase, and the backlog at its ends */
    uint64_t arrivals_measured, backlog_at_start, backlog_at_end;
    bool start_seen;
    /* releases' lateness against due times: the run's own histogram when the run
     * reports it (sim_run_track_lateness), so each release is recorded once */
    sim_hist *lateness;
    bool own_lateness;
};

/* ------------------------------------------------------------------ heap */

static void heap_push(engine *e, uint64_t due, uint32_t id)
{
    if (e->nheap == e->heap_cap) {
        e->heap_cap = e->heap_cap ? e->heap_cap * 2 : 1024;
        e->heap = sim_xrealloc(e->heap, e->heap_cap * sizeof *e->heap);
    }
    size_t i = e->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (e->heap[p].due <= due) break;
        e->heap[i] = e->heap[p];
        i = p;
    }
    e->heap[i] = (timer){due, id};
}

static timer heap_pop(engine *e)
{
    assert(e->nheap > 0);
    timer top = e->heap[0];
    timer last = e->heap[--e->nheap];
    size_t i = 0, n = e->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && e->heap[c + 1].due < e->heap[c].due) c++;
        if (last.due <= e->heap[c].due) break;
        e->heap[i] = e->heap[c];
        i = c;
    }
    if (n) e->heap[i] = last;
    return top;
}

/* ------------------------------------------------------------------ run queues */

static void queue_push(run_queue *q, uint64_t intended, uint32_t vu)
{
    pthread_mutex_lock(&q->lock);
    if (q->len == q->cap) {
        size_t ncap = q->cap ? q->cap * 2 : 256;
        unit *n = sim_xmalloc(ncap * sizeof *n);
        for (size_t i = 0; i < q->len; i++)
            n[i] = q->items[(q->head + i) % q->cap];
        free(q->items);
        q->items = n;
        q->cap = ncap;
        q->head = 0;
    }
    q->items[(q->head + q->len) % q->cap] = (unit){intended, vu};
    q->len++;
    if (q->len > q->max_len) q->max_len = q->len;
    pthread_cond_signal(&q->ready);
    pthread_mutex_unlock(&q->lock);
}

static struct timespec abs_after(uint64_t ns_from_now)
{
    uint64_t t = sim_now_ns() + ns_from_now;
    return (struct timespec){.tv_sec = (time_t)(t / 1000000000ull),
                             .tv_nsec = (long)(t % 1000000000ull)};
}

/* false when the engine stops before a unit is available */
static bool queue_pop(engine *e, run_queue *q, unit *out)
{
    pthread_mutex_lock(&q->lock);
    while (!q->len) {
        if (atomic_load(&e->stop)) {
            pthread_mutex_unlock(&q->lock);
            return false;
        }
        struct timespec ts = abs_after(50000000ull);
        pthread_cond_timedwait(&q->ready, &q->lock, &ts);
    }
    *out = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    pthread_mutex_unlock(&q->lock);
    return true;
}

/* ------------------------------------------------------------------ threads */

static void schedule(engine *e, uint64_t due, uint32_t id)
{
    pthread_mutex_lock(&e->heap_lock);
    bool earliest = e->nheap == 0 || due < e->heap[0].due;
    heap_push(e, due, id);
    if (earliest) pthread_cond_signal(&e->heap_changed);
    pthread_mutex_unlock(&e->heap_lock);
}

/* Stops every worker and wakes the scheduler to end the run. */
static void stop_now(engine *e)
{
    atomic_store(&e->stop, true);
    pthread_mutex_lock(&e->heap_lock);
    pthread_cond_signal(&e->heap_changed);
    pthread_mutex_unlock(&e->heap_lock);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    engine *e = w->e;
    const sim_vu_config *cfg = e->cfg;
    bool open_loop = cfg->rate > 0;
    void *conn = e->ops->worker_open(e->wl, w->instance, w->index);
    if (!conn) {
        atomic_store(&e->failed, true);
        atomic_store(&e->stop, true);
        return NULL;
    }
    sim_meter *m = sim_run_meter(e->run, w->instance);
    run_queue *q = &e->queues[w->instance];
    unit u;
    while (!atomic_load(&e->stop) && queue_pop(e, q, &u)) {
        /* Fail-stop (sim/fault.c): after the first storage error no unit starts; the
         * scheduler would notice only at its next wake-up, and units that fail at once
         * (a refused write) would meanwhile count thousands of errors. */
        if (sim_fault_noted()) {
            stop_now(e);
            break;
        }
        uint32_t gid = (uint32_t)w->instance * cfg->vusers + u.vu;
        vuser *user = &e->users[gid];
        sim_rng *rng = open_loop ? &w->rng : &user->rng;
        int t = e->ops->run(e->wl, conn, w->instance, u.vu, rng, m);
        uint64_t end = sim_now_ns();
        atomic_fetch_add_explicit(&e->units, 1, memory_order_relaxed);
        int type = t >= 0 ? t : -t - 1;
        /* Open loop: a transaction belongs to the phase it arrived in, so a backlog the
         * warm-up left does not count as measured throughput, and the measured phase's
         * count is of its own arrivals served. */
        if (t >= 0 && open_loop)
            sim_meter_record_arrival(m, t, u.intended, end);
        else if (t >= 0)
            sim_meter_record(m, t, u.intended, end);
        else
            sim_meter_error(m, type);
        if (open_loop) continue;
        user->last_type = type;
        uint64_t delay =
            e->ops->next_delay_ns ? e->ops->next_delay_ns(e->wl, w->instance, u.vu, type, rng) : 0;
        if (delay == 0)
            queue_push(q, end, u.vu);
        else
            schedule(e, end + delay, gid);
    }
    e->ops->worker_close(e->wl, conn);
    return NULL;
}

/* The next of `left` arrivals spread over [from, end) as a Poisson process places them
 * once their number is known: the smallest of `left` uniform times, 1 - r^(1/left) of
 * the way to the end. */
static uint64_t next_of_known_count(engine *e, uint64_t from, uint64_t end, int64_t left)
{
    double r = 1.0 - sim_rng_double(&e->arrival_rng); /* (0, 1] */
    double frac = 1.0 - pow(r, 1.0 / (double)left);   /* [0, 1) */
    uint64_t next = from + (uint64_t)((double)(end - from) * frac);
    return next < end ? next : end - 1;
}

/*
 * The next arrival of instance `inst` after one due at `due`: evenly spaced, or
 * exponential (Poisson). A Poisson process's count over a phase varies by one standard
 * deviation, sqrt(rate x seconds), which at 12 per second for 10 s is 9 %: a point's
 * achieved rate could not be held to its offered rate. So, when the measured phase has
 * known ends, its arrivals are the Poisson process conditioned on its expected count,
 * round(rate x seconds): that many, at the times a Poisson process with that count has
 * (independent uniform times, taken in order). Inter-arrival gaps keep their
 * exponential spread, so queueing is as bursty; outside the phase they are drawn as
 * usual.
 */
static uint64_t next_arrival(engine *e, int inst, uint64_t due)
{
    const sim_vu_config *cfg = e->cfg;
    if (cfg->uniform) return due + (uint64_t)(1e9 / cfg->rate);
    uint64_t start = sim_run_measure_start_ns(e->run), end = sim_run_measure_end_ns(e->run);
    if (end == UINT64_MAX || start >= end || due >= end)
        return due + sim_rng_exp_ns(&e->arrival_rng, cfg->rate);
    int64_t *left = &e->window_left[inst];
    if (*left < 0) { /* not in the phase yet: enter it when the next arrival would */
        uint64_t next = due + sim_rng_exp_ns(&e->arrival_rng, cfg->rate);
        if (next < start) return next;
        if (due < start) due = start;
        *left = llround(cfg->rate * (double)(end - due) / 1e9);
    }
    if (*left == 0) return end + sim_rng_exp_ns(&e->arrival_rng, cfg->rate);
    return next_of_known_count(e, due, end, (*left)--);
}

/* Units released and not yet started, over every instance. */
static uint64_t backlog(engine *e, int ninst)
{
    uint64_t n = 0;
    for (int i = 0; i < ninst; i++) {
        pthread_mutex_lock(&e->queues[i].lock);
        n += e->queues[i].len;
        pthread_mutex_unlock(&e->queues[i].lock);
    }
    return n;
}

/* Moves every due timer to its run queue; returns the next due time (or 0). */
static uint64_t release_due(engine *e, uint64_t now)
{
    const sim_vu_config *cfg = e->cfg;
    while (e->nheap && e->heap[0].due <= now) {
        timer t = heap_pop(e);
        sim_hist_record(e->lateness, now - t.due);
        if (t.id >= ARRIVAL_BASE) {
            uint32_t inst = t.id - ARRIVAL_BASE;
            uint32_t vu = (uint32_t)(e->arrival_seq[inst]++ % cfg->vusers);
            queue_push(&e->queues[inst], t.due, vu);
            if (t.due >= sim_run_measure_start_ns(e->run) && t.due < sim_run_measure_end_ns(e->run))
                e->arrivals_measured++;
            heap_push(e, next_arrival(e, (int)inst, t.due), t.id);
        } else {
            queue_push(&e->queues[t.id / cfg->vusers], t.due, t.id % cfg->vusers);
        }
    }
    return e->nheap ? e->heap[0].due : 0;
}

/* Open loop, when the run has ended: arrivals due in the measured phase that the
 * scheduler had not released yet (it woke late) arrived all the same and were not
 * served, so they count as arrivals and as backlog at the end. */
static void count_unreleased(engine *e)
{
    uint64_t start = sim_run_measure_start_ns(e->run), end = sim_run_measure_end_ns(e->run);
    uint64_t now = sim_now_ns();
    if (now < end) end = now;
    for (size_t i = 0; i < e->nheap; i++) {
        if (e->heap[i].id < ARRIVAL_BASE) continue;
        int inst = (int)(e->heap[i].id - ARRIVAL_BASE);
        for (uint64_t due = e->heap[i].due; due < end; due = next_arrival(e, inst, due))
            if (due >= start) {
                e->arrivals_measured++;
                e->backlog_at_end++;
            }
    }
}

static void scheduler_loop(engine *e, int ninst)
{
    pthread_mutex_lock(&e->heap_lock);
    while (!atomic_load(&e->stop)) {
        if (sim_run_done(e->run)) break;
        uint64_t now = sim_now_ns();
        if (!e->start_seen && now >= sim_run_measure_start_ns(e->run)) {
            e->start_seen = true;
            e->backlog_at_start = backlog(e, ninst);
        }
        uint64_t next = release_due(e, now);
        /* Wake at the next due time, or within 100 ms to notice the end of the run. */
        uint64_t wait = 100000000ull;
        if (next && next - now < wait) wait = next > now ? next - now : 0;
        if (wait) {
            struct timespec ts = abs_after(wait);
            pthread_cond_timedwait(&e->heap_changed, &e->heap_lock, &ts);
        }
    }
    e->backlog_at_end = backlog(e, ninst);
    if (e->cfg->rate > 0) count_unreleased(e);
    atomic_store(&e->stop, true);
    pthread_mutex_unlock(&e->heap_lock);
}

/* The engine's users, queues, heap and locks for ninst instances. */
static void engine_init(engine *e, int ninst, size_t nusers)
{
    e->users = sim_xcalloc(nusers, sizeof *e->users);
    e->queues = sim_xcalloc((size_t)ninst, sizeof *e->queues);
    e->arrival_seq = sim_xcalloc((size_t)ninst, sizeof *e->arrival_seq);
    e->window_left = sim_xcalloc((size_t)ninst, sizeof *e->window_left);
    for (int i = 0; i < ninst; i++)
        e->window_left[i] = -1;
    e->lateness = sim_run_late_hist(e->run);
    e->own_lateness = !e->lateness;
    if (e->own_lateness) e->lateness = sim_hist_new();
    pthread_mutex_init(&e->heap_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->heap_changed, &ca);
    for (int i = 0; i < ninst; i++) {
        pthread_mutex_init(&e->queues[i].lock, NULL);
        pthread_cond_init(&e->queues[i].ready, &ca);
    }
    pthread_condattr_destroy(&ca);
    sim_rng_seed(&e->arrival_rng, e->cfg->seed, 0xa1a1a1a1ull);
}

static void engine_free(engine *e, int ninst)
{
    for (int i = 0; i < ninst; i++) {
        free(e->queues[i].items);
        pthread_mutex_destroy(&e->queues[i].lock);
        pthread_cond_destroy(&e->queues[i].ready);
    }
    free(e->queues);
    free(e->users);
    free(e->arrival_seq);
    free(e->window_left);
    free(e->heap);
    if (e->own_lateness) sim_hist_free(e->lateness);
    pthread_mutex_destroy(&e->heap_lock);
    pthread_cond_destroy(&e->heap_changed);
}

/* The first wake-ups: each instance's first arrival (open loop), or each user's first
 * delay, or its first unit queued at once (closed loop). */
static void schedule_first(engine *e, int ninst, size_t nusers)
{
    const sim_vu_config *cfg = e->cfg;
    uint64_t now = sim_now_ns();
    if (cfg->rate > 0) {
        for (int i = 0; i < ninst; i++)
            heap_push(e, next_arrival(e, i, now), ARRIVAL_BASE + (uint32_t)i);
        return;
    }
    for (size_t g = 0; g < nusers; g++) {
        vuser *u = &e->users[g];
        sim_rng_seed(&u->rng, cfg->seed, g + 1);
        u->last_type = -1;
        int inst = (int)(g / cfg->vusers);
        uint32_t vu = (uint32_t)(g % cfg->vusers);
        uint64_t d =
            e->ops->next_delay_ns ? e->ops->next_delay_ns(e->wl, inst, vu, -1, &u->rng) : 0;
        if (d == 0)
            queue_push(&e->queues[inst], now, vu);
        else
            heap_push(e, now + d, (uint32_t)g);
    }
}

/* Starts nworkers workers (their instance and index from their number); a worker that
 * cannot start fails and stops the engine. */
static worker *start_workers(engine *e, int nworkers)
{
    worker *ws = sim_xcalloc((size_t)nworkers, sizeof *ws);
    for (int i = 0; i < nworkers; i++) {
        ws[i] = (worker){.e = e, .instance = i / e->cfg->workers, .index = i % e->cfg->workers};
        sim_rng_seed(&ws[i].rng, e->cfg->seed, 0x5eed0000ull + (uint64_t)i);
        ws[i].started = pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) == 0;
        if (!ws[i].started) {
            sim_error("cannot start worker thread %d", i);
            atomic_store(&e->failed, true);
            atomic_store(&e->stop, true);
        }
    }
    return ws;
}

/* After the scheduler stopped: wakes the idle workers (they see stop) and joins all. */
static void join_workers(engine *e, int ninst, worker *ws, int nworkers)
{
    for (int i = 0; i < ninst; i++) {
        pthread_mutex_lock(&e->queues[i].lock);
        pthread_cond_broadcast(&e->queues[i].ready);
        pthread_mutex_unlock(&e->queues[i].lock);
    }
    for (int i = 0; i < nworkers; i++)
        if (ws[i].started) pthread_join(ws[i].thread, NULL);
    free(ws);
}

static void put_stats(const engine *e, int ninst, sim_vu_stats *stats)
{
    stats->units = atomic_load(&e->units);
    stats->max_queue = 0;
    for (int i = 0; i < ninst; i++)
        if (e->queues[i].max_len > stats->max_queue) stats->max_queue = e->queues[i].max_len;
    stats->wake_late_p50_ns = sim_hist_percentile(e->lateness, 50);
    stats->wake_late_p99_ns = sim_hist_percentile(e->lateness, 99);
    stats->wake_late_max_ns = sim_hist_max(e->lateness);
    stats->arrivals_measured = e->arrivals_measured;
    stats->backlog_at_start = e->backlog_at_start;
    stats->backlog_at_end = e->backlog_at_end;
}

int sim_vu_run(sim_run *run, const sim_vu_config *cfg, const sim_vu_ops *ops, void *wl,
               sim_vu_stats *stats)
{
    engine e = {.run = run, .cfg = cfg, .ops = ops, .wl = wl};
    int ninst = cfg->instances > 0 ? cfg->instances : 1;
    size_t nusers = (size_t)ninst * cfg->vusers;
    if (!cfg->vusers || cfg->workers < 1) return SIM_EXIT_FAIL;
    engine_init(&e, ninst, nusers);
    schedule_first(&e, ninst, nusers);
    int nworkers = ninst * cfg->workers;
    worker *ws = start_workers(&e, nworkers);
    scheduler_loop(&e, ninst);
    join_workers(&e, ninst, ws, nworkers);
    if (stats) put_stats(&e, ninst, stats);
    int rc = atomic_load(&e.failed) ? SIM_EXIT_FAIL : SIM_EXIT_OK;
    engine_free(&e, ninst);
    return rc;
}
