/*
 * sim/opts.c: declarative long options. One table per command gives parsing, the
 * --help text and the result's "config" section, so that every parameter a run used
 * (defaults included) is recorded without a second list to keep in step.
 *
 * Accepted forms: --name VALUE, --name=VALUE, --flag; one-letter names also as -x
 * VALUE. "--" ends the options: what follows is positional, untouched.
 */
#include "sim/sim_internal.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Numbers are decimal everywhere: strtod would also read hexadecimal ("0x10", "0x1p4"),
 * which the whole-number options refuse, so the sizes, durations and numbers refuse it
 * too rather than accept it in some places only. */
static bool has_hex(const char *s)
{
    return strpbrk(s, "xX") != NULL;
}

int sim_parse_u64(const char *s, uint64_t *v)
{
    if (!s || !*s || !isdigit((unsigned char)*s)) return SIM_ERR;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end) return SIM_ERR;
    *v = x;
    return SIM_OK;
}

int sim_parse_double(const char *s, double *v)
{
    if (!s || !*s || has_hex(s)) return SIM_ERR;
    errno = 0;
    char *end;
    double x = strtod(s, &end);
    if (errno || *end || !isfinite(x)) return SIM_ERR;
    *v = x;
    return SIM_OK;
}

int sim_parse_size(const char *s, uint64_t *bytes)
{
    if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.') || has_hex(s)) return SIM_ERR;
    errno = 0;
    char *end;
    double x = strtod(s, &end);
    if (errno || x < 0 || !isfinite(x)) return SIM_ERR;
    double mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 0:
        break;
    case 'B':
        end++;
        break;
    case 'K':
        mult = 1024.0;
        end++;
        break;
    case 'M':
        mult = 1024.0 * 1024;
        end++;
        break;
    case 'G':
        mult = 1024.0 * 1024 * 1024;
        end++;
        break;
    case 'T':
        mult = 1024.0 * 1024 * 1024 * 1024;
        end++;
        break;
    default:
        return SIM_ERR;
    }
    /* Accept k, kb, kib (all binary: storage people mean 4K as 4096). */
    if (mult > 1) {
        if (*end == 'i' || *end == 'I') end++;
        if (*end == 'b' || *end == 'B') end++;
    }
    if (*end) return SIM_ERR;
    double v = x * mult;
    if (v >= 18446744073709551615.0) return SIM_ERR;
    *bytes = (uint64_t)llround(v);
    return SIM_OK;
}

int sim_parse_duration(const char *s, uint64_t *ns)
{
    if (!s || !*s || has_hex(s)) return SIM_ERR;
    double total = 0;
    const char *p = s;
    while (*p) {
        if (!(isdigit((unsigned char)*p) || *p == '.')) return SIM_ERR;
        errno = 0;
        char *end;
        double x = strtod(p, &end);
        if (errno || x < 0 || end == p) return SIM_ERR;
        double unit = 1e9; /* bare number: seconds */
        if (!strncmp(end, "ms", 2)) {
            unit = 1e6;
            end += 2;
        } else if (!strncmp(end, "us", 2)) {
            unit = 1e3;
            end += 2;
        } else if (*end == 's') {
            end++;
        } else if (*end == 'm') {
            unit = 60e9;
            end++;
        } else if (*end == 'h') {
            unit = 3600e9;
            end++;
        } else if (*end == 'd') {
            unit = 86400e9;
            end++;
        } else if (*end) {
            return SIM_ERR;
        }
        total += x * unit;
        p = end;
    }
    if (total >= 1.8e19) return SIM_ERR;
    *ns = (uint64_t)llround(total);
    return SIM_OK;
}

const char *sim_format_double(double v, char *buf, size_t len)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, len, "%.*g", digits, v);
        if (!isfinite(v) || strtod(buf, NULL) == v) break;
    }
    return buf;
}

const char *sim_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
    return buf;
}

const sim_opt *sim_opts_find(const sim_opt *opts, const char *name)
{
    for (const sim_opt *o = opts; o->name; o++)
        if (!strcmp(o->name, name)) return o;
    return NULL;
}

