/*
 * tests/bench/bench_vdi_storm.c: how fast a VDI storm composes records, so that the
 * composition never limits the replay. Runs the shipped desktop traces (or the files
 * given as arguments) as full and linked storms of 1,000 desktops and prints records
 * per second per core. Usage: bench_vdi_storm [desktops] [trace...]
 */
#include "trace/vdi/vdi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    uint32_t desktops = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000;
    const char *user[VDI_NPHASES] = {NULL, NULL, NULL};
    for (int i = 2; i < argc && i - 2 < VDI_NPHASES; i++)
        user[i - 2] = argv[i];
    char err[1024];
    vdi_phase_traces pt;
    if (vdi_phase_traces_load(&pt, user, false, 60, 1, err, sizeof err) != 0) {
        fprintf(stderr, "bench_vdi_storm: %s\n", err);
        return 1;
    }
    printf("storm composition, %u desktops (one core)\n", desktops);
    for (int c = 0; c < 2; c++) {
        for (int p = 0; p < VDI_NPHASES; p++) {
            vdi_storm_opts o = {.clones = (vdi_clones)c,
                                .desktops = desktops,
                                .stagger_ns = 10000000000ull,
                                .jitter = 0.1,
                                .seed = 1};
            tr_source *s = NULL;
            if (vdi_storm_open(&pt.t[p], &pt.img, &o, &s, err, sizeof err) != 0) {
                fprintf(stderr, "bench_vdi_storm: %s\n", err);
                return 1;
            }
            tr_record r;
            uint64_t n = 0;
            double t0 = cpu_seconds();
            while (tr_next(s, &r) == 1)
                n++;
            double secs = cpu_seconds() - t0;
            printf("  %-6s %-14s %10llu records  %6.2f M records/s\n",
                   vdi_clones_name((vdi_clones)c), vdi_phase_name((vdi_phase)p),
                   (unsigned long long)n, secs > 0 ? (double)n / secs / 1e6 : 0.0);
            tr_close(s);
        }
    }
    vdi_phase_traces_free(&pt);
    return 0;
}
