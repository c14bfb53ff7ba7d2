/*
 * storage/cleanup_cmd.c: `appsim cleanup --target DIR`: removes exactly the files
 * listed in the target's manifest (those appsim created) and then the manifest.
 * Anything else in the directory is left alone. Workloads may add their own cleanup
 * actions; this one needs no knowledge of what created the files.
 */
#include "storage/storage.h"

#include <sys/stat.h>

static int cleanup_main(int argc, char **argv)
{
    const char *target = NULL;
    bool quiet = false;
    sim_opt opts[] = {
        SIM_VOCAB_TARGET(&target, "PATH", "directory whose appsim files are removed"),
        SIM_VOCAB_QUIET(&quiet, "do not list the removed files"),
        SIM_OPT_END,
    };
    int np = 0;
    int rc =
        sim_opts_parse("cleanup", opts, argc, argv, NULL, 0, &np, "appsim cleanup --target DIR");
    if (rc) return sim_opts_exit_status(rc);
    if (!target) {
        sim_error("cleanup needs --target DIR (the directory appsim wrote to)");
        return SIM_EXIT_USAGE;
    }
    sim_set_quiet(quiet);
    struct stat st;
    /* No data I/O here: buffered avoids refusing a filesystem without O_DIRECT, and a
     * device is only looked at (appsim keeps no files on one). */
    bool dev = stat(target, &st) == 0 && S_ISBLK(st.st_mode);
    st_target_opts to = {.path = target, .buffered = true, .read_only = dev, .existing_only = true};
    st_target *t;
    char err[1024];
    rc = st_target_open(&to, &t, err, sizeof err);
    if (rc) {
        sim_error("%s", err);
        return rc;
    }
    rc = st_target_cleanup(t, err, sizeof err);
    if (rc) sim_error("%s", err);
    st_target_close(t);
    return rc;
}

static const sim_command cleanup_command = {
    .name = "cleanup",
    .summary = "remove the files appsim created in a target (its manifest)",
    .main = cleanup_main,
};
SIM_REGISTER_COMMAND(cleanup_command)
