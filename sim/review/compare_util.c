/*
 * sim/review/compare_util.c: small helpers shared by compare, report and suite: a growable
 * string buffer with HTML escaping, NULL-safe JSON accessors, the curve finder and the
 * "-o" argument rewrite. Nothing here allocates on behalf of a caller without saying so.
 */
#include "sim/review/review_internal.h"

#include <stdlib.h>
#include <string.h>

void cmp_buf_puts(cmp_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->s = sim_xrealloc(b->s, cap);
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

void cmp_buf_printf(cmp_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        cmp_buf_puts(b, small);
        return;
    }
    char *big = sim_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    cmp_buf_puts(b, big);
    free(big);
}

void cmp_buf_html(cmp_buf *b, const char *s)
{
    char chunk[256];
    size_t k = 0;
    for (; s && *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        default:
            break;
        }
        if (k + 8 >= sizeof chunk) {
            chunk[k] = 0;
            cmp_buf_puts(b, chunk);
            k = 0;
        }
        if (rep) {
            size_t rl = strlen(rep);
            memcpy(chunk + k, rep, rl);
            k += rl;
        } else {
            chunk[k++] = *s;
        }
    }
    chunk[k] = 0;
    cmp_buf_puts(b, chunk);
}

void cmp_buf_free(cmp_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

bool cmp_num(const json_t *obj, const char *key, double *v)
{
    if (!obj || !json_is_object(obj)) return false;
    const json_t *x = json_object_get(obj, key);
    if (!x || !json_is_number(x)) return false;
    *v = json_number_value(x);
    return true;
}

const char *cmp_str(const json_t *obj, const char *key)
{
    if (!obj || !json_is_object(obj)) return NULL;
    const json_t *x = json_object_get(obj, key);
    return json_is_string(x) ? json_string_value(x) : NULL;
}

/* The points of a curve: the value itself when it is an array (points directly), or
 * its "points" array (replay --curve, vdi storms). */
static const json_t *curve_points(const json_t *v)
{
    if (json_is_array(v)) return json_array_size(v) ? v : NULL;
    const json_t *p = json_object_get(v, "points");
    return json_is_array(p) && json_array_size(p) ? p : NULL;
}

/* A readable name for an array element: its identifying string fields ("full/boot" for
 * a VDI storm), else its index. */
static void element_name(const json_t *el, const char *key, size_t i, char *buf, size_t len)
{
    static const char *const fields[] = {"name", "profile", "clones", "phase", NULL};
    size_t k = 0;
    buf[0] = 0;
    for (int f = 0; fields[f] && k < len; f++) {
        const char *s = cmp_str(el, fields[f]);
        if (s && *s) k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? "/" : "", s);
    }
    if (!buf[0]) snprintf(buf, len, "%s[%zu]", key, i);
}

static int find_curves(const json_t *node, const char *prefix, const json_t **curves, char **names,
                       int n, int max, int depth)
{
    if (depth > 6 || !json_is_object(node)) return n;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)node, key, val)
    {
        if (n >= max) break;
        if (!strcmp(key, "histograms") || !strcmp(key, "config") || !strcmp(key, "host") ||
            !strcmp(key, "target") || !strcmp(key, "intervals"))
            continue;
        const json_t *pts = !strcmp(key, "curve") ? curve_points(val) : NULL;
        char name[256];
        if (pts) {
            curves[n] = pts;
            names[n] = sim_xstrdup(prefix[0] ? prefix : "curve");
            n++;
            continue;
        }
        if (prefix[0])
            snprintf(name, sizeof name, "%s.%s", prefix, key);
        else
            snprintf(name, sizeof name, "%s", key);
        if (json_is_object(val)) {
            n = find_curves(val, name, curves, names, n, max, depth + 1);
        } else if (json_is_array(val) && json_array_size(val) <= 64) {
            size_t i;
            json_t *el;
            json_array_foreach(val, i, el)
            {
                if (n >= max || !json_is_object(el)) break;
                char en[256];
                element_name(el, key, i, en, sizeof en);
                n = find_curves(el, en, curves, names, n, max, depth + 1);
            }
        }
    }
    return n;
}

int cmp_find_curves(const json_t *doc, const json_t **curves, char **names, int max)
{
    return find_curves(doc, "", curves, names, 0, max, 0);
}

bool cmp_point_rate(const json_t *pt, double *v)
{
    if (cmp_num(pt, "iops", v) || cmp_num(pt, "rate", v) || cmp_num(pt, "tps", v)) return true;
    const json_t *s = json_object_get(pt, "summary");
    return cmp_num(s, "iops", v) || cmp_num(s, "tps", v) || cmp_num(s, "rate", v);
}

const json_t *cmp_point_latency(const json_t *pt)
{
    double v;
    if (cmp_num(pt, "mean_us", &v))
        return pt; /* mean_us, p99_us... on the point itself (replay, vdi) */
    const json_t *l = json_object_get(pt, "latency_us");
    if (json_is_object(l)) return l;
    l = json_object_get(json_object_get(pt, "summary"), "latency_us");
    if (json_is_object(l)) return l;
    l = json_object_get(json_object_get(json_object_get(pt, "run"), "summary"), "latency_us");
    return json_is_object(l) ? l : NULL;
}

const json_t *cmp_point_histograms(const json_t *pt)
{
    const json_t *h = json_object_get(pt, "histograms");
    if (json_is_object(h)) return h;
    h = json_object_get(json_object_get(pt, "run"), "histograms");
    return json_is_object(h) ? h : NULL;
}

char **cmp_argv_short_o(int argc, char **argv)
{
    char **v = sim_xcalloc((size_t)argc + 1, sizeof *v);
    static char output[] = "--output";
    for (int i = 0; i < argc; i++)
        v[i] = (i > 0 && !strcmp(argv[i], "-o")) ? output : argv[i];
    return v;
}

/* The first non-empty string under key, depth first, looking only into the first
 * element of arrays (a VDI storm's points all ran on one engine). */
static const char *first_string(const json_t *v, const char *key, int depth)
{
    if (depth > 8) return NULL;
    if (json_is_array(v)) return first_string(json_array_get(v, 0), key, depth + 1);
    if (!json_is_object(v)) return NULL;
    const char *s = cmp_str(v, key);
    if (s && *s) return s;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x)
    {
        if (!strcmp(k, "config")) continue;
        s = first_string(x, key, depth + 1);
        if (s) return s;
    }
    return NULL;
}

/* The engine a result ran on, as a reader names it: the database engine of sysbench
 * ("sqlite", "lmdb"), SQLite for TPC-C (its "database" entries describe SQLite
 * connections), else the I/O engine of the trace and synthetic workloads. */
static const char *engine_of(const json_t *doc)
{
    const char *e = cmp_str(json_object_get(doc, "sysbench"), "engine");
    if (e && *e) return e;
    const json_t *db = json_object_get(doc, "database");
    if (json_is_array(db) && cmp_str(json_array_get(db, 0), "vfs")) return "sqlite";
    const json_t *cfg = json_object_get(doc, "config");
    static const char *const keys[] = {"ioengine", "io-engine", "engine"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        e = cmp_str(cfg, keys[i]);
        if (e && *e) return e;
    }
    /* The default engine is recorded where it ran (e.g. each replay's statistics). */
    return first_string(doc, "engine", 0);
}

void cmp_group_title(const cmp_group *g, char *buf, size_t len)
{
    const char *e = g->nentries ? engine_of(g->entries[0].runs[0]->doc) : NULL;
    if (e)
        snprintf(buf, len, "%s (%s)", g->workload, e);
    else
        snprintf(buf, len, "%s", g->workload);
}
