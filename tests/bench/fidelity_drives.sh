# shellcheck shell=bash
# tests/bench/fidelity_drives.sh: the drives of the fidelity harness (sourced by
# tests/bench/fidelity.sh). Every drive is a block device of its own, so that its
# /proc/diskstats counts only the engine under test:
#   ram    ext4 on a zram device (memory speed, no flush cost)
#   disk   ext4 on a loop device with direct I/O over a file on the machine's disk
#   slowr  the same loop device, the engine's reads capped at SLOWR_IOPS per second
#   sloww  the same, its writes capped at SLOWW_IOPS per second
#   bw     the same, reads and writes each capped at BW_MBPS MB/s (a bandwidth-bound drive)
#   qd4    a second loop device over a file on the disk whose request queue holds at most
#          4 requests (the kernel's least), reads and writes capped at QD_IOPS per second
#          each: a small, slow drive that cannot absorb a burst
# The caps are cgroup v1 blkio throttles on the engine's own cgroup (server or appsim
# process), keyed on the loop device. Writes the kernel writes back on its own (flusher
# threads, ext4's journal) are not charged to a cgroup under v1 and pass uncapped; an
# engine's fsync writes its dirty pages from its own context and is capped.
# Needs root: zram, losetup, mount, cgroups.

FID_ZRAM_SIZE=${FID_ZRAM_SIZE:-6G}
FID_DISK_SIZE=${FID_DISK_SIZE:-8G}
SLOWR_IOPS=${SLOWR_IOPS:-1500}
SLOWW_IOPS=${SLOWW_IOPS:-400}
BW_MBPS=${BW_MBPS:-60}
QD_IOPS=${QD_IOPS:-2000}
FID_DRIVES_ALL="ram disk slowr sloww bw qd4"

# drives_setup BACKING_DIR MOUNT_ROOT: makes the zram and the two loop devices, ext4 on
# each, mounted at MOUNT_ROOT/{ram,disk,qd}. Sets FID_DEV_{RAM,DISK,QD} (device names).
# Each device is recorded as soon as it exists, so that drives_teardown (the callers' EXIT
# trap) removes what a setup that failed halfway had made; the images are the harness's
# own only once it knows no other harness has them attached.
drives_setup() {
  local backing=$1 root=$2
  mkdir -p "$backing" "$root/ram" "$root/disk" "$root/qd"
  FID_ROOT=$root FID_IMAGES=
  FID_ZID=$(cat /sys/class/zram-control/hot_add)
  echo "$FID_ZRAM_SIZE" >"/sys/block/zram$FID_ZID/disksize"
  FID_DEV_RAM=zram$FID_ZID
  # With FID_KEEP_IMAGES=1 the loop devices' files (and the data loaded on them) outlive
  # the harness, and the next run on the same backing directory mounts them again.
  local img
  for img in disk qd; do
    if losetup -j "$backing/fidelity-$img.img" | grep -q .; then
      echo "$backing/fidelity-$img.img is already attached (losetup -j): another fidelity.sh is using it" >&2
      exit 2
    fi
  done
  FID_IMAGES=$backing
  for img in disk qd; do
    [ -s "$backing/fidelity-$img.img" ] || { truncate -s "$FID_DISK_SIZE" "$backing/fidelity-$img.img"; touch "$backing/fidelity-$img.new"; }
  done
  FID_DEV_DISK=$(basename "$(losetup --direct-io=on -f --show "$backing/fidelity-disk.img")")
  FID_DEV_QD=$(basename "$(losetup --direct-io=on -f --show "$backing/fidelity-qd.img")")
  echo 4 >"/sys/block/$FID_DEV_QD/queue/nr_requests"
  local d
  mkfs.ext4 -q -F "/dev/$FID_DEV_RAM"
  for d in disk:"$FID_DEV_DISK" qd:"$FID_DEV_QD"; do
    if [ -e "$backing/fidelity-${d%%:*}.new" ]; then mkfs.ext4 -q -F "/dev/${d#*:}"; rm "$backing/fidelity-${d%%:*}.new"; fi
  done
  for d in "$FID_DEV_RAM:ram" "$FID_DEV_DISK:disk" "$FID_DEV_QD:qd"; do
    mount "/dev/${d%%:*}" "$root/${d#*:}"
  done
}

drives_teardown() {
  [ -n "${FID_ROOT:-}" ] || return 0
  local m
  for m in ram disk qd; do umount "$FID_ROOT/$m" 2>/dev/null || true; done
  [ -z "${FID_DEV_DISK:-}" ] || losetup -d "/dev/$FID_DEV_DISK" 2>/dev/null || true
  [ -z "${FID_DEV_QD:-}" ] || losetup -d "/dev/$FID_DEV_QD" 2>/dev/null || true
  [ -z "${FID_ZID:-}" ] || echo "$FID_ZID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
  [ "${FID_KEEP_IMAGES:-0}" = 1 ] || [ -z "${FID_IMAGES:-}" ] ||
    rm -f "$FID_IMAGES/fidelity-disk.img" "$FID_IMAGES/fidelity-qd.img"
}

