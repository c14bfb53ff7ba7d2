/*
 * oltp/oltp_opts.c: option checks tpcc and sysbench share, so that both refuse the
 * same combinations with the same words.
 */
#include "oltp/oltp.h"

#include <string.h>

int oltp_check_group_commit(const sim_opt *opts, const char *group_commit, const char *sync,
                            bool buffered)
{
    if (!sim_opts_find(opts, "group-commit")->set || strcmp(group_commit, "on")) return SIM_EXIT_OK;
    if (strcmp(sync, "full") || buffered) {
        sim_error("--group-commit on needs --sync full and appsim's VFS (no --buffered): it "
                  "shares the WAL syncs that sync full makes; drop it or use --sync full");
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}
