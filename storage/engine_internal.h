/*
 * storage/engine_internal.h: the engine object shared by the generic layer (engine.c:
 * registry, queue-depth bound, latency recording, the synchronous path) and the
 * engines (engine_uring.c, engine_psync.c). Private to storage/.
 *
 * Invariants: inflight counts I/Os handed to the backend and not yet reaped from it,
 * and never exceeds qd; backends set submit_ns and complete_ns and result; stash holds
 * I/Os reaped by st_engine_do on behalf of other callers, delivered by the next reap.
 */
#ifndef APPSIM_STORAGE_ENGINE_INTERNAL_H
#define APPSIM_STORAGE_ENGINE_INTERNAL_H

#include "storage/storage.h"

struct st_engine {
    const st_engine_ops *ops;
    unsigned qd;
    unsigned inflight;
    sim_meter *meter;
    int read_type, write_type, sync_type;
    st_io **stash;
    unsigned nstash, stash_cap;
    void *priv; /* the backend's state */
};

/* Discard [off, off+len) synchronously: BLKDISCARD on a block device, a punched hole
 * (size kept) in a file. Returns 0 or -errno. */
int st_discard_sync(int fd, uint64_t off, uint64_t len);
/* Runs one I/O with plain system calls; returns bytes or -errno. */
int64_t st_io_sync(const st_io *io);

#endif
