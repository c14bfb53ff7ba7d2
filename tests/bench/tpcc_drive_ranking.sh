#!/usr/bin/env bash
# tests/bench/tpcc_drive_ranking.sh: does appsim rank four drives in the order the
# real databases do (docs/fidelity.md)?
#   ram:         ext4 on a zram device the script creates (and removes)
#   disk:        a directory on the disk that holds DISK_DIR
#   read-capped: the same directory, appsim in a cgroup v1 blkio group capped at
#                READ_IOPS (1500) reads per second on that disk
#   write-capped: the same, capped at WRITE_IOPS (400) writes per second
# PostgreSQL with sysbench and sysbench-tpcc ranks them ram > disk > read-capped >
# write-capped. For each binary given (NAME=PATH, e.g. before=old/appsim
# after=build/appsim), each drive: prepare a pristine database once per binary and
# filesystem, then restore it, drop the page cache and run `tpcc run --pacing off`;
# print TPS and p99, and whether the binary's order matches.
# usage: sudo tests/bench/tpcc_drive_ranking.sh DISK_DIR NAME=APPSIM [NAME=APPSIM...]
# Environment: SCALE (10), CONNS (8), USERS (80), DURATION (60s), WARMUP (20s),
#   READ_IOPS (1500), WRITE_IOPS (400), ZRAM_SIZE (4G).
# Needs root (zram, mount, cgroup v1 blkio, drop_caches). Not run by ctest.
set -euo pipefail
DISK_DIR=${1:?directory on the disk to test}
shift
[ $# -ge 1 ] || { echo "usage: $0 DISK_DIR NAME=APPSIM [NAME=APPSIM...]" >&2; exit 2; }
SCALE=${SCALE:-10} CONNS=${CONNS:-8} USERS=${USERS:-80}
DURATION=${DURATION:-60s} WARMUP=${WARMUP:-20s}
READ_IOPS=${READ_IOPS:-1500} WRITE_IOPS=${WRITE_IOPS:-400} ZRAM_SIZE=${ZRAM_SIZE:-4G}
command -v jq >/dev/null || { echo "jq is not installed" >&2; exit 2; }
[ -d /sys/fs/cgroup/blkio ] || { echo "needs the cgroup v1 blkio controller" >&2; exit 2; }
mkdir -p "$DISK_DIR"

# The disk under DISK_DIR, as MAJ:MIN of the whole device (the throttle's key).
dev=$(df --output=source "$DISK_DIR" | tail -1)
parent=$(lsblk -ndo PKNAME "$dev" | tr -d ' ')
[ -z "$parent" ] || dev=/dev/$parent
MM=$(lsblk -ndo MAJ:MIN "$dev" | tr -d ' ')
[ -n "$MM" ] || { echo "cannot tell the disk under $DISK_DIR" >&2; exit 2; }

ZID=$(cat /sys/class/zram-control/hot_add)
ZMNT=$(mktemp -d /tmp/appsim-rank-zram-XXXXXX)
CG=/sys/fs/cgroup/blkio/appsim-rank-$$
cleanup() {
    umount "$ZMNT" 2>/dev/null || true
    rmdir "$ZMNT" 2>/dev/null || true
    echo "$ZID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
    rmdir "$CG" 2>/dev/null || true
}
trap cleanup EXIT
echo "$ZRAM_SIZE" >"/sys/block/zram$ZID/disksize"
mkfs.ext4 -q "/dev/zram$ZID"
mount "/dev/zram$ZID" "$ZMNT"
mkdir "$CG"

drop_cache() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# run NAME APPSIM DRIVE: one run; prints "tps p99_ms".
run() {
    local name=$1 bin=$2 drive=$3 dir rd=0 wr=0
    case $drive in
    ram) dir=$ZMNT/$name ;;
    *) dir=$DISK_DIR/$name ;;
    esac
    case $drive in
    read-capped) rd=$READ_IOPS ;;
    write-capped) wr=$WRITE_IOPS ;;
    esac
    if [ ! -e "$dir/.prepared" ]; then
        "$bin" tpcc prepare --target "$dir" --scale "$SCALE" --keep-pristine --quiet >/dev/null
        touch "$dir/.prepared"
    fi
    echo "$MM $rd" >"$CG/blkio.throttle.read_iops_device"
    echo "$MM $wr" >"$CG/blkio.throttle.write_iops_device"
    drop_cache
    local out=$DISK_DIR/$name-$drive.json
    sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$CG" \
        "$bin" tpcc run --target "$dir" --scale "$SCALE" --keep-pristine --pacing off \
        --vusers "$USERS" --connections "$CONNS" --duration "$DURATION" --warmup "$WARMUP" \
        --quiet --json "$out" >/dev/null
    jq -r '"\(.summary.tps) \(.summary.latency_us.p99_us / 1000)"' "$out"
}

status=0
printf '%-8s %-13s %9s %9s %s\n' binary drive tps p99_ms load
for spec in "$@"; do
    name=${spec%%=*} bin=${spec#*=}
    prev=""
    order_ok=1
    for drive in ram disk read-capped write-capped; do
        read -r tps p99 < <(run "$name" "$bin" "$drive")
        printf '%-8s %-13s %9.1f %9.1f %s\n' "$name" "$drive" "$tps" "$p99" \
            "$(cut -d' ' -f1-3 /proc/loadavg)"
        if [ -n "$prev" ] && awk -v a="$prev" -v b="$tps" 'BEGIN{exit !(b >= a)}'; then
            order_ok=0
        fi
        prev=$tps
    done
    # the RAM drive holds one binary's database at a time (ZRAM_SIZE fits one)
    rm -rf "${ZMNT:?}/$name"
    if [ $order_ok = 1 ]; then
        echo "$name: ranks ram > disk > read-capped > write-capped (PostgreSQL's order)"
    else
        echo "$name: order differs from PostgreSQL's"
        status=1
    fi
done
exit $status
