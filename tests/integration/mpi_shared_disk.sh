#!/usr/bin/env bash
# tests/integration/mpi_shared_disk.sh: 4 ranks of one MPI job on one disk of their own
# (an ext4 loop device on a tmpfs image, so nothing else moves its bytes) count each
# other's I/O as the job's own (docs/mpi.md): no rank reports foreign I/O beyond the
# filesystem's own metadata writes, and none warns, where each rank alone would have
# called three quarters of the disk's bytes foreign. Open loop (--rate 25 per rank), so
# that the volume is the same on any machine. Needs root (loop device, mounts) and
# mpirun: skipped (77) otherwise.
# APPSIM_TEST_RUN_SERIAL: loop devices and mounts.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (loop device and mounts)"
command -v mpirun >/dev/null || skip "mpirun not found (apt-get install openmpi-bin)"
for c in losetup mkfs.ext4 python3; do command -v $c >/dev/null || skip "$c missing"; done
fail() { echo "FAIL: $*" >&2; exit 1; }
W=$APPSIM_TMP
LOOP=""
cleanup() {
  mountpoint -q "$W/mnt" && umount "$W/mnt"
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  mountpoint -q "$W/tmpfs" && umount "$W/tmpfs"
  return 0
}
trap cleanup EXIT
rm -rf "$W"
mkdir -p "$W/tmpfs" "$W/mnt"
mount -t tmpfs -o size=200m tmpfs "$W/tmpfs" || skip "cannot mount a tmpfs"
truncate -s 180M "$W/tmpfs/fs.img"
LOOP=$(losetup -f --show "$W/tmpfs/fs.img") || skip "no loop device"
# No journal: its writes are charged to no process and would count as foreign.
mkfs.ext4 -q -F -m 0 -O ^has_journal -E lazy_itable_init=0 "$LOOP"
mount "$LOOP" "$W/mnt"

export OMPI_MCA_btl_vader_single_copy_mechanism=none # containers without CMA
mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 "$APPSIM" sysbench \
  --engine sqlite --target "$W/mnt/sb-{rank}" --tables 1 --table-size 2000 --threads 2 \
  --rate 25 --warmup 1 --time 3 --keep-free 8M --json "$W/sb.json" >"$W/sb.out" 2>&1 || fail "sysbench: $(tail -20 "$W/sb.out")"

python3 - "$W/sb.json" "$(basename "$LOOP")" <<'EOF' || fail "ranks on one disk"
import json, sys
d, disk = json.load(open(sys.argv[1])), sys.argv[2]
io = [x["device_io"] for x in d["ranks"]]
if not all(isinstance(x, dict) and x["own_write_bytes"] is not None for x in io):
    print(f"skip: no block counters for {disk} or no /proc/self/io"); sys.exit(77)
for x in io:
    assert x["disk"] == disk and x["ranks_on_disk"] == 4, x
    own_all = x["ranks_own_write_bytes"] + x["ranks_own_read_bytes"]
    moved = x["write_bytes"] + x["read_bytes"]
    # Alone, each rank's own bytes were a fraction of what the disk moved...
    assert x["own_write_bytes"] + x["own_read_bytes"] < 0.5 * moved, x
    # ...together, the ranks moved (nearly) all of it.
    assert own_all >= 0.8 * moved, x
    assert "warning" not in x, x["warning"]
print("4 ranks on one disk: foreign shares", [round(x["foreign_io_share"], 3) for x in io])
EOF
grep -q "WARNING" "$W/sb.out" && fail "a warning in the text: $(grep WARNING "$W/sb.out")"
echo "mpi_shared_disk: ok"
