/*
 * oltp/sysbench_curve.c: `appsim sysbench run --curve` and user steps (--threads
 * 1,8,16): each point of the curve driver (oltp/oltp_curve.c) is one run of the
 * workload on the instances opened once, with the point's threads, rate and phases.
 * The saturation point is a closed-loop run with --threads; open-loop points run on as
 * many connections.
 */
#include "oltp/sysbench_internal.h"

typedef struct sb_curve {
    sb_cmd *c;
    void **dbs;
    st_space_guard *space;
} sb_curve;

static int run_point(void *ctx, const oltp_curve_req *req, json_t *doc, oltp_point_run *out)
{
    sb_curve *sc = ctx;
    sb_cmd pc = *sc->c; /* the point's load and phases over the command's options */
    int n = (int)pc.instances;
    pc.threads = req->users ? req->users : sc->c->threads;
    pc.rate = req->closed_loop ? 0 : req->rate / n;
    pc.uniform = req->uniform;
    pc.time_ns = req->duration_ns;
    pc.warmup_ns = req->warmup_ns;
    pc.events = 0;
    pc.seed = req->seed;
    int rc = sb_run_once(&pc, sc->dbs, n, sc->space, doc, &out->run, &out->vs);
    out->vusers = pc.threads;
    out->users = pc.threads * (uint64_t)n;
    out->think_s = 0; /* sysbench's threads do not wait between transactions */
    out->workers = pc.threads * (uint64_t)n;
    if (rc && out->run) {
        sim_run_free(out->run);
        out->run = NULL;
    }
    return rc;
}

int sb_action_curve(sb_cmd *c, json_t *doc)
{
    st_space_guard space = {.t = c->t, .keep_free = c->keep_free};
    void **dbs = NULL;
    int rc = sb_open_run(c, &space, &dbs);
    if (!rc) {
        sb_curve sc = {.c = c, .dbs = dbs, .space = &space};
        const char *type_names[1] = {sb_workload_name(c->ev.workload)};
        oltp_curve_ops ops = {.type_names = type_names, .ntypes = 1, .run_point = run_point};
        oltp_curve_cfg cfg =
            oltp_curve_cli_cfg(&c->curve, c->seed, c->uniform, c->quiet, c->json_path);
        rc = oltp_curve_run(&cfg, &ops, &sc, doc);
    }
    sb_close_run(c, dbs);
    return rc;
}
