/*
 * oltp/tpcc_curve.c: `appsim tpcc run --curve` and user steps (--vusers 100,500,1000):
 * each point of the curve driver (oltp/oltp_curve.c) is one run over the instances
 * opened once. The saturation point runs the users without waits (pacing off); the
 * open-loop points offer their rate with the TPC-C mix on the same connections; a user
 * step runs that many users with the chosen pacing, on --connections or the default
 * for that many users.
 */
#include "oltp/tpcc_cmd_internal.h"

typedef struct tpcc_curve {
    const tpcc_options *o;
    st_target *t;
    tpcc_instance *inst;
} tpcc_curve;

/* The options of one point: the command's, with the point's load and phases. */
static tpcc_options point_options(const tpcc_options *o, const oltp_curve_req *req)
{
    tpcc_options po = *o;
    if (req->users) {
        po.vusers = req->users;
        po.connections = 0; /* tpcc_connections_of: the default for this many users */
        po.connections = o->connections_auto           ? tpcc_connections_of(&po, req->users)
                         : o->connections < req->users ? o->connections
                                                       : req->users;
    }
    if (req->saturation) {
        po.pacing = "off";
        po.pacev = TPCC_PACE_OFF;
        po.cycle_ns = 0;
    }
    po.rate = req->closed_loop ? 0 : req->rate / (double)o->instances;
    po.uniform = req->uniform;
    po.warmup_ns = req->warmup_ns;
    po.duration_ns = req->duration_ns;
    po.seed = req->seed;
    return po;
}

static int run_point(void *ctx, const oltp_curve_req *req, json_t *doc, oltp_point_run *out)
{
    tpcc_curve *tc = ctx;
    tpcc_options po = point_options(tc->o, req);
    int rc = tpcc_run_point(&po, tc->t, tc->inst, doc, &out->run, &out->vs);
    out->vusers = po.vusers;
    out->users = po.vusers * po.instances;
    out->think_s = tpcc_mean_think_s(&po);
    out->workers = po.connections * po.instances;
    if (rc && out->run) {
        sim_run_free(out->run);
        out->run = NULL;
    }
    return rc;
}

int tpcc_run_curve(const tpcc_options *o, st_target *t, tpcc_instance *inst, json_t *doc)
{
    tpcc_curve tc = {.o = o, .t = t, .inst = inst};
    oltp_curve_ops ops = {.type_names = tpcc_type_names,
                          .ntypes = TPCC_NTYPES,
                          .per_type = true,
                          .run_point = run_point};
    oltp_curve_cfg cfg = oltp_curve_cli_cfg(&o->curve, o->seed, o->uniform, o->quiet, o->json);
    return oltp_curve_run(&cfg, &ops, &tc, doc);
}