void sim_opts_append(sim_opt *opts, size_t n, size_t *at, const sim_opt *part, size_t count)
{
    assert(*at + count <= n); /* the caller's table is sized for every piece */
    (void)n;
    memcpy(opts + *at, part, count * sizeof *part);
    *at += count;
}

const char *sim_opt_value_hint(const sim_opt *o)
{
    if (o->metavar) return o->metavar;
    switch (o->kind) {
    case SIM_OPT_FLAG:
        return "";
    case SIM_OPT_U64:
        return "N";
    case SIM_OPT_DOUBLE:
        return "X";
    case SIM_OPT_SIZE:
        return "SIZE";
    case SIM_OPT_DURATION:
        return "TIME";
    case SIM_OPT_STRING:
        return "STR";
    case SIM_OPT_CHOICE:
        return o->choices;
    case SIM_OPT_WARMUP:
        return "TIME|steady";
    }
    return "";
}

static bool in_choices(const char *choices, const char *v)
{
    if (!v) return false;
    size_t n = strlen(v);
    for (const char *p = choices; p && *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, v, n)) return true;
        p = bar ? bar + 1 : NULL;
    }
    return false;
}

static int bad_value(const char *cmd, const sim_opt *o, const char *v, const char *what)
{
    sim_error("%s: invalid value '%s' for --%s: %s; see `appsim %s --help`", cmd, v, o->name, what,
              cmd);
    return SIM_EXIT_USAGE;
}

static int range_error(const char *cmd, const sim_opt *o, const char *v)
{
    char lim[128];
    if (o->max > 0)
        snprintf(lim, sizeof lim, "expected %g to %g", o->min, o->max);
    else
        snprintf(lim, sizeof lim, "expected at least %g", o->min);
    return bad_value(cmd, o, v, lim);
}

static int set_value(const char *cmd, sim_opt *o, const char *v)
{
    v = sim_ranks_expand(v); /* {rank} and {host}, for jobs of many ranks: docs/mpi.md */
    switch (o->kind) {
    case SIM_OPT_FLAG:
        *(bool *)o->dst = true;
        return SIM_EXIT_OK;
    case SIM_OPT_U64: {
        uint64_t x;
        if (sim_parse_u64(v, &x)) return bad_value(cmd, o, v, "expected a whole number");
        if ((double)x < o->min || (o->max > 0 && (double)x > o->max)) return range_error(cmd, o, v);
        *(uint64_t *)o->dst = x;
        return SIM_EXIT_OK;
    }
    case SIM_OPT_DOUBLE: {
        double x;
        if (sim_parse_double(v, &x)) return bad_value(cmd, o, v, "expected a number");
        if (x < o->min || (o->max > 0 && x > o->max)) return range_error(cmd, o, v);
        *(double *)o->dst = x;
        return SIM_EXIT_OK;
    }
    case SIM_OPT_SIZE: {
        uint64_t x;
        if (sim_parse_size(v, &x))
            return bad_value(cmd, o, v, "expected a decimal size such as 4096, 64K, 512M, 24G");
        if ((double)x < o->min || (o->max > 0 && (double)x > o->max)) return range_error(cmd, o, v);
        *(uint64_t *)o->dst = x;
        return SIM_EXIT_OK;
    }
    case SIM_OPT_WARMUP:
        if (!strcmp(v, "steady")) {
            *(uint64_t *)o->dst = SIM_WARMUP_STEADY;
            return SIM_EXIT_OK;
        }
        /* fall through */
    case SIM_OPT_DURATION: {
        uint64_t x;
        if (sim_parse_duration(v, &x))
            return bad_value(cmd, o, v,
                             o->kind == SIM_OPT_WARMUP
                                 ? "expected \"steady\" or a duration such as 30, 10s, 30m, 2h"
                                 : "expected a duration such as 30, 500ms, 10s, 30m, 2h");
        double secs = (double)x / 1e9;
        if (secs < o->min || (o->max > 0 && secs > o->max)) return range_error(cmd, o, v);
        *(uint64_t *)o->dst = x;
        return SIM_EXIT_OK;
    }
    case SIM_OPT_STRING:
        if (!*v) return bad_value(cmd, o, v, "expected a non-empty value");
        *(const char **)o->dst = v;
        return SIM_EXIT_OK;
    case SIM_OPT_CHOICE:
        if (!in_choices(o->choices, v)) {
            char what[256];
            snprintf(what, sizeof what, "expected one of %s", o->choices);
            return bad_value(cmd, o, v, what);
        }
        *(const char **)o->dst = v;
        return SIM_EXIT_OK;
    }
    return SIM_EXIT_USAGE;
}

