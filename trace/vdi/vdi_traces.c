/*
 * trace/vdi/vdi_traces.c: the desktop traces of the three phases, from the user's files
 * (--boot-trace, --login-trace, --monday-trace), the captures shipped with appsim
 * (trace/vdi/desktops/), or the login models (vdi_model.c) when no capture exists.
 *
 * The shipped captures are used as a set (boot and both logins of the same desktop):
 * when the user gives their own boot, or asks for the models, a login phase without
 * the user's own trace is modeled on the boot's image.
 *
 * Shipped captures are looked up in $APPSIM_DESKTOPS when it is set (and only there),
 * else relative to the executable where `cmake --install` puts them
 * (../share/appsim/desktops from bin/), else in the source tree the binary was built
 * from (a build tree's binary). The build defines both places (CMakeLists.txt).
 */
#include "trace/vdi/vdi_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const shipped_names[VDI_NPHASES] = {
    [VDI_BOOT] = "boot.atr",
    [VDI_INITIAL_LOGIN] = "initial-login.atr",
    [VDI_MONDAY_LOGIN] = "monday-login.atr",
};

static bool readable(const char *p)
{
    return access(p, R_OK) == 0;
}

#ifndef APPSIM_DESKTOPS_FROM_BIN
#define APPSIM_DESKTOPS_FROM_BIN "../share/appsim/desktops"
#endif

/* The directory of the running executable, or false. */
static bool exe_dir(char *out, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    if (n <= 0) return false;
    out[n] = 0;
    char *slash = strrchr(out, '/');
    if (!slash) return false;
    *slash = 0;
    return true;
}

/* Finds a shipped capture; false when none of the places has it. */
static bool find_shipped(vdi_phase p, char *out, size_t len)
{
    const char *env = getenv("APPSIM_DESKTOPS");
    if (env && *env) {
        snprintf(out, len, "%s/%s", env, shipped_names[p]);
        return readable(out);
    }
    char exe[PATH_MAX];
    if (exe_dir(exe, sizeof exe)) {
        snprintf(out, len, "%s/%s/%s", exe, APPSIM_DESKTOPS_FROM_BIN, shipped_names[p]);
        char canon[PATH_MAX]; /* the result records /usr/share/..., not /usr/bin/../share */
        if (readable(out) && realpath(out, canon) && strlen(canon) < len) strcpy(out, canon);
        if (readable(out)) return true;
    }
#ifdef APPSIM_SOURCE_DESKTOPS
    snprintf(out, len, "%s/%s", APPSIM_SOURCE_DESKTOPS, shipped_names[p]);
    if (readable(out)) return true;
#endif
    return false;
}

void vdi_phase_traces_free(vdi_phase_traces *pt)
{
    for (int p = 0; p < VDI_NPHASES; p++)
        vdi_trace_free(&pt->t[p]);
    vdi_image_free(&pt->img);
}

int vdi_phase_traces_load(vdi_phase_traces *pt, const char *const user[VDI_NPHASES],
                          bool model_logins, double model_seconds, uint64_t seed, char *err,
                          size_t errlen)
{
    memset(pt, 0, sizeof *pt);
    char path[PATH_MAX + 64];
    /* Captured traces first: the models address the boot image's footprint. */
    for (int p = 0; p < VDI_NPHASES; p++) {
        const char *file = user[p];
        /* The shipped captures go together: with the user's own boot, the phases the
         * user did not capture are modeled on that boot's image. */
        bool shipped_ok = !user[VDI_BOOT] && !(model_logins && p != VDI_BOOT);
        if (!file && shipped_ok && find_shipped((vdi_phase)p, path, sizeof path)) file = path;
        if (!file) {
            if (p == VDI_BOOT) {
                snprintf(err, errlen,
                         "no boot trace: the shipped capture %s was not found (in "
                         "$APPSIM_DESKTOPS when set, else %s next to the appsim binary); "
                         "set APPSIM_DESKTOPS to the directory that has it, or give "
                         "--boot-trace",
                         shipped_names[p], APPSIM_DESKTOPS_FROM_BIN);
                goto fail;
            }
            continue;
        }
        if (vdi_trace_load(file, VDI_MAX_RECORDS, &pt->t[p], err, errlen) != 0) goto fail;
        pt->user[p] = user[p] != NULL;
    }
    const vdi_trace *boot[1] = {&pt->t[VDI_BOOT]};
    vdi_image bimg;
    if (vdi_image_build(boot, 1, &bimg, err, errlen) != 0) goto fail;
    for (int p = 0; p < VDI_NPHASES; p++) {
        if (pt->t[p].n) continue;
        if (vdi_model_build((vdi_phase)p, &bimg, model_seconds, seed, &pt->t[p], err, errlen) !=
            0) {
            vdi_image_free(&bimg);
            goto fail;
        }
    }
    vdi_image_free(&bimg);
    const vdi_trace *all[VDI_NPHASES];
    for (int p = 0; p < VDI_NPHASES; p++)
        all[p] = &pt->t[p];
    if (vdi_image_build(all, VDI_NPHASES, &pt->img, err, errlen) != 0) goto fail;
    return SIM_OK;
fail:
    vdi_phase_traces_free(pt);
    return SIM_ERR;
}

json_t *vdi_trace_json(const vdi_trace *t, bool user)
{
    vdi_trace_stats st;
    vdi_trace_stats_of(t, &st);
    return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "source",
                     t->modeled ? "modeled" : (user ? "user capture" : "captured"), "origin",
                     t->origin, "records", (json_int_t)t->n, "reads", (json_int_t)st.reads,
                     "writes", (json_int_t)st.writes, "flushes", (json_int_t)st.flushes,
                     "read_bytes", (json_int_t)st.read_bytes, "write_bytes",
                     (json_int_t)st.write_bytes, "trims", (json_int_t)st.discards, "duration_s",
                     (double)st.duration_ns / 1e9);
}