# drive_fs DRIVE: the filesystem (mount point) a drive's engine works on.
drive_fs() {
  case $1 in
  ram) echo "$FID_ROOT/ram" ;;
  qd4) echo "$FID_ROOT/qd" ;;
  *) echo "$FID_ROOT/disk" ;;
  esac
}

# drive_dev DRIVE: its block device's name (as in /proc/diskstats).
drive_dev() {
  case $1 in
  ram) echo "$FID_DEV_RAM" ;;
  qd4) echo "$FID_DEV_QD" ;;
  *) echo "$FID_DEV_DISK" ;;
  esac
}

# drive_describe DRIVE: one line for the record.
drive_describe() {
  case $1 in
  ram) echo "ext4 on zram ($FID_ZRAM_SIZE)" ;;
  disk) echo "ext4 on a direct-I/O loop device over a file on the disk" ;;
  slowr) echo "disk, engine reads capped at $SLOWR_IOPS IOPS (blkio throttle)" ;;
  sloww) echo "disk, engine writes capped at $SLOWW_IOPS IOPS (blkio throttle)" ;;
  bw) echo "disk, engine reads and writes capped at $BW_MBPS MB/s each (blkio throttle)" ;;
  qd4) echo "direct-I/O loop device, queue of 4 requests, reads and writes capped at $QD_IOPS IOPS each" ;;
  esac
}

# The engine's cgroups: blkio (the drive's caps) and memory (its page cache and heap).
FID_CG_BLKIO=/sys/fs/cgroup/blkio/appsim-fidelity
FID_CG_MEM=/sys/fs/cgroup/memory/appsim-fidelity

# drive_cgroups DRIVE MEM_BYTES: (re)makes both cgroups with the drive's caps and the
# memory limit; `drive_enter` then puts a shell into them.
drive_cgroups() {
  local drive=$1 mem=$2 mm
  mkdir -p "$FID_CG_BLKIO" "$FID_CG_MEM"
  mm=$(cat "/sys/block/$(drive_dev "$drive")/dev")
  local f
  for f in read_iops_device write_iops_device read_bps_device write_bps_device; do
    echo "$mm 0" >"$FID_CG_BLKIO/blkio.throttle.$f" 2>/dev/null || true
  done
  case $drive in
  slowr) echo "$mm $SLOWR_IOPS" >"$FID_CG_BLKIO/blkio.throttle.read_iops_device" ;;
  sloww) echo "$mm $SLOWW_IOPS" >"$FID_CG_BLKIO/blkio.throttle.write_iops_device" ;;
  bw)
    echo "$mm $((BW_MBPS * 1000000))" >"$FID_CG_BLKIO/blkio.throttle.read_bps_device"
    echo "$mm $((BW_MBPS * 1000000))" >"$FID_CG_BLKIO/blkio.throttle.write_bps_device"
    ;;
  qd4)
    echo "$mm $QD_IOPS" >"$FID_CG_BLKIO/blkio.throttle.read_iops_device"
    echo "$mm $QD_IOPS" >"$FID_CG_BLKIO/blkio.throttle.write_iops_device"
    ;;
  esac
  echo "$mem" >"$FID_CG_MEM/memory.limit_in_bytes"
  echo 0 >"$FID_CG_MEM/memory.failcnt"
}

drive_enter() { echo "$1" >"$FID_CG_BLKIO/cgroup.procs"; echo "$1" >"$FID_CG_MEM/cgroup.procs"; }

drives_cgroups_remove() {
  rmdir "$FID_CG_BLKIO" 2>/dev/null || true
  rmdir "$FID_CG_MEM" 2>/dev/null || true
}

# diskstats DEV: reads read_sectors writes write_sectors flushes busy_ms
# cpu_jiffies: the machine's busy and total CPU time so far ("busy total", in clock ticks;
# iowait counts as idle: a core waiting for the drive could run something else).
cpu_jiffies() { awk '$1 == "cpu" {b = $2 + $3 + $4 + $7 + $8 + $9; print b, b + $5 + $6}' /proc/stat; }
# cores_busy "B0 T0" "B1 T1": the cores kept busy on average between the two readings.
cores_busy() {
  awk -v a="$1" -v b="$2" -v n="$(nproc)" 'BEGIN {split(a, x); split(b, y);
    printf "%.3f", (y[2] > x[2] ? (y[1] - x[1]) / (y[2] - x[2]) * n : 0)}'
}
diskstats() { awk -v d="$1" '$3 == d {print $4, $6, $8, $10, ($19 == "" ? 0 : $19), $13}' /proc/diskstats; }

drop_cache() { sync; echo 3 >/proc/sys/vm/drop_caches; }
