/*
 * storage/sqlite/sqlite_failstop.c: SQLite's default VFS with appsim's fail-stop rule
 * (sim/fault.c), for the files SQLite opens itself: a buffered target (--buffered) and
 * the bulk loads. Every call goes to the default VFS; what this layer adds is what the
 * direct-I/O VFS (sqlite_vfs.c) and the I/O engine (storage/engine.c) do for theirs:
 *   - the first failed write or sync (ENOSPC, EIO, ... or any other cause: a write
 *     that did not happen leaves the file unlike what SQLite believes) is noted as the
 *     process's storage fault, with the file and offset; a failed read, truncate, open
 *     or WAL-index extension is noted when its errno is a storage fault;
 *   - once a fault is noted nothing more is written, synced, truncated or deleted, so
 *     the files stay as the last good write left them and the next open recovers the
 *     database from its WAL. Without this, SQLite answers each transaction "database
 *     or disk is full" and the workload goes on committing around the holes.
 * The errno comes from the system call that failed: the default VFS returns right
 * after it, and its own xGetLastError answers errno too.
 */
#include "storage/sqlite/sqlite_internal.h"

#include <errno.h>
#include <string.h>

#define FAILSTOP_VFS_NAME "appsim-failstop"

typedef struct fs_file {
    sqlite3_file base;
    sqlite3_file *real; /* the default VFS's file, in the same allocation after this */
    const char *name;   /* valid until xClose (SQLite's contract for xOpen's name) */
} fs_file;

static sqlite3_vfs failstop_vfs;
static sqlite3_io_methods fs_methods;

static sqlite3_vfs *real_vfs(void)
{
    return (sqlite3_vfs *)failstop_vfs.pAppData;
}

static const char *name_of(const fs_file *f)
{
    return f->name ? f->name : "a temporary file";
}

/* The fault a failed write or sync stands for: its errno when that is one, else
 * ENOSPC for SQLITE_FULL (a short write) and EIO for the rest. */
static int fault_errno(int err, int rc)
{
    if (sim_fault_errno_is_fatal(err)) return err;
    return (rc & 0xff) == SQLITE_FULL ? ENOSPC : EIO;
}

/* SQLite's code for a write refused after a fault, as the direct-I/O VFS answers. */
static int refused_write(void)
{
    int err = sim_fault_noted();
    return err == ENOSPC || err == EDQUOT ? SQLITE_FULL : SQLITE_IOERR_WRITE;
}

static int fs_close(sqlite3_file *pf)
{
    fs_file *f = (fs_file *)pf;
    int rc = f->real->pMethods->xClose(f->real);
    f->real->pMethods = NULL;
    return rc;
}

static int fs_read(sqlite3_file *pf, void *buf, int amt, sqlite3_int64 ofst)
{
    fs_file *f = (fs_file *)pf;
    int rc = f->real->pMethods->xRead(f->real, buf, amt, ofst);
    int err = errno;
    if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ)
        sim_fault_note(err, "reading %s at offset %lld (%d bytes)", name_of(f), (long long)ofst,
                       amt);
    return rc;
}

static int fs_write(sqlite3_file *pf, const void *buf, int amt, sqlite3_int64 ofst)
{
    fs_file *f = (fs_file *)pf;
    if (sim_fault_noted()) return refused_write();
    errno = 0;
    int rc = f->real->pMethods->xWrite(f->real, buf, amt, ofst);
    int err = errno;
    if (rc != SQLITE_OK)
        sim_fault_note(fault_errno(err, rc), "writing %s at offset %lld (%d bytes)", name_of(f),
                       (long long)ofst, amt);
    return rc;
}

static int fs_truncate(sqlite3_file *pf, sqlite3_int64 size)
{
    fs_file *f = (fs_file *)pf;
    if (sim_fault_noted()) return SQLITE_IOERR_TRUNCATE;
    int rc = f->real->pMethods->xTruncate(f->real, size);
    int err = errno;
    if (rc != SQLITE_OK) sim_fault_note(err, "truncating %s", name_of(f));
    return rc;
}

