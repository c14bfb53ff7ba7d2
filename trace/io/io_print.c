/*
 * trace/io/io_print.c: the text summary of `appsim io`: per job its definition, the
 * approximation note of a database profile, and the curve as vdbench prints it (one
 * line per point, reads and writes apart), with the peak as vdbench reports it.
 */
#include "trace/io/io_internal.h"

static double num(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static void print_dir(FILE *out, const json_t *d)
{
    if (json_integer_value(json_object_get(d, "count")) == 0) {
        fprintf(out, " | %9s %8s %8s %8s %9s", "-", "-", "-", "-", "-");
        return;
    }
    fprintf(out, " | %9.0f %8.1f %8.1f %8.1f %9.1f", num(d, "iops"), num(d, "mean_us"),
            num(d, "p50_us"), num(d, "p99_us"), num(d, "p999_us"));
}

static void print_curve(FILE *out, const json_t *curve)
{
    fprintf(out, "  %6s %9s %9s %8s | %9s %8s %8s %8s %9s | %9s %8s %8s %8s %9s\n", "point",
            "target", "IOPS", "MB/s", "read IOPS", "mean us", "p50 us", "p99 us", "p99.9 us",
            "writeIOPS", "mean us", "p50 us", "p99 us", "p99.9 us");
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(curve, "points"), i, p)
    {
        char label[16];
        if (i == 0)
            snprintf(label, sizeof label, "max");
        else
            snprintf(label, sizeof label, "%.0f%%", num(p, "fraction") * 100);
        fprintf(out, "  %6s %9.0f %9.0f %8.1f", label, num(p, "target_iops"), num(p, "iops"),
                num(p, "mbps"));
        print_dir(out, json_object_get(p, "read"));
        print_dir(out, json_object_get(p, "write"));
        if (json_is_true(json_object_get(p, "saturated")))
            fprintf(out, "  queue building: %.0f IOPS arrived", num(p, "offered_iops"));
        fputc('\n', out);
    }
    sim_result_print_curve_warning(out, "  ", json_object_get(curve, "points"));
    const json_t *pk = json_object_get(curve, "peak");
    if (json_is_true(json_object_get(pk, "max_rate_run")))
        fprintf(out,
                "  peak: no point kept up with its arrivals; the maximum-rate run gave %.0f "
                "IOPS at %.1f us mean\n",
                num(pk, "iops"), num(pk, "mean_us"));
    else
        fprintf(out, "  peak: %.0f IOPS at %.1f us mean, %.1f us p99 (the %.0f %% point)\n",
                num(pk, "iops"), num(pk, "mean_us"), num(pk, "p99_us"), num(pk, "fraction") * 100);
}

void io_print_head(FILE *out, const json_t *doc)
{
    const json_t *sec = json_object_get(doc, "section");
    char a[32], b[32];
    fprintf(out, "section: %s at offset %lld of %s (%s)",
            sim_format_size((uint64_t)num(sec, "length"), a, sizeof a),
            (long long)num(sec, "offset"), json_string_value(json_object_get(sec, "data")),
            sim_format_size((uint64_t)num(sec, "data_bytes"), b, sizeof b));
    const json_t *fill = json_object_get(doc, "fill");
    if (json_is_object(fill))
        fprintf(out, "; filled end to end first: %.1f s at %.1f MB/s\n", num(fill, "seconds"),
                num(fill, "mbps"));
    else
        fprintf(out, "; not filled (--fill writes it end to end first)\n");
    const json_t *pre = json_object_get(json_object_get(doc, "target"), "preconditioning");
    if (json_is_object(pre))
        fprintf(out, "target preconditioned %s: %.0f MiB written (%.2f passes)%s\n",
                json_string_value(json_object_get(pre, "at")),
                num(pre, "bytes_written") / 1048576.0, num(pre, "passes"),
                json_is_true(json_object_get(pre, "complete")) ? "" : ", incomplete");
    else
        fprintf(out, "target not preconditioned (appsim precondition --target ...)\n");
}

void io_print_entry(FILE *out, const json_t *e, const json_t *doc)
{
    const json_t *d = json_object_get(e, "definition");
    const char *desc = json_string_value(json_object_get(e, "description"));
    fprintf(out, "\n%s%s%s\n", json_string_value(json_object_get(e, "profile")), desc ? ": " : "",
            desc ? desc : "");
    fprintf(out, "  xfersize=%s rdpct=%g seekpct=%g threads=%lld\n",
            json_string_value(json_object_get(d, "xfersize")), num(d, "read_pct"),
            num(d, "random_pct"), (long long)json_integer_value(json_object_get(d, "threads")));
    const char *approx = json_string_value(json_object_get(e, "approximation"));
    if (approx) fprintf(out, "  %s\n", approx);
    const json_t *curve = json_object_get(e, "curve");
    if (curve)
        print_curve(out, curve);
    else
        sim_result_print(out, doc);
}
