/*
 * sim/review/compare.c: `appsim compare RESULT.json...`: tables of the results per workload and
 * configuration, drives as columns, best marked, rank. The model is built in
 * compare_group.c; this file is the command line.
 */
#include "sim/review/review_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 512

static const char usage_text[] =
    "appsim compare RESULT.json|DIR... [--format text|markdown|csv|json] [--label A,B,...]\n"
    "               [-o FILE] [--ranks]\n"
    "Compares result files (a directory stands for its *.json files, e.g. a suite's\n"
    "output; suite.json is skipped): one table per workload and configuration, metrics as rows,\n"
    "drives as columns (best marked with *, others as % of the best), and a rank.\n"
    "Runs of the same drive and configuration are combined (histograms merged; the\n"
    "run-to-run range is shown as [min-max]). Results whose configurations differ in\n"
    "what matters (scale, users, buffer, trace...) are not ranked together; the table\n"
    "says why. With --ranks, the ranks of an MPI job's result are the columns.";

/* Splits "a,b,c" into labels (the strings point into a copy owned by *store). */
int cmp_split_labels(const char *list, char ***labels, char **store)
{
    *labels = NULL;
    *store = NULL;
    if (!list || !*list) return 0;
    *store = sim_xstrdup(list);
    int n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    *labels = sim_xcalloc((size_t)n, sizeof **labels);
    int k = 0;
    for (char *tok = *store, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = 0;
        (*labels)[k++] = tok;
    }
    return k;
}

int cmp_build_labeled(cmp_set *set, const char *command, char **files, int nfiles,
                      const char *label, bool ranks, cmp_series series)
{
    char **labels, *store;
    int nlabels = cmp_split_labels(label, &labels, &store);
    if (label && nlabels != nfiles) {
        sim_error(
            "%s: --label has %d labels for %d inputs; give one label per file or directory, in the "
            "order of the files (repeat a label for runs of the same drive)",
            command, nlabels, nfiles);
        free(labels);
        free(store);
        return SIM_EXIT_USAGE;
    }
    char err[1024];
    cmp_inputs in;
    int rc = cmp_inputs_expand(&in, files, nfiles, labels, nlabels, err, sizeof err);
    if (!rc)
        rc = cmp_build_ranks(set, in.files, in.n, (char **)in.labels, label ? in.n : 0, ranks,
                             series, err, sizeof err);
    cmp_inputs_free(&in);
    free(labels);
    free(store);
    if (rc) {
        sim_error("%s: %s", command, err);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

static int compare_main(int argc, char **argv)
{
    const char *format = "text", *label = NULL, *output = NULL;
    bool ranks = false;
    sim_opt opts[] = {
        {.name = "format",
         .kind = SIM_OPT_CHOICE,
         .dst = &format,
         .help = "output format",
         .choices = "text|markdown|csv|json"},
        {.name = "label",
         .kind = SIM_OPT_STRING,
         .dst = &label,
         .help = "comma-separated column labels, one per file or directory in order (default: "
                 "the drive model or path from the result); files with the same label are "
                 "runs of one drive"},
        {.name = "output",
         .kind = SIM_OPT_STRING,
         .dst = &output,
         .output = SIM_OUTPUT_REPLACE,
         .help = "write to FILE instead of standard output (-o)"},
        {.name = "ranks",
         .kind = SIM_OPT_FLAG,
         .dst = &ranks,
         .help = "show the ranks of each MPI job's result as drives: one column per rank, "
                 "labelled by rank, host and target (docs/mpi.md)"},
        SIM_OPT_END,
    };
    char *files[MAX_FILES];
    int nfiles = 0;
    char **av = cmp_argv_short_o(argc, argv);
    int rc = sim_opts_parse("compare", opts, argc, av, files, MAX_FILES, &nfiles, usage_text);
    free(av);
    if (rc == SIM_OPTS_HELP_SHOWN) return SIM_EXIT_OK;
    if (rc) return SIM_EXIT_USAGE;
    if (nfiles == 0) {
        sim_error("compare: give one or more result files (written by --json); see "
                  "`appsim compare --help`");
        return SIM_EXIT_USAGE;
    }
    cmp_format f;
    if (cmp_format_parse(format, &f)) {
        sim_error("compare: --format %s is not one of text|markdown|csv|json", format);
        return SIM_EXIT_USAGE;
    }
    cmp_set set;
    /* compare reads no series: a result's size is mostly its series */
    rc = cmp_build_labeled(&set, "compare", files, nfiles, label, ranks, CMP_SERIES_SKIP);
    if (rc) return rc;
    /* --output is replaced whole (never written through a link that stands there). */
    char *text = NULL;
    size_t len = 0;
    FILE *out = output && !sim_json_on_stdout(output) ? open_memstream(&text, &len) : stdout;
    if (!out) {
        sim_error("compare: out of memory");
        cmp_set_free(&set);
        return SIM_EXIT_FAIL;
    }
    cmp_print(out, &set, f);
    for (int i = 0; i < set.ngroups; i++)
        if (set.groups[i].note)
            sim_warn("table %d (%s): %s", i + 1, set.groups[i].workload, set.groups[i].note);
    int status = SIM_EXIT_OK;
    if (out != stdout) {
        int e = fclose(out) ? errno : sim_atomic_write(output, text, len);
        if (e) {
            sim_error("compare: writing %s failed: %s", output, strerror(e));
            status = SIM_EXIT_FAIL;
        }
        free(text);
    }
    cmp_set_free(&set);
    return status;
}

static const sim_command compare_command = {
    .name = "compare",
    .summary = "compare result files: tables per workload, drives ranked",
    .main = compare_main,
};
SIM_REGISTER_COMMAND(compare_command)
