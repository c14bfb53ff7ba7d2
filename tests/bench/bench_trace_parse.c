/*
 * bench_trace_parse: records per second through tr_open/tr_next (the whole reader
 * stack: input, parser, window, rebasing) for appsim's binary format, its zstd-
 * compressed form, and the CSV formats (MSR, SYSTOR with its sort window), on
 * generated traces of N records (default 5,000,000) written to a scratch directory.
 * Usage: bench_trace_parse [N] [DIR]. Prints one line per format.
 */
#include "trace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void measure(const char *label, const char *path, uint64_t expect)
{
    tr_open_opts o = {.volume = -1};
    tr_source *s;
    char err[1024];
    /* Once to warm the page cache, then measured. */
    for (int pass = 0; pass < 2; pass++) {
        if (tr_open(path, &o, &s, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            exit(1);
        }
        uint64_t t0 = sim_now_ns();
        double c0 = cpu_seconds();
        tr_record r;
        uint64_t n = 0, sum = 0;
        while (tr_next(s, &r) == 1) {
            n++;
            sum += r.length;
        }
        double secs = (sim_now_ns() - t0) / 1e9, cpu = cpu_seconds() - c0;
        if (n != expect) {
            fprintf(stderr, "%s: %llu records, expected %llu: %s\n", label, (unsigned long long)n,
                    (unsigned long long)expect, tr_error(s));
            exit(1);
        }
        if (pass == 1)
            printf("%-16s %10llu records %7.3f s wall %7.3f s cpu  %6.2f M rec/s per core "
                   "(checksum %llu)\n",
                   label, (unsigned long long)n, secs, cpu, n / cpu / 1e6, (unsigned long long)sum);
        tr_close(s);
    }
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    char msr[512], systor[512], apt[512], zst[512];
    snprintf(msr, sizeof msr, "%s/bench-trace-%d.msr.csv", dir, (int)getpid());
    snprintf(systor, sizeof systor, "%s/bench-trace-%d.systor.csv", dir, (int)getpid());
    snprintf(apt, sizeof apt, "%s/bench-trace-%d.apt", dir, (int)getpid());
    snprintf(zst, sizeof zst, "%s/bench-trace-%d.apt.zst", dir, (int)getpid());
    FILE *f = fopen(msr, "w"), *g = fopen(systor, "w");
    if (!f || !g) return 1;
    fprintf(g, "Timestamp,Response,IOType,LUN,Offset,Size\n");
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t off = (x % (1ull << 28)) * 4096, len = 4096u << (x >> 60 & 3);
        const char *op = (x >> 40) & 1 ? "Read" : "Write";
        fprintf(f, "%llu,hm,%u,%s,%llu,%llu,%llu\n", 128166385295514663ull + i * 37,
                (unsigned)(x >> 50 & 1), op, (unsigned long long)off, (unsigned long long)len,
                (unsigned long long)(x >> 52));
        /* SYSTOR rows slightly out of order, as in the real traces */
        uint64_t t = 1456095145000000000ull + i * 3700 + (x >> 56) * 1000;
        fprintf(g, "%llu.%09llu,0.000%06llu,%c,%u,%llu,%llu\n",
                (unsigned long long)(t / 1000000000ull), (unsigned long long)(t % 1000000000ull),
                (unsigned long long)(x >> 44 & 0xfffff) % 1000000, op[0], 0,
                (unsigned long long)off, (unsigned long long)len);
    }
    fclose(f);
    fclose(g);
    tr_open_opts o = {.volume = -1};
    tr_source *s;
    char err[1024];
    const char *outs[] = {apt, zst};
    for (int k = 0; k < 2; k++) {
        tr_writer *w;
        if (tr_open(msr, &o, &s, err, sizeof err) ||
            tr_writer_open(outs[k], "appsim", NULL, &w, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        tr_record r;
        while (tr_next(s, &r) == 1)
            tr_writer_put(w, &r);
        tr_close(s);
        if (tr_writer_close(w, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
    }
    measure("appsim", apt, n);
    measure("appsim.zst", zst, n);
    measure("msr csv", msr, n);
    measure("systor csv", systor, n);
    unlink(msr);
    unlink(systor);
    unlink(apt);
    unlink(zst);
    return 0;
}
