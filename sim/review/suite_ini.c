/*
 * sim/review/suite_ini.c: the suite file parser (INI, one section per step), shell-like word
 * splitting of a step's arguments, and placeholder expansion. See suite_internal.h for
 * the format. Everything unknown is an error with the file and line, never ignored.
 */
#include "sim/review/suite_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *const suite_sizes[3] = {"small", "medium", "full"};

int suite_size_index(const char *size)
{
    for (int i = 0; i < 3; i++)
        if (size && !strcmp(size, suite_sizes[i])) return i;
    return -1;
}

void suite_def_free(suite_def *d)
{
    for (int i = 0; i < d->nsteps; i++) {
        suite_step *s = &d->steps[i];
        free(s->name);
        free(s->command);
        free(s->description);
        free(s->args);
        for (int k = 0; k < 3; k++)
            free(s->size_args[k]);
        free(s->estimate);
        for (int k = 0; k < 3; k++)
            free(s->size_estimate[k]);
    }
    free(d->steps);
    free(d->name);
    free(d->description);
    memset(d, 0, sizeof *d);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

static bool valid_name(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.') return false;
    return true;
}

static int perr(char *err, size_t errlen, const char *origin, int line, const char *what,
                const char *detail)
{
    snprintf(err, errlen, "%s:%d: %s%s%s", origin, line, what, detail ? ": " : "",
             detail ? detail : "");
    return SIM_ERR;
}

/* Sets *slot to value, refusing a second definition of the same key. */
static int set_once(char **slot, const char *value, char *err, size_t errlen, const char *origin,
                    int line, const char *key)
{
    if (*slot) return perr(err, errlen, origin, line, "key given twice in this section", key);
    *slot = sim_xstrdup(value);
    return SIM_OK;
}

static int step_key(suite_step *s, const char *key, const char *value, char *err, size_t errlen,
                    const char *origin, int line)
{
    if (!strcmp(key, "command"))
        return set_once(&s->command, value, err, errlen, origin, line, key);
    if (!strcmp(key, "args")) return set_once(&s->args, value, err, errlen, origin, line, key);
    if (!strcmp(key, "description"))
        return set_once(&s->description, value, err, errlen, origin, line, key);
    if (!strcmp(key, "estimate")) {
        uint64_t ns;
        if (sim_parse_duration(value, &ns))
            return perr(err, errlen, origin, line, "estimate is not a duration (e.g. 90s, 20m, 3h)",
                        value);
        return set_once(&s->estimate, value, err, errlen, origin, line, key);
    }
    if (!strncmp(key, "estimate.", 9)) {
        int k = suite_size_index(key + 9);
        uint64_t ns;
        if (k < 0)
            return perr(err, errlen, origin, line,
                        "unknown size (estimate.small, estimate.medium or estimate.full)", key);
        if (sim_parse_duration(value, &ns))
            return perr(err, errlen, origin, line, "estimate is not a duration (e.g. 90s, 20m, 3h)",
                        value);
        return set_once(&s->size_estimate[k], value, err, errlen, origin, line, key);
    }
    if (!strncmp(key, "args.", 5)) {
        int k = suite_size_index(key + 5);
        if (k < 0)
            return perr(err, errlen, origin, line,
                        "unknown size (args.small, args.medium or args.full)", key);
        return set_once(&s->size_args[k], value, err, errlen, origin, line, key);
    }
    return perr(err, errlen, origin, line,
                "unknown key in a step (command, args, args.small|medium|full, description, "
                "estimate, estimate.small|medium|full)",
                key);
}

int suite_parse(const char *text, const char *origin, suite_def *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *copy = sim_xstrdup(text);
    int lineno = 0, rc = 0;
    enum { NONE, HEADER, STEP } where = NONE;
    suite_step *cur = NULL;
    for (char *line = copy, *next; line && !rc; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#' || *s == ';') continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (!end || trim(end + 1)[0])
                rc = perr(err, errlen, origin, lineno, "malformed section header", s);
            else {
                *end = 0;
                char *name = trim(s + 1);
                if (!strcmp(name, "suite")) {
                    if (out->nsteps)
                        rc = perr(err, errlen, origin, lineno, "[suite] must come before the steps",
                                  NULL);
                    where = HEADER;
                    cur = NULL;
                    continue;
                }
                if (!valid_name(name)) {
                    rc = perr(err, errlen, origin, lineno,
                              "a step name may hold letters, digits, '-', '_' and '.'", name);
                    continue;
                }
                for (int i = 0; i < out->nsteps; i++)
                    if (!strcmp(out->steps[i].name, name))
                        rc = perr(err, errlen, origin, lineno, "step defined twice", name);
                if (rc) continue;
                out->steps =
                    sim_xrealloc(out->steps, (size_t)(out->nsteps + 1) * sizeof *out->steps);
                cur = &out->steps[out->nsteps++];
                memset(cur, 0, sizeof *cur);
                cur->name = sim_xstrdup(name);
                cur->line = lineno;
                where = STEP;
            }
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
            rc = perr(err, errlen, origin, lineno, "expected key = value", s);
            continue;
        }
        *eq = 0;
        char *key = trim(s), *value = trim(eq + 1);
        if (where == NONE) {
            rc = perr(err, errlen, origin, lineno, "key outside a section", key);
        } else if (where == HEADER) {
            if (!strcmp(key, "name"))
                rc = set_once(&out->name, value, err, errlen, origin, lineno, key);
            else if (!strcmp(key, "description"))
                rc = set_once(&out->description, value, err, errlen, origin, lineno, key);
            else
                rc = perr(err, errlen, origin, lineno, "unknown key in [suite] (name, description)",
                          key);
        } else {
            rc = step_key(cur, key, value, err, errlen, origin, lineno);
        }
    }
    free(copy);
    if (!rc && out->nsteps == 0)
        rc = perr(err, errlen, origin, lineno, "the suite has no steps", NULL);
    for (int i = 0; !rc && i < out->nsteps; i++) {
        suite_step *st = &out->steps[i];
        if (!st->command)
            rc = perr(err, errlen, origin, st->line, "step has no 'command ='", st->name);
    }
    if (rc) suite_def_free(out);
    return rc;
}

