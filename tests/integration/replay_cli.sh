#!/usr/bin/env bash
# `appsim replay` through the real binary on a directory target in $APPSIM_TMP: the
# result document (every record accounted, bytes matching the trace), refusal of a
# data file smaller than the trace without --map (exit 2, says what to do), wrap and
# scale mapping, afap with --loop, --duration looping, a short --curve, and bad
# options (exit 2).
set -u
fail() { echo "FAIL: $*"; exit 1; }
T=$APPSIM_TMP
rm -rf "$T"; mkdir -p "$T/tgt"
"$APPSIM" replay --help | grep -q -- "--curve" || fail "replay --help"
"$APPSIM" replay >/dev/null 2>&1; [ $? -eq 2 ] || fail "replay without arguments must exit 2"

# 600 I/Os over 0.3 s: 4 KiB, reads and writes, in an 8 MiB span, plus a trim.
{
  echo "fio version 3 iolog"; echo "0 f add"
  for i in $(seq 0 599); do
    if [ $((i % 4)) -eq 0 ]; then op=write; else op=read; fi
    echo "$((i * 500)) f $op $(((i * 7919) % 2048 * 4096)) 4096"
  done
  echo "300000 f trim 0 65536"
} > "$T/t.log"
j() { grep -o "\"$1\": [0-9.]*" "$2" | head -1 | awk '{print $2}'; }
"$APPSIM" replay "$T/t.log" --target "$T/tgt" --json "$T/r1.json" >"$T/out1" 2>&1 || fail "replay: $(cat "$T/out1")"
grep -q "submission lag" "$T/out1" || fail "text summary shows the lag"
[ "$(j issued "$T/r1.json")" = 600 ] || fail "issued $(j issued "$T/r1.json") of 600"
[ "$(j trims_skipped "$T/r1.json")" = 1 ] || fail "trim on a file must be counted as skipped"
[ "$(j bytes_read "$T/r1.json")" = $((450 * 4096)) ] || fail "bytes read"
[ "$(j bytes_written "$T/r1.json")" = $((150 * 4096)) ] || fail "bytes written"
grep -q '"workload": "replay"' "$T/r1.json" || fail "result names the workload"
grep -q '"target"' "$T/r1.json" || fail "result has the target section"
grep -q '"p99_us"' "$T/r1.json" || fail "lag percentiles"

# smaller data file: refused without --map, accepted with wrap or scale
err=$("$APPSIM" replay "$T/t.log" --target "$T/tgt" --file-size 1M 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "a data file smaller than the trace must be refused (exit $rc)"
echo "$err" | grep -q -- "--map" || fail "refusal must say what to do: $err"
for m in wrap scale; do
  "$APPSIM" replay "$T/t.log" --target "$T/tgt" --file-size 1M --map $m --timing afap \
    --json "$T/m.json" >/dev/null 2>&1 || fail "--map $m"
  [ "$(j issued "$T/m.json")" = 600 ] || fail "--map $m issued"
  [ "$(j errors "$T/m.json")" = 0 ] || fail "--map $m errors"
done
"$APPSIM" replay "$T/t.log" --target "$T/tgt" --region 1M:2M --map wrap --timing afap \
  --json "$T/g.json" >/dev/null 2>&1 || fail "--region"
grep -q '"base": 1048576' "$T/g.json" || fail "--region base"

# afap with loops, duration looping
"$APPSIM" replay "$T/t.log" --target "$T/tgt" --timing afap --qd 8 --loop 3 --json "$T/l.json" \
  >/dev/null 2>&1 || fail "--loop"
[ "$(j issued "$T/l.json")" = 1800 ] || fail "--loop 3 issued $(j issued "$T/l.json")"
"$APPSIM" replay "$T/t.log" --target "$T/tgt" --duration 1 --json "$T/d.json" >/dev/null 2>&1 \
  || fail "--duration"
# --duration loops the 0.3 s trace: every pass whose records were all due before the end
# of the 1 s, less the worst submission lag the run measured itself, was completed. A
# busy machine lags, and then fewer passes are owed; a replay that does not loop
# completes one pass however fast it is.
python3 - "$T/d.json" <<'EOF' || fail "--duration 1 s does not loop a 0.3 s trace"
import json, sys
r = json.load(open(sys.argv[1]))["replay"]
lag_s = r["submission_lag_us"]["max_us"] / 1e6
owed = max(1, int((1.0 - lag_s) / 0.3))
assert r["passes"] >= owed, (r["passes"], "passes, owed", owed, "with a worst lag of", lag_s)
assert r["issued"] >= 600 * r["passes"], (r["issued"], r["passes"])
EOF

# a short curve
"$APPSIM" replay "$T/t.log" --target "$T/tgt" --curve --curve-points 50,100 --point-warmup 0.2 \
  --point-duration 0.5 --qd 4 --json "$T/c.json" >"$T/c.out" 2>&1 || fail "curve: $(cat "$T/c.out")"
grep -q "rate curve" "$T/c.out" || fail "curve table"
[ "$(grep -o '"target_iops"' "$T/c.json" | wc -l)" -eq 3 ] || fail "curve points"
"$APPSIM" replay "$T/t.log" --target "$T/tgt" --curve --timing afap >/dev/null 2>&1
[ $? -eq 2 ] || fail "--curve with --timing must exit 2"

for bad in "--curve --speed 2" "--curve --warmup 1" "--point-duration 1" "--uniform" \
           "--timing afap --speed 2"; do
  "$APPSIM" replay "$T/t.log" --target "$T/tgt" $bad >/dev/null 2>&1
  [ $? -eq 2 ] || fail "$bad must be refused (no option accepted and ignored)"
done

# bad input
"$APPSIM" replay "$T/t.log" --target "$T/tgt" --region 5 >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad --region"
"$APPSIM" replay "$T/t.log" --target "$T/tgt" --qd 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--qd 0"
sed '5s/read/raed/' "$T/t.log" > "$T/bad.log"
err=$("$APPSIM" replay "$T/bad.log" --target "$T/tgt" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "malformed trace must exit 2, got $rc"
echo "$err" | grep -q "bad.log:5:" || fail "file:line in the message: $err"
"$APPSIM" replay "$T/t.log" --target "$T/no/such-dir" >/dev/null 2>&1; [ $? -eq 2 ] || fail "a target whose parent is missing"
"$APPSIM" cleanup --target "$T/tgt" >/dev/null 2>&1 || true
echo "replay cli: ok"