static int fs_sync(sqlite3_file *pf, int flags)
{
    fs_file *f = (fs_file *)pf;
    if (sim_fault_noted()) return SQLITE_IOERR_FSYNC;
    errno = 0;
    int rc = f->real->pMethods->xSync(f->real, flags);
    int err = errno;
    if (rc != SQLITE_OK) sim_fault_note(fault_errno(err, rc), "syncing %s", name_of(f));
    return rc;
}

static int fs_file_size(sqlite3_file *pf, sqlite3_int64 *size)
{
    fs_file *f = (fs_file *)pf;
    return f->real->pMethods->xFileSize(f->real, size);
}

static int fs_lock(sqlite3_file *pf, int lock)
{
    fs_file *f = (fs_file *)pf;
    return f->real->pMethods->xLock(f->real, lock);
}

static int fs_unlock(sqlite3_file *pf, int lock)
{
    fs_file *f = (fs_file *)pf;
    return f->real->pMethods->xUnlock(f->real, lock);
}

static int fs_check_reserved(sqlite3_file *pf, int *out)
{
    fs_file *f = (fs_file *)pf;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int fs_file_control(sqlite3_file *pf, int op, void *arg)
{
    fs_file *f = (fs_file *)pf;
    return f->real->pMethods->xFileControl(f->real, op, arg);
}

static int fs_sector_size(sqlite3_file *pf)
{
    fs_file *f = (fs_file *)pf;
    return f->real->pMethods->xSectorSize(f->real);
}

static int fs_device_characteristics(sqlite3_file *pf)
{
    fs_file *f = (fs_file *)pf;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int fs_shm_map(sqlite3_file *pf, int region, int size, int extend, void volatile **out)
{
    fs_file *f = (fs_file *)pf;
    int rc = f->real->pMethods->xShmMap(f->real, region, size, extend, out);
    int err = errno;
    if (rc != SQLITE_OK && rc != SQLITE_READONLY)
        sim_fault_note(err, "mapping region %d of the WAL index of %s", region, name_of(f));
    return rc;
}

static int fs_shm_lock(sqlite3_file *pf, int offset, int n, int flags)
{
    fs_file *f = (fs_file *)pf;
    return f->real->pMethods->xShmLock(f->real, offset, n, flags);
}

static void fs_shm_barrier(sqlite3_file *pf)
{
    fs_file *f = (fs_file *)pf;
    f->real->pMethods->xShmBarrier(f->real);
}

static int fs_shm_unmap(sqlite3_file *pf, int del)
{
    fs_file *f = (fs_file *)pf;
    /* deleting the WAL index is a write to the target: not after a fault */
    return f->real->pMethods->xShmUnmap(f->real, sim_fault_noted() ? 0 : del);
}

static int fs_fetch(sqlite3_file *pf, sqlite3_int64 ofst, int amt, void **out)
{
    fs_file *f = (fs_file *)pf;
    return f->real->pMethods->xFetch(f->real, ofst, amt, out);
}

static int fs_unfetch(sqlite3_file *pf, sqlite3_int64 ofst, void *p)
{
    fs_file *f = (fs_file *)pf;
    return f->real->pMethods->xUnfetch(f->real, ofst, p);
}

static int fs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *pf, int flags, int *out_flags)
{
    (void)vfs;
    fs_file *f = (fs_file *)pf;
    f->real = (sqlite3_file *)(f + 1);
    f->name = name;
    int rc = real_vfs()->xOpen(real_vfs(), name, f->real, flags, out_flags);
    int err = errno;
    /* SQLite calls xClose whenever pMethods is set, even after a failed open */
    f->base.pMethods = f->real->pMethods ? &fs_methods : NULL;
    if (rc != SQLITE_OK) sim_fault_note(err, "opening %s", name ? name : "a temporary file");
    return rc;
}

static int fs_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
    (void)vfs;
    if (sim_fault_noted()) return SQLITE_IOERR_DELETE;
    return real_vfs()->xDelete(real_vfs(), name, sync_dir);
}

static int fs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    (void)vfs;
    return real_vfs()->xAccess(real_vfs(), name, flags, out);
}

static int fs_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
    (void)vfs;
    return real_vfs()->xFullPathname(real_vfs(), name, n, out);
}

static void *fs_dl_open(sqlite3_vfs *vfs, const char *name)
{
    (void)vfs;
    return real_vfs()->xDlOpen(real_vfs(), name);
}

