#!/usr/bin/env bash
# tests/integration/foreign_io.sh: another process reading the same disk during a run
# is detected and said: a light replay (400 reads of 4 KiB over 2 s) while dd reads
# another file on the disk with O_DIRECT (2 MiB every 0.2 s, about 20 MiB); the result's
# device_io counts appsim's own bytes, puts most of the disk's bytes down to someone
# else (foreign_io_share), carries a warning, and the text output prints it; a rate curve
# run meanwhile says which points shared the disk under its table; compare and report of
# both results show the share per drive and the warnings.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"
mkdir -p "$APPSIM_TMP/tgt"
T=$APPSIM_TMP
fail() {
  echo "FAIL: $*"
  exit 1
}

if ! dd if=/dev/zero of="$T/other.bin" bs=1M count=8 oflag=direct status=none 2>/dev/null; then
  echo "skip: $T does not take O_DIRECT (tmpfs?); no disk to share"
  exit 77
fi
{
  echo "fio version 3 iolog"
  echo "0 f add"
  for i in $(seq 0 399); do echo "$((i * 5000)) f read $(((i * 7919) % 2048 * 4096)) 4096"; done
} >"$T/t.log"

# The other process: O_DIRECT reads, so the page cache cannot answer for them.
(
  while :; do
    dd if="$T/other.bin" of=/dev/null bs=1M count=2 iflag=direct status=none
    sleep 0.2
  done
) &
other=$!
trap 'kill $other 2>/dev/null || true' EXIT
sleep 0.5
"$APPSIM" replay "$T/t.log" --target "$T/tgt" --json "$T/r.json" >"$T/out.txt" 2>"$T/err.txt" ||
  fail "replay: $(cat "$T/err.txt")"
# A rate curve meanwhile: each point is a run with its own device figures.
"$APPSIM" replay "$T/t.log" --target "$T/tgt" --curve --curve-points 50 --point-warmup 0.2 \
  --point-duration 1 --qd 4 --json "$T/c.json" >"$T/curve.txt" 2>"$T/err.txt" ||
  fail "replay --curve: $(cat "$T/err.txt")"
kill $other
wait $other 2>/dev/null || true
trap - EXIT

python3 - "$T/r.json" <<'EOF' || exit $?
import json, sys
d = json.load(open(sys.argv[1])).get("device_io")
if not isinstance(d, dict):
    print("skip: no block-layer counters for this target's disk")
    sys.exit(77)
if d["own_read_bytes"] is None:
    print("skip: the kernel keeps no per-process I/O accounting (/proc/self/io)")
    sys.exit(77)
own, disk = d["own_read_bytes"], d["read_bytes"]
# appsim's own reads are counted: all 400 x 4 KiB went to the disk (O_DIRECT).
assert own >= 400 * 4096, d
# dd read about 20 MiB meanwhile: most of the disk's bytes were not appsim's.
assert d["foreign_read_bytes"] >= 8 << 20, d
assert d["foreign_io_share"] > 0.5, d
assert "not appsim's" in d["warning"], d
EOF
grep -q "WARNING: .* not appsim's" "$T/out.txt" || fail "no warning in the text: $(cat "$T/out.txt")"

# The curve's table names the points whose device figures carry the warning.
python3 - "$T/c.json" <<'EOF' || fail "curve points' warnings"
import json, sys
pts = json.load(open(sys.argv[1]))["curve"]["points"]
warned = [p for p in pts if "warning" in p["run"]["device_io"]]
assert warned, [p["run"]["device_io"].get("foreign_io_share") for p in pts]
EOF
grep -q "WARNING: other processes used the disk during point.*not appsim's" "$T/curve.txt" ||
  fail "no warning under the curve table: $(cat "$T/curve.txt")"

# compare and report: the share as a row of each table, the warnings under it.
"$APPSIM" compare "$T/r.json" "$T/c.json" >"$T/cmp.txt" 2>"$T/err.txt" || fail "compare: $(cat "$T/err.txt")"
[ "$(grep -c "^foreign I/O share of the disk (%)" "$T/cmp.txt")" = 2 ] ||
  fail "compare lacks the foreign I/O row: $(cat "$T/cmp.txt")"
[ "$(grep -c "^warning: .*r.json): .* not appsim's" "$T/cmp.txt")" = 1 ] &&
  grep -q "^warning: .*c.json): foreign I/O in [0-9]* of its 2 measured phases" "$T/cmp.txt" ||
  fail "compare lacks the warnings: $(cat "$T/cmp.txt")"
"$APPSIM" report "$T/r.json" "$T/c.json" -o "$T/r.html" 2>"$T/err.txt" || fail "report: $(cat "$T/err.txt")"
[ "$(grep -o "foreign I/O share of the disk" "$T/r.html" | wc -l)" -ge 2 ] &&
  grep -q "c.json): foreign I/O in" "$T/r.html" || fail "the report lacks the foreign I/O row or warning"
rm -rf "$T"
echo ok
