/*
 * storage/target_internal.h: the st_target structure and the helpers shared by the
 * files that implement targets (target.c, manifest.c, device_safety.c, identity.c,
 * device_io.c). Private to storage/.
 *
 * Invariants: a target is either a directory (dirfd >= 0, is_device false) or a block
 * device (is_device true, excl_fd holds an O_EXCL claim while it is open for writing so
 * that nobody can mount it under us). `disk` names the whole disk under the target
 * ("" when there is none, e.g. tmpfs), `part` the partition when the target sits on one.
 */
#ifndef APPSIM_STORAGE_TARGET_INTERNAL_H
#define APPSIM_STORAGE_TARGET_INTERNAL_H

#include "storage/storage.h"

#include <pthread.h>
#include <sys/types.h>

#define ST_MANIFEST_NAME ".appsim-manifest"
#define ST_LOCK_NAME ".appsim-lock"
#define ST_NAME_MAX 200
/* Directory targets: the preconditioning record (precondition_record.c). */
#define ST_PRECONDITION_RECORD "appsim-precondition.json"

struct st_target {
    char path[4096]; /* as given (directory) or the device node */
    bool is_device;
    bool buffered;
    bool read_only;
    bool allow_destroy;
    int dirfd;   /* directory targets: O_PATH-free O_DIRECTORY fd */
    int excl_fd; /* device targets opened for writing: O_EXCL claim */
    dev_t dev;   /* st_dev of the directory, or st_rdev of the device */
    uint32_t block_size;
    uint32_t dio_mem_align;
    uint64_t device_bytes; /* device targets: size */
    bool marked;           /* device targets: appsim's mark is on it (device_mark.c) */
    char disk[64];         /* whole disk under the target, "" when none */
    char part[64];         /* partition name when the target is on one */
    char fstype[64];       /* directory targets: filesystem type from mountinfo */
    char mount_point[4096];
    char mount_source[4096];
    char realdir[4096];   /* directory targets: the directory with no symlink in its path */
    bool made_dir;        /* st_target_open created the directory (removed if left empty) */
    int lock_fd;          /* the target lock (target_lock.c), -1 when none */
    pthread_mutex_t lock; /* manifest updates */
};

/* ---- target_lock.c */
/* Takes the target's lock unless it was opened read-only. A target in use is refused at
 * once (SIM_EXIT_USAGE) with the holder's pid and command line. Directory
 * targets lock DIR/.appsim-lock, device targets /run/lock/appsim-dev-MAJ-MIN.lock. */
int st_target_lock(st_target *t, char *err, size_t errlen);
/* Releases it; a directory's lock file is removed when appsim keeps nothing there. */
void st_target_unlock(st_target *t);

/* ---- manifest.c */
bool st_manifest_name_ok(const char *name);
/* Loads the manifest names into a NULL-terminated array (caller frees with
 * st_manifest_free); an absent manifest is an empty list. Returns 0 or -errno. */
int st_manifest_load(const st_target *t, char ***names);
void st_manifest_free(char **names);
bool st_manifest_contains(const st_target *t, const char *name);
/* Appends name (durably) unless present. 0 or -errno. */
int st_manifest_add(st_target *t, const char *name);
/* Rewrites the manifest without name (atomically). 0 or -errno. */
int st_manifest_remove(st_target *t, const char *name);
int st_manifest_delete(st_target *t);
/* Which file a name holds: device, inode, and birth time (statx; 0 when the filesystem
 * keeps none), since a freed inode number is soon given to the next new file. */
typedef struct st_file_id {
    uint64_t dev, ino, btime_ns;
} st_file_id;
/* Which file a listed name is (recorded once it was created): 1 with *id filled, 0 when
 * none is recorded yet, -ENOENT when the name is not listed, other -errno. */
int st_manifest_identity(const st_target *t, const char *name, st_file_id *id);
/* Records (durably) which file a listed name now is. 0 or -errno. */
int st_manifest_set_identity(st_target *t, const char *name, const st_file_id *id);

/* ---- device_safety.c */
/* Refuses (SIM_EXIT_USAGE) when dev or one of its partitions is mounted, used as swap,
 * held by another driver, or cannot be claimed exclusively; on success *excl_fd is an
 * O_EXCL descriptor of the device that the caller keeps while writing. */
int st_device_check_unused(const char *devpath, dev_t rdev, int *excl_fd, char *err, size_t errlen);
/* Refuses (SIM_EXIT_USAGE) a whole disk any of whose partitions holds a filesystem or
 * other signature libblkid knows, whatever the flags or the mark say: the kernel's
 * partitions (sysfs, however they were made), and those of a partition table libblkid
 * reads on the device that the kernel has not registered (no partition devices), each
 * probed at its range on the whole device. libblkid on the whole device alone sees only
 * its first bytes. */
int st_device_check_partitions(const char *devpath, dev_t rdev, char *err, size_t errlen);
/* Describes what is on the device (filesystem signature, partition table, partitions)
 * via libblkid, e.g. "an ext4 filesystem (label \"data\")". Returns true when libblkid
 * found any of them. */
bool st_device_describe(const char *devpath, char *buf, size_t len);

/* ---- device_mark.c */
/* Where the mark goes: the start of the device's last whole MiB; 0 when the device is
 * smaller than 2 MiB (no mark). Device targets' capacity ends here. */
uint64_t st_device_mark_offset(uint64_t device_bytes);
/* True when a valid mark for a device of this size is on devpath (written_at filled). */
bool st_device_mark_read(const char *devpath, uint64_t device_bytes, char *written_at, size_t len);
/* Writes the mark (durably). SIM_EXIT_OK or SIM_EXIT_FAIL with a message. */
int st_device_mark_write(const char *devpath, uint64_t device_bytes, char *err, size_t errlen);

/* ---- sysfs helpers (identity.c) */
/* Finds the whole disk (and partition) for a block dev_t via /sys/dev/block. Returns
 * SIM_OK, or SIM_ERR when the device has no sysfs entry. */
int st_sysfs_disk_of(dev_t dev, char *disk, size_t disklen, char *part, size_t partlen);
/* st_sysfs_read and st_sysfs_partition: storage.h. */
/* Finds the mount holding `path` in /proc/self/mountinfo (longest mount point prefix
 * with matching st_dev). SIM_OK or SIM_ERR. */
int st_mount_of(const char *path, dev_t dev, char *fstype, size_t fslen, char *mnt, size_t mntlen,
                char *source, size_t srclen);

/* ---- identity_nvme.c */
/* NVMe identify data for /dev/<disk> (controller and namespace) via libnvme, or an
 * object saying why it is unavailable. NULL when disk is not NVMe. */
json_t *st_nvme_identify_json(const char *disk);

/* Formats a message into err (when given) and returns status: the one way target code
 * reports a refusal or failure. */
int st_target_fail(char *err, size_t errlen, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
