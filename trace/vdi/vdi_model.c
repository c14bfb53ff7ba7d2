/*
 * trace/vdi/vdi_model.c: modeled desktop traces for the login phases, which cannot be
 * captured on a 2-core machine without a display (no desktop session to log in to).
 * Every result that uses one says "modeled" (docs/vdi.md, "Modeled phases").
 *
 * Calibration, all from the published per-desktop figures
 * (reference-methodology.md, section 5):
 *   - sizes: 36 KiB reads, 10 KiB writes on average (login storm). 10 KiB is not a
 *     multiple of 4 KiB, so writes are 8 KiB and 12 KiB with equal probability: the
 *     mean is 10 KiB and every I/O stays aligned for O_DIRECT on 4 KiB drives;
 *   - rate: 8-13 IOPS per desktop during the login storm; the model uses the middle,
 *     10.5, with exponential inter-arrival times;
 *   - initial login: 50 % reads, the login-storm mix of the study, whose desktops are
 *     non-persistent, so every login there creates the profile (a first login);
 *   - Monday login: the profile exists and the desktop's caches are cold after the
 *     idle weekend, like after a refresh: 65 % reads, the middle of the published
 *     60-70 % boot/refresh read share.
 * Footprint: not published for logins; reads are spread uniformly over the chunks of
 * the desktop's image (the captured boot's footprint), writes over the chunks the
 * captured boot wrote (where this desktop keeps its changing files; the image when
 * the boot wrote nothing), each I/O inside one chunk and 4 KiB aligned. The phase
 * length (seconds) is a parameter, recorded in results.
 */
#include "trace/vdi/vdi_internal.h"

#include <math.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#define MODEL_IOPS 10.5        /* middle of 8-13 IOPS per desktop */
#define MODEL_READ_BYTES 36864 /* 36 KiB */
#define MODEL_INITIAL_READ_SHARE 0.50
#define MODEL_MONDAY_READ_SHARE 0.65

int vdi_model_build(vdi_phase phase, const vdi_image *img, double seconds, uint64_t seed,
                    vdi_trace *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (phase != VDI_INITIAL_LOGIN && phase != VDI_MONDAY_LOGIN) {
        snprintf(err, errlen, "no model for the %s phase: it is captured (give --boot-trace)",
                 vdi_phase_name(phase));
        return SIM_ERR;
    }
    if (!(seconds > 0) || img->nchunks == 0) {
        snprintf(err, errlen, "a modeled phase needs a positive length and an image");
        return SIM_ERR;
    }
    double read_share =
        phase == VDI_INITIAL_LOGIN ? MODEL_INITIAL_READ_SHARE : MODEL_MONDAY_READ_SHARE;
    size_t n = (size_t)llround(seconds * MODEL_IOPS);
    if (n == 0) n = 1;
    out->recs = sim_xcalloc(n, sizeof *out->recs);
    sim_rng rng;
    sim_rng_seed(&rng, seed, 1000 + (uint64_t)phase);
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        tr_record *r = &out->recs[i];
        bool read = sim_rng_double(&rng) < read_share;
        r->op = read ? TR_READ : TR_WRITE;
        r->length = read ? MODEL_READ_BYTES : (sim_rng_u64(&rng) & 1 ? 12288 : 8192);
        const uint64_t *set = img->chunks;
        size_t nset = img->nchunks;
        if (!read && img->nwchunks) {
            set = img->wchunks;
            nset = img->nwchunks;
        }
        uint64_t chunk = set[sim_rng_range(&rng, 0, nset - 1)];
        uint64_t slots = (VDI_CHUNK - r->length) / 4096;
        r->offset = chunk * VDI_CHUNK + sim_rng_range(&rng, 0, slots) * 4096;
        r->time_ns = t;
        r->latency_ns = TR_LATENCY_UNKNOWN;
        t += sim_rng_exp_ns(&rng, MODEL_IOPS);
    }
    out->n = n;
    out->modeled = true;
    snprintf(out->origin, sizeof out->origin,
             "modeled %s: %.0f%% reads of 36 KiB, writes of 8/12 KiB (10 KiB mean), "
             "%.1f IOPS, %.0f s, over the boot's read and write footprints",
             vdi_phase_name(phase), read_share * 100, MODEL_IOPS, seconds);
    return SIM_OK;
}