void suite_free_words(char **argv, int argc)
{
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}

int suite_split_words(const char *s, char ***argv, int *argc, char *err, size_t errlen)
{
    int n = 0, cap = 8;
    char **v = sim_xmalloc((size_t)cap * sizeof *v);
    size_t len = strlen(s);
    char *word = sim_xmalloc(len + 1);
    const char *p = s;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p) break;
        size_t k = 0;
        char quote = 0;
        for (; *p && (quote || !isspace((unsigned char)*p)); p++) {
            if (quote) {
                if (*p == quote)
                    quote = 0;
                else if (*p == '\\' && quote == '"' && p[1])
                    word[k++] = *++p;
                else
                    word[k++] = *p;
            } else if (*p == '\'' || *p == '"') {
                quote = *p;
            } else if (*p == '\\' && p[1]) {
                word[k++] = *++p;
            } else {
                word[k++] = *p;
            }
        }
        if (quote) {
            snprintf(err, errlen, "unbalanced %c quote in: %s", quote, s);
            free(word);
            suite_free_words(v, n);
            return SIM_ERR;
        }
        word[k] = 0;
        if (n + 1 >= cap) {
            cap *= 2;
            v = sim_xrealloc(v, (size_t)cap * sizeof *v);
        }
        v[n++] = sim_xstrdup(word);
    }
    free(word);
    v[n] = NULL;
    *argv = v;
    *argc = n;
    return SIM_OK;
}

bool suite_uses(const char *word, const char *name)
{
    char pat[64];
    snprintf(pat, sizeof pat, "{%s}", name);
    return strstr(word, pat) != NULL;
}

char *suite_expand(const char *word, const suite_vars *v, char *err, size_t errlen)
{
    size_t cap = strlen(word) + 256, k = 0;
    char *out = sim_xmalloc(cap);
    for (const char *p = word; *p;) {
        const char *val = NULL;
        size_t skip = 0;
        if (*p == '{') {
            const char *end = strchr(p, '}');
            if (!end) {
                snprintf(err, errlen, "unclosed '{' in %s", word);
                free(out);
                return NULL;
            }
            size_t n = (size_t)(end - p - 1);
            static const char *const names[] = {"target", "result", "dir", "size", "trace"};
            const char *vals[] = {v->target, v->result, v->dir, v->size, v->trace};
            bool known = false;
            for (int i = 0; i < 5; i++)
                if (strlen(names[i]) == n && !strncmp(p + 1, names[i], n)) {
                    known = true;
                    val = vals[i];
                    if (!val) {
                        snprintf(err, errlen, "{%s} has no value (give --%s)", names[i], names[i]);
                        free(out);
                        return NULL;
                    }
                }
            if (!known) {
                snprintf(err, errlen,
                         "unknown placeholder %.*s (known: {target} {result} {dir} {size} "
                         "{trace})",
                         (int)(n + 2), p);
                free(out);
                return NULL;
            }
            skip = n + 2;
        }
        size_t add = val ? strlen(val) : 1;
        if (k + add + 1 > cap) {
            cap = (k + add + 1) * 2;
            out = sim_xrealloc(out, cap);
        }
        if (val) {
            memcpy(out + k, val, add);
            k += add;
            p += skip;
        } else {
            out[k++] = *p++;
        }
    }
    out[k] = 0;
    return out;
}