static sim_opts_describer describer;
static bool check_only;

void sim_opts_set_check_only(bool on)
{
    check_only = on;
}
static void *describer_ctx;

void sim_opts_set_describer(sim_opts_describer fn, void *ctx)
{
    describer = fn;
    describer_ctx = ctx;
}

const char *sim_alias_next(const char *p, sim_alias *a)
{
    if (!p || !*p) return NULL;
    size_t len = strcspn(p, "|");
    const char *colon = memchr(p, ':', len), *eq = memchr(p, '=', len);
    a->peer = p;
    a->peer_len = colon ? (size_t)(colon - p) : 0;
    a->name = colon ? colon + 1 : p;
    a->name_len = (size_t)((eq ? eq : p + len) - a->name);
    a->flag_value = eq ? eq[1] == '1' : -1;
    return p + len + (p[len] == '|');
}

static bool alias_is(const sim_alias *a, const char *name)
{
    return strlen(name) == a->name_len && !strncmp(a->name, name, a->name_len);
}

/* How the option was named on the command line. */
typedef struct named {
    sim_opt *opt;
    sim_alias alias; /* valid when by_alias */
    bool by_alias;
} named;

/* The option called `name`: by its name, an alias or (noted on stderr) an old
 * spelling. */
static bool lookup(const char *cmd, sim_opt *opts, const char *name, named *out)
{
    *out = (named){0};
    for (sim_opt *o = opts; o->name; o++) {
        if (!strcmp(o->name, name)) {
            out->opt = o;
            return true;
        }
        sim_alias a;
        for (const char *p = sim_alias_next(o->aliases, &a); p; p = sim_alias_next(p, &a))
            if (alias_is(&a, name)) {
                *out = (named){.opt = o, .alias = a, .by_alias = true};
                return true;
            }
    }
    if (strchr(name, '_')) { /* sysbench's table_size is its table-size: so here */
        char dashed[64];
        snprintf(dashed, sizeof dashed, "%s", name);
        for (char *p = dashed; *p; p++)
            if (*p == '_') *p = '-';
        if (lookup(cmd, opts, dashed, out)) {
            if (!out->by_alias) sim_note("%s: --%s is read as --%s", cmd, name, dashed);
            return true;
        }
    }
    for (sim_opt *o = opts; o->name; o++)
        if (in_choices(o->deprecated, name)) {
            sim_warn("%s: %s%s is an old spelling of --%s; please use --%s", cmd,
                     name[1] ? "--" : "-", name, o->name, o->name);
            out->opt = o;
            return true;
        }
    return false;
}

/* Every name and alias of the table, for "did you mean"; into names[0..max). */
static size_t table_names(const sim_opt *opts, char (*names)[64], size_t max)
{
    size_t n = 0;
    for (const sim_opt *o = opts; o->name && n < max; o++) {
        snprintf(names[n++], sizeof names[0], "%s", o->name);
        sim_alias a;
        for (const char *p = sim_alias_next(o->aliases, &a); p && n < max;
             p = sim_alias_next(p, &a))
            snprintf(names[n++], sizeof names[0], "%.*s", (int)a.name_len, a.name);
    }
    return n;
}

static int unknown_option(const char *cmd, const sim_opt *opts, const char *arg, const char *name)
{
    const char *why = sim_peer_refusal(cmd, name);
    if (why) {
        sim_error("%s: %s has no meaning in appsim: %s", cmd, arg, why);
        return SIM_EXIT_USAGE;
    }
    char names[256][64];
    const char *list[256];
    size_t n = table_names(opts, names, 256);
    for (size_t i = 0; i < n; i++)
        list[i] = names[i];
    const char *near = strlen(name) > 1 ? sim_suggest(name, list, n) : NULL;
    if (near)
        sim_error("%s: unknown option '%s'; did you mean --%s? (`appsim %s --help` lists the "
                  "options)",
                  cmd, arg, near, cmd);
    else
        sim_error("%s: unknown option '%s'; see `appsim %s --help`", cmd, arg, cmd);
    return SIM_EXIT_USAGE;
}

