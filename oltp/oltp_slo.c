/*
 * oltp/oltp_slo.c: service-level limits of a curve (--slo) and the service-level
 * figure. A limit bounds one latency percentile, of all transactions or of one type
 * ("p99<=20ms", "new_order:p90<=5s"); a point meets the limits when every bounded
 * percentile is at or under its limit. The service-level throughput is the highest
 * rate a point served while sustained and within every limit; between the highest
 * point that met them and the next higher one that did not, a few extra points bisect
 * the rate (oltp/oltp_curve.c runs them, the choice of the next one is here).
 */
#include "oltp/oltp.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char accepted[] =
    "a limit is [TYPE:]pNN<=TIME, e.g. p99<=20ms, p99.9<=100ms, p90<=5s (percentile above 0 "
    "and below 100, or p999 for 99.9; TIME with a unit: us, ms, s, m); several are separated "
    "by commas";

/* "p99", "p99.9", "p999" (99.9), "p9999" (99.99): the percentile, or -1. */
static double parse_percentile(const char *s, size_t len)
{
    char buf[32];
    if (len < 2 || len >= sizeof buf || (s[0] != 'p' && s[0] != 'P')) return -1;
    memcpy(buf, s + 1, len - 1);
    buf[len - 1] = '\0';
    double v;
    if (sim_parse_double(buf, &v)) return -1;
    /* p999 and p9999 are the usual spellings of 99.9 and 99.99 */
    if (!strchr(buf, '.') && v >= 100) {
        size_t digits = strlen(buf);
        if (strspn(buf, "9") != digits) return -1;
        double tail = 100.0;
        for (size_t k = 0; k < digits; k++)
            tail /= 10.0;
        v = 100.0 - tail;
    }
    return v > 0 && v < 100 ? v : -1;
}

static int type_index(const char *name, size_t len, const char *const *types, int ntypes)
{
    for (int i = 0; i < ntypes; i++)
        if (strlen(types[i]) == len && !strncmp(types[i], name, len)) return i;
    return -2;
}

/* One limit from s (no commas). SIM_OK, or SIM_ERR with a message naming it. */
static int parse_one(const char *s, const char *const *types, int ntypes, oltp_slo_limit *out,
                     char *err, size_t errlen)
{
    const char *le = strstr(s, "<=");
    if (!le) {
        snprintf(err, errlen, "--slo '%s': no '<='; %s", s, accepted);
        return SIM_ERR;
    }
    const char *colon = memchr(s, ':', (size_t)(le - s));
    const char *pct = colon ? colon + 1 : s;
    out->type = -1;
    if (colon) {
        out->type = type_index(s, (size_t)(colon - s), types, ntypes);
        if (out->type < 0) {
            char names[256] = "";
            size_t at = 0;
            for (int i = 0; i < ntypes && at < sizeof names; i++)
                at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "",
                                       types[i]);
            snprintf(err, errlen, "--slo '%s': no transaction type '%.*s' here (types: %s); %s", s,
                     (int)(colon - s), s, names, accepted);
            return SIM_ERR;
        }
    }
    out->percentile = parse_percentile(pct, (size_t)(le - pct));
    if (out->percentile < 0) {
        snprintf(err, errlen, "--slo '%s': '%.*s' is not a percentile; %s", s, (int)(le - pct), pct,
                 accepted);
        return SIM_ERR;
    }
    const char *time = le + 2;
    size_t tl = strlen(time);
    uint64_t ns;
    if (!tl || !isalpha((unsigned char)time[tl - 1]) || sim_parse_duration(time, &ns) || !ns) {
        snprintf(err, errlen, "--slo '%s': '%s' is not a time above 0 with a unit; %s", s, time,
                 accepted);
        return SIM_ERR;
    }
    out->limit_ms = (double)ns / 1e6;
    out->source = "--slo";
    return SIM_OK;
}

int oltp_slo_parse(const char *text, const char *const *types, int ntypes, oltp_slo *out, char *err,
                   size_t errlen)
{
    char buf[1024];
    if (!text || !*text || strlen(text) >= sizeof buf) {
        snprintf(err, errlen, "--slo '%s': %s", text ? text : "", accepted);
        return SIM_ERR;
    }
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (out->n == OLTP_SLO_MAX) {
            snprintf(err, errlen, "--slo: more than %d limits", OLTP_SLO_MAX);
            return SIM_ERR;
        }
        if (parse_one(t, types, ntypes, &out->lim[out->n], err, errlen)) return SIM_ERR;
        out->n++;
    }
    if (!out->n) {
        snprintf(err, errlen, "--slo '%s': %s", text, accepted);
        return SIM_ERR;
    }
    return SIM_OK;
}

json_t *oltp_slo_limits_json(const oltp_slo *s, const char *const *types)
{
    json_t *a = json_array();
    for (int i = 0; i < s->n; i++) {
        const oltp_slo_limit *l = &s->lim[i];
        json_array_append_new(a,
                              json_pack("{s:f, s:o, s:f, s:s}", "percentile", l->percentile, "type",
                                        l->type >= 0 ? json_string(types[l->type]) : json_null(),
                                        "limit_ms", l->limit_ms, "source", l->source));
    }
    return a;
}

bool oltp_slo_met(const oltp_slo *s, const sim_hist *all, const sim_hist *const *per_type)
{
    if (!sim_hist_count(all)) return false;
    for (int i = 0; i < s->n; i++) {
        const oltp_slo_limit *l = &s->lim[i];
        const sim_hist *h = l->type >= 0 ? per_type[l->type] : all;
        /* A type that ran no measured transaction has no percentile to hold against the
         * point; the point's other limits still decide. */
        if (!sim_hist_count(h)) continue;
        if ((double)sim_hist_percentile(h, l->percentile) / 1e6 > l->limit_ms) return false;
    }
    return true;
}

/* Whether point p counts for the service level: it ran to its end, kept up with its
 * arrivals and met the limits. */
static bool passes(const oltp_point_outcome *p)
{
    return p->complete && p->sustained && p->met;
}

/* A rate curve's saturation run gives the service level only when it met the limits
 * and no open-loop point up to its rate missed them: its closed loop never queues more
 * transactions than it has users, so its latency alone does not show the queueing that
 * arrivals at that rate would meet. */
static bool saturation_passes(const oltp_point_outcome *p, int n)
{
    if (!passes(&p[0])) return false;
    for (int i = 1; i < n; i++)
        if (p[i].complete && p[i].offered <= p[0].achieved && !passes(&p[i])) return false;
    return true;
}

int oltp_service_level_pick(const oltp_point_outcome *p, int n, bool rate_kind)
{
    if (rate_kind && n > 0 && saturation_passes(p, n)) return 0;
    int best = -1;
    for (int i = rate_kind ? 1 : 0; i < n; i++) {
        if (!passes(&p[i])) continue;
        double v = rate_kind ? p[i].offered : p[i].achieved;
        double b = best < 0 ? 0 : rate_kind ? p[best].offered : p[best].achieved;
        if (best < 0 || v > b) best = i;
    }
    return best;
}

bool oltp_service_level_bracket(const oltp_point_outcome *p, int n, double *lo, double *hi)
{
    int best = oltp_service_level_pick(p, n, true);
    if (best <= 0) return false; /* none passed, or the saturation run itself did */
    double above = -1;
    for (int i = 1; i < n; i++)
        if (p[i].complete && !passes(&p[i]) && p[i].offered > p[best].offered &&
            (above < 0 || p[i].offered < above))
            above = p[i].offered;
    if (above < 0) return false;
    *lo = p[best].offered;
    *hi = above;
    return true;
}
