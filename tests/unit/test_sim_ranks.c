/*
 * Ranks without a launcher (docs/mpi.md): one rank, steps that return at once,
 * "{rank}" and "{host}" substitution, the dense histogram form that the sums over ranks
 * use (a round trip, and a sum of dense forms equal to a merge), and a run whose
 * read-outs are unchanged by the one-rank merge.
 */
#include "sim/sim_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

static const char *const launcher_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",  "PMIX_SIZE",
                                            "SLURM_STEP_NUM_TASKS", "PMIX_RANK", "PMI_RANK"};

static int no_launcher(void **state)
{
    for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++)
        unsetenv(launcher_vars[i]); /* this test may itself run inside a Slurm step */
    return 0;
}

static void one_rank_without_launcher(void **state)
{
    assert_int_equal(sim_ranks_launched_size(), 0);
    int argc = 1;
    char *args[] = {"appsim", NULL}, **argv = args;
    assert_int_equal(sim_ranks_init(&argc, &argv), 0);
    assert_int_equal(sim_ranks_rank(), 0);
    assert_int_equal(sim_ranks_size(), 1);
    assert_true(sim_ranks_total(2.5) == 2.5);
    sim_ranks_sync("a step");
    assert_true(sim_ranks_run_step(1, "a step", NULL));
    char why[64];
    assert_false(sim_ranks_poll_stop(1, why, sizeof why));
    assert_int_equal(sim_ranks_finish(3), 3);
}

static void launcher_detected(void **state)
{
    setenv("SLURM_STEP_NUM_TASKS", "4", 1);
    assert_int_equal(sim_ranks_launched_size(), 4);
    unsetenv("SLURM_STEP_NUM_TASKS");
    setenv("PMIX_RANK", "0", 1);
    assert_int_equal(sim_ranks_launched_size(), 1);
    unsetenv("PMIX_RANK");
    assert_int_equal(sim_ranks_launched_size(), 0);
}

static void expand_rank_and_host(void **state)
{
    const char *plain = "/mnt/drive";
    assert_ptr_equal(sim_ranks_expand(plain), plain); /* untouched: the same string */
    assert_null(sim_ranks_expand(NULL));
    char want[512];
    snprintf(want, sizeof want, "/mnt/%s/t0-0{x}", sim_ranks_host());
    assert_string_equal(sim_ranks_expand("/mnt/{host}/t{rank}-{rank}{x}"), want);
    assert_string_equal(sim_ranks_expand("{rank}"), "0");
}

static void dense_round_trip_and_sum(void **state)
{
    sim_hist *a = sim_hist_new(), *b = sim_hist_new();
    for (uint64_t v = 1; v < 5000000; v = v * 3 + 7) {
        sim_hist_record(a, v);
        sim_hist_record_n(b, v * 2 + 1, 3);
    }
    size_t n = sim_hist_dense_len();
    uint64_t *da = calloc(n, sizeof *da), *db = calloc(n, sizeof *db);
    uint64_t alo, ahi, blo, bhi;
    sim_hist_to_dense(a, da, &alo, &ahi);
    sim_hist_to_dense(b, db, &blo, &bhi);
    for (size_t i = 0; i < n; i++)
        da[i] += db[i]; /* what MPI_SUM does */
    sim_hist *sum = sim_hist_new();
    sim_hist_from_dense(sum, da, alo < blo ? alo : blo, ahi > bhi ? ahi : bhi);
    sim_hist_merge(a, b);
    json_t *x = sim_hist_to_json(sum), *y = sim_hist_to_json(a);
    assert_true(json_equal(x, y));
    assert_int_equal(sim_hist_percentile(sum, 99), sim_hist_percentile(a, 99));
    json_decref(x);
    json_decref(y);
    free(da);
    free(db);
    sim_hist_free(a);
    sim_hist_free(b);
    sim_hist_free(sum);
}

static void one_rank_result_has_no_ranks(void **state)
{
    sim_run_config cfg = {.duration_ns = 20000000};
    sim_run *r = sim_run_new(&cfg);
    sim_meter *m = sim_run_meter(r, 0);
    sim_run_start(r);
    uint64_t t = sim_now_ns();
    sim_meter_record(m, 0, t, t + 1000);
    sim_run_finish(r);
    sim_run_sum_ranks(r); /* one rank: nothing changes */
    assert_int_equal(sim_run_count(r, -1, -1), 1);
    json_t *doc = json_object();
    sim_result_put_run(doc, NULL, r);
    assert_null(json_object_get(doc, "ranks"));
    assert_null(json_object_get(doc, "mpi"));
    json_decref(doc);
    sim_run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_rank_without_launcher),    cmocka_unit_test(launcher_detected),
        cmocka_unit_test(expand_rank_and_host),         cmocka_unit_test(dense_round_trip_and_sum),
        cmocka_unit_test(one_rank_result_has_no_ranks),
    };
    return cmocka_run_group_tests(tests, no_launcher, NULL);
}