/* A peer's name for a flag that takes 0 or 1 (fio's --direct=1): the value it means for
 * the flag; noted. SIM_EXIT_USAGE on another value. */
static int peer_flag_value(const char *cmd, const named *nm, const char *value, bool *set)
{
    const sim_alias *a = &nm->alias;
    if (value && strcmp(value, "0") && strcmp(value, "1")) {
        sim_error("%s: --%.*s takes 0 or 1 (%.*s's meaning), not '%s'", cmd, (int)a->name_len,
                  a->name, (int)a->peer_len, a->peer, value);
        return SIM_EXIT_USAGE;
    }
    int v = value ? value[0] == '1' : 1;
    *set = v == a->flag_value;
    if (*set)
        sim_note("%s: --%.*s=%d is %.*s's name for --%s", cmd, (int)a->name_len, a->name, v,
                 (int)a->peer_len, a->peer, nm->opt->name);
    else
        sim_note("%s: --%.*s=%d is %.*s's name for appsim's default (no --%s)", cmd,
                 (int)a->name_len, a->name, v, (int)a->peer_len, a->peer, nm->opt->name);
    return SIM_EXIT_OK;
}

/* The long name (to its '=') and the value after it, or a one-letter name. */
static int split_arg(const char *cmd, const char *a, char *name, size_t len, const char **value)
{
    *value = NULL;
    if (a[1] == '-') {
        const char *eq = strchr(a + 2, '=');
        size_t n = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
        if (n >= len) n = len - 1;
        memcpy(name, a + 2, n);
        name[n] = 0;
        if (eq) *value = eq + 1;
        return SIM_EXIT_OK;
    }
    if (a[2]) { /* -xVALUE is not accepted: ambiguous with typos */
        sim_error("%s: unknown option '%s'; see `appsim %s --help`", cmd, a, cmd);
        return SIM_EXIT_USAGE;
    }
    name[0] = a[1];
    name[1] = 0;
    return SIM_EXIT_OK;
}

/* The value of option nm given as argv[*i] (maybe with "=value"); advances *i past a
 * separate value. *value NULL: a flag. */
static int take_value(const char *cmd, const named *nm, int argc, char **argv, int *i,
                      const char **value)
{
    sim_opt *o = nm->opt;
    if (o->kind == SIM_OPT_FLAG) {
        if (*value) {
            sim_error("%s: --%s takes no value", cmd, o->name);
            return SIM_EXIT_USAGE;
        }
    } else if (!*value && o->bare_value &&
               (*i + 1 >= argc || (argv[*i + 1][0] == '-' && argv[*i + 1][1]))) {
        *value = o->bare_value;
        sim_warn("%s: --%s without a value is an old form; please write --%s %s", cmd, o->name,
                 o->name, *value);
    } else if (!*value) {
        if (*i + 1 >= argc) {
            sim_error("%s: --%s needs a value (%s); see `appsim %s --help`", cmd, o->name,
                      sim_opt_value_hint(o), cmd);
            return SIM_EXIT_USAGE;
        }
        *value = argv[++*i];
    }
    return SIM_EXIT_OK;
}

/* "--runtime" of "--runtime=30". */
static size_t spelling_len(const char *arg)
{
    return strcspn(arg, "=");
}

static bool same_spelling(const char *a, const char *b)
{
    size_t n = spelling_len(a);
    return n == spelling_len(b) && !strncmp(a, b, n);
}

