#!/usr/bin/env bash
# --warmup steady through the real binary: sysbench and replay on a directory target
# with short rounds. The warm-up runs in rounds, one line each; the result records
# every round, the verdict (reached, or gave_up after --steady-max-rounds) and when
# the measured phase started, which equals the warm-up's length; steady options
# without --warmup steady, and replay's steady warm-up without --duration, are
# refused with exit status 2. Every run's measured phase gets a verdict of its own
# (measure_steadiness) once it has ten intervals.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/sb" "$APPSIM_TMP/rp"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect2() { set +e; "$@" >/dev/null 2>&1; local rc=$?; set -e; [ $rc -eq 2 ] || fail "exit $rc, not 2: $*"; }

# The rounds, the verdict and the measured phase's start agree with each other.
check_result() {
  local json=$1 max=$2
  jq -e --argjson max "$max" '
    .config.warmup == "steady" and
    (.steady_state.rounds | length) as $n |
    ($n >= 5 and $n <= $max) and
    (.steady_state.after_rounds == $n) and
    ([.steady_state.rounds[] | .rate >= 0 and .seconds > 0] | all) and
    (if .steady_state.reached
       then (.steady_state.rounds[-1].steady and ([.steady_state.rounds[:-1][] | .steady] | any | not))
       else (.steady_state.gave_up and $n == $max) end) and
    ((.steady_state.measure_start_s - .warmup.seconds) | fabs < 0.001) and
    ((.steady_state.measure_start_s - .steady_state.rounds[-1].t) | fabs < 0.5) and
    .summary.count > 0' "$json" >/dev/null || fail "steady-state result $json: $(jq -c .steady_state "$json")"
}

"$APPSIM" sysbench --target "$APPSIM_TMP/sb" --tables 2 --table-size 2000 --threads 2 --sync off \
  --warmup steady --steady-round 300ms --steady-max-rounds 7 --time 1 \
  --json "$APPSIM_TMP/sb.json" >"$APPSIM_TMP/sb.out" 2>&1 || fail "sysbench: $(cat "$APPSIM_TMP/sb.out")"
check_result "$APPSIM_TMP/sb.json" 7
lines=$(grep -c "steady-state round" "$APPSIM_TMP/sb.out")
[ "$lines" -eq "$(jq '.steady_state.rounds | length' "$APPSIM_TMP/sb.json")" ] || fail "one line per round"
grep -q "steady state" "$APPSIM_TMP/sb.out" || fail "summary names the steady-state verdict"

# replay: 200 writes of 4 KiB, looped as fast as possible until steady, then 1 s
{
  echo "fio version 3 iolog"; echo "0 f add"
  for i in $(seq 0 199); do echo "$((i * 100)) f write $(((i * 7919) % 512 * 4096)) 4096"; done
} > "$APPSIM_TMP/t.log"
"$APPSIM" replay "$APPSIM_TMP/t.log" --target "$APPSIM_TMP/rp" --timing afap --qd 4 \
  --warmup steady --steady-round 300ms --steady-max-rounds 6 --duration 1 \
  --json "$APPSIM_TMP/rp.json" >"$APPSIM_TMP/rp.out" 2>&1 || fail "replay: $(cat "$APPSIM_TMP/rp.out")"
check_result "$APPSIM_TMP/rp.json" 6
jq -e '.steady_state.unit == "iops"' "$APPSIM_TMP/rp.json" >/dev/null || fail "replay rounds are in IOPS"

# Every run's measured phase is judged after the fact (measure_steadiness): in fifths
# of its intervals, with a line in the summary; a phase of fewer than ten intervals has
# no verdict (null) and no line.
"$APPSIM" replay "$APPSIM_TMP/t.log" --target "$APPSIM_TMP/rp" --timing afap --qd 4 \
  --warmup 0.5 --duration 2 --report-interval 100ms \
  --json "$APPSIM_TMP/ms.json" >"$APPSIM_TMP/ms.out" 2>&1 || fail "replay: $(cat "$APPSIM_TMP/ms.out")"
jq -e '.measure_steadiness as $m | ($m.rates | length) == 5 and ([$m.rates[] | . > 0] | all) and
  ($m.steady | type) == "boolean" and $m.unit == "iops" and ($m.device_read_latency_us | length) == 5 and
  ($m.mean - (.summary.count / .summary.seconds) | fabs) < 0.05 * $m.mean' "$APPSIM_TMP/ms.json" >/dev/null ||
  fail "measure_steadiness: $(jq -c .measure_steadiness "$APPSIM_TMP/ms.json")"
grep -q "measured phase .*steady: iops by fifths" "$APPSIM_TMP/ms.out" || fail "summary line of the verdict"
jq -e '.measure_steadiness == null' "$APPSIM_TMP/rp.json" >/dev/null || fail "1 s measured: no verdict"
grep -q "measured phase" "$APPSIM_TMP/rp.out" && fail "1 s measured: no verdict line"

expect2 "$APPSIM" sysbench run --target "$APPSIM_TMP/sb" --steady-round 2s --time 1
expect2 "$APPSIM" sysbench run --target "$APPSIM_TMP/sb" --warmup steady --steady-max-rounds 4 --time 1
expect2 "$APPSIM" sysbench run --target "$APPSIM_TMP/sb" --warmup stable --time 1
expect2 "$APPSIM" tpcc run --target "$APPSIM_TMP/sb" --steady-max-rounds 9
expect2 "$APPSIM" replay "$APPSIM_TMP/t.log" --target "$APPSIM_TMP/rp" --warmup steady
echo "ok"