static void fs_dl_error(sqlite3_vfs *vfs, int n, char *msg)
{
    (void)vfs;
    real_vfs()->xDlError(real_vfs(), n, msg);
}

static void (*fs_dl_sym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
    (void)vfs;
    return real_vfs()->xDlSym(real_vfs(), h, sym);
}

static void fs_dl_close(sqlite3_vfs *vfs, void *h)
{
    (void)vfs;
    real_vfs()->xDlClose(real_vfs(), h);
}

static int fs_randomness(sqlite3_vfs *vfs, int n, char *out)
{
    (void)vfs;
    return real_vfs()->xRandomness(real_vfs(), n, out);
}

static int fs_sleep(sqlite3_vfs *vfs, int us)
{
    (void)vfs;
    return real_vfs()->xSleep(real_vfs(), us);
}

static int fs_current_time(sqlite3_vfs *vfs, double *out)
{
    (void)vfs;
    return real_vfs()->xCurrentTime(real_vfs(), out);
}

static int fs_get_last_error(sqlite3_vfs *vfs, int n, char *out)
{
    (void)vfs;
    return real_vfs()->xGetLastError(real_vfs(), n, out);
}

static int fs_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
    (void)vfs;
    return real_vfs()->xCurrentTimeInt64(real_vfs(), out);
}

static int fs_set_system_call(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr p)
{
    (void)vfs;
    return real_vfs()->xSetSystemCall(real_vfs(), name, p);
}

static sqlite3_syscall_ptr fs_get_system_call(sqlite3_vfs *vfs, const char *name)
{
    (void)vfs;
    return real_vfs()->xGetSystemCall(real_vfs(), name);
}

static const char *fs_next_system_call(sqlite3_vfs *vfs, const char *name)
{
    (void)vfs;
    return real_vfs()->xNextSystemCall(real_vfs(), name);
}

int vf_failstop_register(void)
{
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (!real) return SQLITE_ERROR;
    if (real->iVersion < 3) return SQLITE_ERROR; /* every unix VFS since SQLite 3.7.6 */
    fs_methods = (sqlite3_io_methods){.iVersion = 3,
                                      .xClose = fs_close,
                                      .xRead = fs_read,
                                      .xWrite = fs_write,
                                      .xTruncate = fs_truncate,
                                      .xSync = fs_sync,
                                      .xFileSize = fs_file_size,
                                      .xLock = fs_lock,
                                      .xUnlock = fs_unlock,
                                      .xCheckReservedLock = fs_check_reserved,
                                      .xFileControl = fs_file_control,
                                      .xSectorSize = fs_sector_size,
                                      .xDeviceCharacteristics = fs_device_characteristics,
                                      .xShmMap = fs_shm_map,
                                      .xShmLock = fs_shm_lock,
                                      .xShmBarrier = fs_shm_barrier,
                                      .xShmUnmap = fs_shm_unmap,
                                      .xFetch = fs_fetch,
                                      .xUnfetch = fs_unfetch};
    failstop_vfs = (sqlite3_vfs){.iVersion = 3,
                                 .szOsFile = (int)sizeof(fs_file) + real->szOsFile,
                                 .mxPathname = real->mxPathname,
                                 .zName = FAILSTOP_VFS_NAME,
                                 .pAppData = real,
                                 .xOpen = fs_open,
                                 .xDelete = fs_delete,
                                 .xAccess = fs_access,
                                 .xFullPathname = fs_full_pathname,
                                 .xDlOpen = fs_dl_open,
                                 .xDlError = fs_dl_error,
                                 .xDlSym = fs_dl_sym,
                                 .xDlClose = fs_dl_close,
                                 .xRandomness = fs_randomness,
                                 .xSleep = fs_sleep,
                                 .xCurrentTime = fs_current_time,
                                 .xGetLastError = fs_get_last_error,
                                 .xCurrentTimeInt64 = fs_current_time64,
                                 .xSetSystemCall = fs_set_system_call,
                                 .xGetSystemCall = fs_get_system_call,
                                 .xNextSystemCall = fs_next_system_call};
    return sqlite3_vfs_register(&failstop_vfs, 0);
}

const char *vf_failstop_name(void)
{
    return FAILSTOP_VFS_NAME;
}
