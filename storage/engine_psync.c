/*
 * storage/engine_psync.c: the synchronous engine (pread/pwrite/fsync/fdatasync and
 * discard as plain system calls), for systems that refuse io_uring. Submission runs
 * each I/O to completion, so the effective queue depth is 1 per thread whatever was
 * asked; completed I/Os wait in a FIFO of qd slots until they are reaped.
 */
#include "storage/engine_internal.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct psync {
    st_io **fifo;
    unsigned head, count;
} psync;

static int ps_open(st_engine *e, unsigned qd, char *err, size_t errlen)
{
    psync *p = sim_xcalloc(1, sizeof *p);
    p->fifo = sim_xcalloc(qd, sizeof *p->fifo);
    e->priv = p;
    return SIM_OK;
}

static void ps_close(st_engine *e)
{
    psync *p = e->priv;
    free(p->fifo);
    free(p);
}

static int ps_submit(st_engine *e, st_io *const *ios, unsigned n)
{
    psync *p = e->priv;
    uint64_t now = sim_now_ns();
    for (unsigned i = 0; i < n; i++) {
        st_io *io = ios[i];
        io->submit_ns = now;
        io->result = st_io_sync(io);
        io->complete_ns = now = sim_now_ns();
        p->fifo[(p->head + p->count++) % e->qd] = io;
    }
    return (int)n;
}

static int ps_reap(st_engine *e, st_io **done, unsigned max, unsigned min_wait)
{
    psync *p = e->priv;
    unsigned n = 0;
    while (n < max && p->count) {
        done[n++] = p->fifo[p->head];
        p->head = (p->head + 1) % e->qd;
        p->count--;
    }
    return (int)n;
}

static const st_engine_ops psync_ops = {
    .name = "psync",
    .description = "synchronous pread/pwrite (one I/O at a time per thread)",
    .open = ps_open,
    .close = ps_close,
    .submit = ps_submit,
    .reap = ps_reap,
};
ST_REGISTER_ENGINE(psync_ops)
