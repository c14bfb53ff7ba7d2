/*
 * oltp/oltp_curve_opts.c: the curve options tpcc and sysbench share (--curve,
 * --curve-points, --point-warmup, --point-duration, --slo, --slo-refine, and a list of
 * user counts for steps), checked the same way in both: an option a mode does not
 * apply is refused, never ignored.
 */
#include "oltp/oltp.h"

#include <string.h>

void oltp_curve_cli_defaults(oltp_curve_cli *c)
{
    *c = (oltp_curve_cli){.point_warmup_ns = OLTP_CURVE_DEFAULT_WARMUP_NS,
                          .point_duration_ns = OLTP_CURVE_DEFAULT_DURATION_NS,
                          .slo_refine = OLTP_CURVE_DEFAULT_REFINE};
}

bool oltp_curve_cli_active(const oltp_curve_cli *c)
{
    return c->curve || c->nsteps > 1;
}

static bool given(const sim_opt *opts, const char *name)
{
    const sim_opt *o = sim_opts_find(opts, name);
    return o && o->set;
}

/* Each mode's options: the curve's need --curve, the points' need a curve or steps, a
 * single run's are set by the points. */
static int check_modes(const char *command, const sim_opt *opts, const oltp_curve_cli *c,
                       const char *users_opt, const char *const *single_only)
{
    bool steps = c->nsteps > 1;
    if (c->curve && steps) {
        sim_error("%s: --curve runs rates of its own, and a list of --%s runs one point per "
                  "count: give one of them",
                  command, users_opt);
        return SIM_EXIT_USAGE;
    }
    static const char *const curve_only[] = {"curve-points", "slo-refine"};
    for (size_t i = 0; i < sizeof curve_only / sizeof *curve_only; i++)
        if (!c->curve && given(opts, curve_only[i])) {
            sim_error("%s: --%s needs --curve", command, curve_only[i]);
            return SIM_EXIT_USAGE;
        }
    static const char *const points_only[] = {"point-warmup", "point-duration", "slo"};
    for (size_t i = 0; i < sizeof points_only / sizeof *points_only; i++)
        if (!oltp_curve_cli_active(c) && given(opts, points_only[i])) {
            sim_error("%s: --%s applies to a curve's points: give --curve, or a list of --%s "
                      "(e.g. --%s 2,4,8)",
                      command, points_only[i], users_opt, users_opt);
            return SIM_EXIT_USAGE;
        }
    for (size_t i = 0; single_only[i]; i++)
        if (oltp_curve_cli_active(c) && given(opts, single_only[i])) {
            sim_error("%s: a curve or user steps set each point's load and durations: --%s does "
                      "not apply (use --point-warmup and --point-duration)",
                      command, single_only[i]);
            return SIM_EXIT_USAGE;
        }
    if (oltp_curve_cli_active(c) && sim_ranks_size() > 1) {
        sim_error("%s: curves and user steps run in one process; run them without mpirun", command);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

int oltp_curve_cli_resolve(const char *command, const sim_opt *opts, oltp_curve_cli *c,
                           const char *counts, const char *users_opt, uint64_t max_count,
                           const char *const *single_only, const char *const *types, int ntypes)
{
    c->nsteps = oltp_curve_parse_counts(counts, max_count, c->steps, 64);
    if (c->nsteps < 0) {
        sim_error("%s: --%s '%s': a count from 1 to %llu, or a comma-separated list of them "
                  "(one closed-loop point each, e.g. 2,4,8)",
                  command, users_opt, counts, (unsigned long long)max_count);
        return SIM_EXIT_USAGE;
    }
    int rc = check_modes(command, opts, c, users_opt, single_only);
    if (rc) return rc;
    if (c->points && (c->npercents = oltp_curve_parse_percents(c->points, c->percents, 64)) < 0) {
        sim_error("%s: --curve-points '%s': percents of the saturation rate expected, above 0 "
                  "and at most 1000, comma-separated, e.g. 10,50,90,110",
                  command, c->points);
        return SIM_EXIT_USAGE;
    }
    char err[1024];
    if (c->slo && oltp_slo_parse(c->slo, types, ntypes, &c->limits, err, sizeof err)) {
        sim_error("%s: %s", command, err);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

void oltp_curve_cli_config(json_t *doc, const char *name, const oltp_curve_cli *c)
{
    json_t *cfg = json_object_get(doc, "config");
    if (!cfg || c->nsteps < 1) return;
    if (c->nsteps == 1) {
        json_object_set_new(cfg, name, json_integer((json_int_t)c->steps[0]));
        return;
    }
    json_t *a = json_array();
    for (int i = 0; i < c->nsteps; i++)
        json_array_append_new(a, json_integer((json_int_t)c->steps[i]));
    json_object_set_new(cfg, name, a);
}

oltp_curve_cfg oltp_curve_cli_cfg(const oltp_curve_cli *c, uint64_t seed, bool uniform, bool quiet,
                                  const char *json_path)
{
    return (oltp_curve_cfg){.users_kind = !c->curve,
                            .percents = c->percents,
                            .npercents = c->npercents > 0 ? c->npercents : 0,
                            .users = c->steps,
                            .nusers = c->nsteps,
                            .warmup_ns = c->point_warmup_ns,
                            .duration_ns = c->point_duration_ns,
                            .seed = seed,
                            .uniform = uniform,
                            .slo = &c->limits,
                            .refine = (int)c->slo_refine,
                            .quiet = quiet,
                            .json_path = json_path};
}
