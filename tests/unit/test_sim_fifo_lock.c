/*
 * sim_fifo_lock: waiters get the lock in the order they asked for it (each thread is
 * queued before the next one starts), the lock excludes (no lost updates under eight
 * contending threads), and a thread that releases and asks again at once goes behind
 * the threads already waiting, which a pthread mutex does not promise. The hand-over a
 * waiter is told of lies between the owner's release and the waiter's return; a lock
 * taken free has none.
 */
#include "sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { NTHREADS = 8 };

typedef struct shared {
    sim_fifo_lock *lock;
    int order[NTHREADS * 4];
    int norder;
    uint64_t counter;
    int rounds;
} shared;

typedef struct arg {
    shared *s;
    int id;
} arg;

static void wait_for_waiters(sim_fifo_lock *l, unsigned n)
{
    while (sim_fifo_lock_waiting(l) != n)
        sim_sleep_until_ns(sim_now_ns() + 100000);
}

static void *take_once(void *p)
{
    arg *a = p;
    sim_fifo_lock_acquire(a->s->lock);
    a->s->order[a->s->norder++] = a->id;
    sim_fifo_lock_release(a->s->lock);
    return NULL;
}

static void test_arrival_order(void **state)
{
    (void)state;
    shared s = {.lock = sim_fifo_lock_new()};
    assert_non_null(s.lock);
    sim_fifo_lock_acquire(s.lock);
    pthread_t th[NTHREADS];
    arg a[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        a[i] = (arg){&s, i};
        assert_int_equal(pthread_create(&th[i], NULL, take_once, &a[i]), 0);
        wait_for_waiters(s.lock, (unsigned)i + 1);
    }
    sim_fifo_lock_release(s.lock);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(s.norder, NTHREADS);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(s.order[i], i);
    assert_int_equal(sim_fifo_lock_waiting(s.lock), 0);
    sim_fifo_lock_free(s.lock);
}

/* Thread 0 holds the lock, waits until the others queue, then releases and asks again
 * at once, several times: every time it must come after all of them. */
static void *take_rounds(void *p)
{
    arg *a = p;
    for (int r = 0; r < a->s->rounds; r++) {
        sim_fifo_lock_acquire(a->s->lock);
        a->s->order[a->s->norder++] = a->id;
        sim_fifo_lock_release(a->s->lock);
    }
    return NULL;
}

static void test_releasing_thread_goes_behind_waiters(void **state)
{
    (void)state;
    shared s = {.lock = sim_fifo_lock_new(), .rounds = 1};
    sim_fifo_lock_acquire(s.lock);
    pthread_t th[3];
    arg a[3];
    for (int i = 0; i < 3; i++) {
        a[i] = (arg){&s, i + 1};
        assert_int_equal(pthread_create(&th[i], NULL, take_rounds, &a[i]), 0);
        wait_for_waiters(s.lock, (unsigned)i + 1);
    }
    sim_fifo_lock_release(s.lock);
    sim_fifo_lock_acquire(s.lock); /* at once: behind threads 1, 2 and 3 */
    s.order[s.norder++] = 0;
    sim_fifo_lock_release(s.lock);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    int want[] = {1, 2, 3, 0};
    assert_int_equal(s.norder, 4);
    assert_memory_equal(s.order, want, sizeof want);
    sim_fifo_lock_free(s.lock);
}

static void *count_up(void *p)
{
    arg *a = p;
    for (int i = 0; i < 20000; i++) {
        sim_fifo_lock_acquire(a->s->lock);
        a->s->counter++; /* not atomic: only the lock protects it */
        sim_fifo_lock_release(a->s->lock);
    }
    return NULL;
}

static void test_mutual_exclusion(void **state)
{
    (void)state;
    shared s = {.lock = sim_fifo_lock_new()};
    pthread_t th[NTHREADS];
    arg a[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        a[i] = (arg){&s, i};
        assert_int_equal(pthread_create(&th[i], NULL, count_up, &a[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(s.counter, (uint64_t)NTHREADS * 20000);
    assert_int_equal(sim_fifo_lock_waiting(s.lock), 0);
    sim_fifo_lock_free(s.lock);
}

typedef struct handover_arg {
    sim_fifo_lock *lock;
    uint64_t handover_ns, returned_ns;
} handover_arg;

static void *take_timed(void *p)
{
    handover_arg *a = p;
    a->handover_ns = sim_fifo_lock_acquire_handover(a->lock);
    a->returned_ns = sim_now_ns();
    sim_fifo_lock_release(a->lock);
    return NULL;
}

static void test_handover_time(void **state)
{
    (void)state;
    sim_fifo_lock *l = sim_fifo_lock_new();
    assert_int_equal(sim_fifo_lock_acquire_handover(l), 0); /* free: no hand-over */
    handover_arg a = {.lock = l};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, take_timed, &a), 0);
    wait_for_waiters(l, 1);
    uint64_t released_ns = sim_now_ns();
    sim_fifo_lock_release(l);
    pthread_join(th, NULL);
    assert_true(a.handover_ns > 0);
    assert_true(a.handover_ns <= a.returned_ns - released_ns);
    sim_fifo_lock_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrival_order),
        cmocka_unit_test(test_releasing_thread_goes_behind_waiters),
        cmocka_unit_test(test_mutual_exclusion),
        cmocka_unit_test(test_handover_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