/* One option argument argv[*i]: found, its value taken and set. */
static int parse_option(const char *cmd, sim_opt *opts, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    char name[64];
    const char *value;
    int rc = split_arg(cmd, a, name, sizeof name, &value);
    if (rc) return rc;
    named nm;
    if (!lookup(cmd, opts, name, &nm)) return unknown_option(cmd, opts, a, name);
    sim_opt *o = nm.opt;
    if (o->given_as && !same_spelling(o->given_as, a)) {
        sim_error("%s: %.*s and %.*s say the same thing (--%s); give one", cmd,
                  (int)spelling_len(o->given_as), o->given_as, (int)spelling_len(a), a, o->name);
        return SIM_EXIT_USAGE;
    }
    o->given_as = a;
    if (nm.by_alias && nm.alias.flag_value >= 0) {
        bool set;
        if ((rc = peer_flag_value(cmd, &nm, value, &set))) return rc;
        *(bool *)o->dst = set;
        o->set = true;
        return SIM_EXIT_OK;
    }
    if (nm.by_alias && nm.alias.peer_len)
        sim_note("%s: --%s is %.*s's name for --%s", cmd, name, (int)nm.alias.peer_len,
                 nm.alias.peer, o->name);
    if ((rc = take_value(cmd, &nm, argc, argv, i, &value))) return rc;
    if ((rc = set_value(cmd, o, value))) return rc;
    o->set = true;
    return SIM_EXIT_OK;
}

int sim_opts_parse(const char *cmd, sim_opt *opts, int argc, char **argv, char **positional,
                   int max_positional, int *npositional, const char *usage)
{
    if (describer) { /* the table is wanted, not the command: as after --help */
        describer(describer_ctx, cmd, usage, opts);
        return SIM_OPTS_HELP_SHOWN;
    }
    int npos = 0;
    bool only_positional = false;
    for (sim_opt *o = opts; o->name; o++)
        o->given_as = NULL; /* this command line's spellings only */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_positional && !strcmp(a, "--")) {
            only_positional = true;
            continue;
        }
        if (only_positional || a[0] != '-' || !a[1]) {
            if (npos >= max_positional) {
                sim_error("%s: unexpected argument '%s'; see `appsim %s --help`", cmd, a, cmd);
                return SIM_EXIT_USAGE;
            }
            positional[npos++] = (char *)sim_ranks_expand(argv[i]);
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            sim_opts_help(stdout, cmd, usage, opts);
            return SIM_OPTS_HELP_SHOWN;
        }
        int rc = parse_option(cmd, opts, argc, argv, &i);
        if (rc) return rc;
    }
    if (npositional) *npositional = npos;
    const sim_opt *ri = sim_opts_find(opts, "report-interval");
    if (ri && ri->kind == SIM_OPT_DURATION && *(uint64_t *)ri->dst &&
        *(uint64_t *)ri->dst < SIM_REPORT_INTERVAL_MIN_NS) {
        sim_error("%s: --report-interval %gs is too short: give at least 10ms, or 0 for no "
                  "interval lines",
                  cmd, (double)*(uint64_t *)ri->dst / 1e9);
        return SIM_EXIT_USAGE;
    }
    if (check_only) return SIM_OPTS_HELP_SHOWN;
    int rc = sim_output_check(cmd, opts, positional, npos);
    if (rc) return rc;
    const sim_opt *json = sim_opts_find(opts, "json");
    if (json && json->kind == SIM_OPT_STRING && sim_json_on_stdout(*(const char **)json->dst))
        sim_json_claim_stdout();
    return SIM_EXIT_OK;
}

void sim_opt_default_text(const sim_opt *o, char *buf, size_t len)
{
    buf[0] = 0;
    switch (o->kind) {
    case SIM_OPT_FLAG:
        break;
    case SIM_OPT_U64:
        snprintf(buf, len, "%llu", (unsigned long long)*(uint64_t *)o->dst);
        break;
    case SIM_OPT_DOUBLE:
        snprintf(buf, len, "%g", *(double *)o->dst);
        break;
    case SIM_OPT_SIZE:
        sim_format_size(*(uint64_t *)o->dst, buf, len);
        break;
    case SIM_OPT_WARMUP:
        if (*(uint64_t *)o->dst == SIM_WARMUP_STEADY) {
            snprintf(buf, len, "steady");
            break;
        }
        /* fall through */
    case SIM_OPT_DURATION:
        snprintf(buf, len, "%gs", (double)*(uint64_t *)o->dst / 1e9);
        break;
    case SIM_OPT_STRING:
    case SIM_OPT_CHOICE:
        if (*(const char **)o->dst) snprintf(buf, len, "%s", *(const char **)o->dst);
        break;
    }
}

