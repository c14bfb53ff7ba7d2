/*
 * sim_thread_set_cpu_sched: "batch" moves only the calling thread to SCHED_BATCH (a
 * thread started before keeps its policy), "normal" moves it back to SCHED_OTHER, and a
 * policy it does not know is refused with a message naming the choices, the thread's
 * policy unchanged. Also the thread CPU clock the writer-lock figures use: it advances
 * while the thread computes and not while it sleeps.
 */
#include "sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

static int policy_of(pthread_t t)
{
    int policy;
    struct sched_param sp;
    assert_int_equal(pthread_getschedparam(t, &policy, &sp), 0);
    return policy;
}

typedef struct other_thread {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
} other_thread;

static void *idle_until_done(void *arg)
{
    other_thread *o = arg;
    pthread_mutex_lock(&o->mu);
    while (!o->done)
        pthread_cond_wait(&o->cv, &o->mu);
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

static void test_batch_and_back_for_the_calling_thread_only(void **state)
{
    (void)state;
    char err[256] = "";
    other_thread o = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    pthread_t other;
    assert_int_equal(pthread_create(&other, NULL, idle_until_done, &o), 0);

    assert_int_equal(sim_thread_set_cpu_sched("batch", err, sizeof err), SIM_OK);
    assert_int_equal(policy_of(pthread_self()), SCHED_BATCH);
    assert_int_equal(policy_of(other), SCHED_OTHER);

    assert_int_equal(sim_thread_set_cpu_sched("normal", err, sizeof err), SIM_OK);
    assert_int_equal(policy_of(pthread_self()), SCHED_OTHER);

    pthread_mutex_lock(&o.mu);
    o.done = true;
    pthread_cond_signal(&o.cv);
    pthread_mutex_unlock(&o.mu);
    pthread_join(other, NULL);
}

static void test_an_unknown_policy_is_refused(void **state)
{
    (void)state;
    char err[256] = "";
    assert_int_equal(sim_thread_set_cpu_sched("fifo", err, sizeof err), SIM_ERR);
    assert_non_null(strstr(err, "\"fifo\""));
    assert_non_null(strstr(err, "batch or normal"));
    assert_int_equal(policy_of(pthread_self()), SCHED_OTHER);
}

static void test_the_thread_clock_counts_computing_not_sleeping(void **state)
{
    (void)state;
    uint64_t c0 = sim_thread_cpu_ns();
    sim_sleep_until_ns(sim_now_ns() + 50000000ull); /* 50 ms asleep */
    uint64_t slept = sim_thread_cpu_ns() - c0;
    assert_true(slept < 10000000ull);

    /* computing: the clock reaches 20 ms of CPU (within 5 s of wall time, however busy
     * the machine is) */
    volatile uint64_t x = 0;
    uint64_t c1 = sim_thread_cpu_ns(), give_up = sim_now_ns() + 5000000000ull;
    while (sim_thread_cpu_ns() - c1 < 20000000ull && sim_now_ns() < give_up)
        x += 1;
    assert_true(sim_thread_cpu_ns() - c1 >= 20000000ull);
    assert_true(x > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_and_back_for_the_calling_thread_only),
        cmocka_unit_test(test_an_unknown_policy_is_refused),
        cmocka_unit_test(test_the_thread_clock_counts_computing_not_sleeping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
