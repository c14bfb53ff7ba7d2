/*
 * sim/review/compare_inputs.c: the result files named on a compare/report command line.
 * A directory stands for every *.json file in it (a suite's output directory, say), in
 * name order; its suite.json is skipped later by its schema, like any suite state file.
 */
#include "sim/review/review_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_json_name(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && !strcmp(d->d_name + n - 5, ".json") && d->d_name[0] != '.';
}

static int json_filter(const struct dirent *d)
{
    return is_json_name(d);
}

static void push(cmp_inputs *in, char *file, const char *label)
{
    if (in->n == in->cap) {
        in->cap = in->cap ? in->cap * 2 : 16;
        in->files = sim_xrealloc(in->files, (size_t)in->cap * sizeof *in->files);
        in->labels = sim_xrealloc(in->labels, (size_t)in->cap * sizeof *in->labels);
    }
    in->files[in->n] = file;
    in->labels[in->n] = label;
    in->n++;
}

static int add_dir(cmp_inputs *in, const char *dir, const char *label, char *err, size_t errlen)
{
    struct dirent **list;
    int n = scandir(dir, &list, json_filter, alphasort);
    if (n < 0) {
        snprintf(err, errlen, "%s: cannot list the directory: %s", dir, strerror(errno));
        return SIM_ERR;
    }
    int added = 0;
    for (int i = 0; i < n; i++) {
        char *path = sim_xasprintf("%s/%s", dir, list[i]->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            push(in, path, label);
            added++;
        } else {
            free(path);
        }
        free(list[i]);
    }
    free(list);
    if (!added) {
        snprintf(err, errlen, "%s: a directory without result files (*.json)", dir);
        return SIM_ERR;
    }
    return SIM_OK;
}

int cmp_inputs_expand(cmp_inputs *in, char **args, int nargs, char **labels, int nlabels, char *err,
                      size_t errlen)
{
    memset(in, 0, sizeof *in);
    for (int i = 0; i < nargs; i++) {
        const char *label = i < nlabels ? labels[i] : NULL;
        struct stat st;
        if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if (add_dir(in, args[i], label, err, errlen)) {
                cmp_inputs_free(in);
                return SIM_ERR;
            }
        } else {
            push(in, sim_xstrdup(args[i]), label);
        }
    }
    return SIM_OK;
}

void cmp_inputs_free(cmp_inputs *in)
{
    for (int i = 0; i < in->n; i++)
        free(in->files[i]);
    free(in->files);
    free(in->labels);
    memset(in, 0, sizeof *in);
}