/* " (also --time, fio's --runtime)" */
static void print_aliases(FILE *out, const sim_opt *o)
{
    sim_alias a;
    const char *sep = " (also ";
    for (const char *p = sim_alias_next(o->aliases, &a); p; p = sim_alias_next(p, &a)) {
        fputs(sep, out);
        if (a.peer_len) fprintf(out, "%.*s's ", (int)a.peer_len, a.peer);
        fprintf(out, "%s%.*s", a.name_len > 1 ? "--" : "-", (int)a.name_len, a.name);
        if (a.flag_value >= 0) fprintf(out, "=%d", a.flag_value);
        sep = ", ";
    }
    if (o->aliases && *o->aliases) fputc(')', out);
}

void sim_opts_help(FILE *out, const char *cmd, const char *usage, const sim_opt *opts)
{
    if (usage)
        fprintf(out, "%s\n\noptions:\n", usage);
    else
        fprintf(out, "usage: appsim %s [options]\n\noptions:\n", cmd);
    for (const sim_opt *o = opts; o->name; o++) {
        char lhs[160], def[96];
        const char *dash = o->name[1] ? "--" : "-";
        if (o->kind == SIM_OPT_FLAG)
            snprintf(lhs, sizeof lhs, "%s%s", dash, o->name);
        else
            snprintf(lhs, sizeof lhs, "%s%s %s", dash, o->name, sim_opt_value_hint(o));
        sim_opt_default_text(o, def, sizeof def);
        const char *help = o->help ? o->help : "";
        fprintf(out, "  %-28s %s", lhs, help);
        print_aliases(out, o);
        /* A help text that states its default in words ("default: all") keeps it. */
        if (def[0] && !strstr(help, "default")) fprintf(out, " (default: %s)", def);
        fputc('\n', out);
    }
    fprintf(out, "  %-28s %s\n", "--help", "show this help");
}

json_t *sim_opts_to_json(const sim_opt *opts)
{
    json_t *j = json_object();
    for (const sim_opt *o = opts; o->name; o++) {
        json_t *v = NULL;
        switch (o->kind) {
        case SIM_OPT_FLAG:
            v = json_boolean(*(bool *)o->dst);
            break;
        case SIM_OPT_U64:
        case SIM_OPT_SIZE:
            v = json_integer((json_int_t) * (uint64_t *)o->dst);
            break;
        case SIM_OPT_DOUBLE:
            v = json_real(*(double *)o->dst);
            break;
        case SIM_OPT_WARMUP:
            if (*(uint64_t *)o->dst == SIM_WARMUP_STEADY) {
                v = json_string("steady");
                break;
            }
            /* fall through */
        case SIM_OPT_DURATION:
            v = json_real((double)*(uint64_t *)o->dst / 1e9);
            break;
        case SIM_OPT_STRING:
        case SIM_OPT_CHOICE: {
            const char *s = *(const char **)o->dst;
            v = s ? json_string(s) : json_null();
            break;
        }
        }
        json_object_set_new(j, o->name, v ? v : json_null());
    }
    return j;
}

int sim_steady_opts_check(const char *cmd, const sim_opt *opts, uint64_t warmup)
{
    if (warmup == SIM_WARMUP_STEADY) return SIM_EXIT_OK;
    static const char *const names[] = {"steady-round", "steady-max-rounds"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const sim_opt *o = sim_opts_find(opts, names[i]);
        if (o && o->set) {
            sim_error("%s: --%s applies only with --warmup steady; add --warmup steady or drop "
                      "--%s",
                      cmd, names[i], names[i]);
            return SIM_EXIT_USAGE;
        }
    }
    return SIM_EXIT_OK;
}

const char *sim_warmup_text(uint64_t warmup, char *buf, size_t len)
{
    if (warmup == SIM_WARMUP_STEADY)
        snprintf(buf, len, "steady-state");
    else
        snprintf(buf, len, "%.0f s", (double)warmup / 1e9);
    return buf;
}
