#!/usr/bin/env bash
# The OLTP curves harness without its drives: tests/bench/oltp_curves.sh refuses a
# missing binary, bad arguments and a user who is not root (exit 2, nothing set up), and
# tests/bench/oltp_curves_report.py computes its tables and its three checks from the
# curve fixtures (tests/integration/oltp_curve/), turning each to "no" when a fixture is
# changed to break it.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}" "${APPSIM_SRC:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: python3 is not installed"; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
bench=$APPSIM_SRC/tests/bench/oltp_curves.sh
report=$APPSIM_SRC/tests/bench/oltp_curves_report.py

# expect_refusal WHAT MESSAGE CMD...: exit 2 with MESSAGE on stderr, no OUT_DIR made.
expect_refusal() {
  local what=$1 msg=$2 rc=0
  shift 2
  "$@" >out.txt 2>err.txt || rc=$?
  [ "$rc" -eq 2 ] || fail "$what: exit $rc, not 2 ($(cat err.txt))"
  grep -q -- "$msg" err.txt || fail "$what: no '$msg' in: $(cat err.txt)"
  [ ! -e "$APPSIM_TMP/o" ] || fail "$what: OUT_DIR was created"
}
expect_refusal "no OUT_DIR" "usage: sudo tests/bench/oltp_curves.sh" bash "$bench"
expect_refusal "unknown option" "usage:" bash "$bench" --bogus x o
expect_refusal "missing binary" "no appsim binary at $APPSIM_TMP/none" env APPSIM="$APPSIM_TMP/none" bash "$bench" o
if [ "$(id -u)" -eq 0 ]; then
  if command -v setpriv >/dev/null; then
    chmod 755 "$APPSIM_TMP"
    expect_refusal "not root" "needs root" setpriv --reuid 65534 --regid 65534 --clear-groups \
      env APPSIM="$APPSIM" bash "$bench" "$APPSIM_TMP/o"
  else
    echo "note: setpriv missing, the refusal of a user who is not root is not tested"
  fi
else
  expect_refusal "not root" "needs root" env APPSIM="$APPSIM" bash "$bench" o
fi
if [ "$(id -u)" -eq 0 ]; then
  expect_refusal "bad buffer" "TPCC_BUFFER and SB_BUFFER" env APPSIM="$APPSIM" TPCC_BUFFER=32k bash "$bench" o
  expect_refusal "unknown drive" "unknown drive 'nvme'" env APPSIM="$APPSIM" bash "$bench" --drives ram,nvme o
fi

# The report from the fixtures: three tpcc rate curves (fast, loose, slow) and one
# sysbench user-step curve; loose was judged against another limit.
mkdir fx
cp "$APPSIM_SRC"/tests/integration/oltp_curve/{fast,slow,users}.json fx/
jq '.curve.max_tps = 200' fx/slow.json >fx/slower.json
python3 "$report" fx >r.md || fail "report exit $?"
grep -q '^| slower | 200.0 | none met | 3 | 2 |$' r.md || fail "two drives without a service level tie"
grep -q '^| fast | 812.4 | 650.0 | 1 | 1 |$' r.md || fail "fast's ranking row: $(grep '^| fast |' r.md)"
grep -q '^| slow | 300.0 | none met | 2 | 2 |$' r.md || fail "slow's ranking row"
grep -q '^| 3 | 100 % | 812.4 | 700.3 | 86.2 % | \*\*no\*\* | no | 310.0 | 900.0 |$' r.md || fail "fast's 100 % row"
grep -q '^| tpcc | yes | yes | no | yes |$' r.md || fail "tpcc verdicts: $(grep '^| tpcc |' r.md)"
grep -q '^| sysbench | yes | n/a | n/a | n/a |$' r.md || fail "user steps have no open-loop checks"
grep -q 'largest -0.58 % (80 %: 646.2 of 650.0)' r.md || fail "fast's largest deviation"
grep -q 'fast: p99 ms by offered rate 6.00 -> 15.0 -> 900.0; no drop' r.md || fail "fast's p99 sequence"

# Each check turns to "no" when the figures break it.
jq '.service_level.tps = 700' fx/slow.json >fx/slow.tmp && mv fx/slow.tmp fx/slow.json
jq '.curve.points[1].achieved_tps = 300' fx/fast.json >fx/fast.tmp && mv fx/fast.tmp fx/fast.json
python3 "$report" fx >r.md
grep -q '^| tpcc | no | no | no | yes |$' r.md || fail "broken order and rate: $(grep '^| tpcc |' r.md)"
grep -q 'reversed: fast/slow)' r.md || fail "the reversed pair not named"
grep -q 'against the offered rate 1 outside 2 %, largest -7.69 %' r.md || fail "the deviation that broke it"
jq '.curve.points[2].latency_ms.p99 = 4' fx/fast.json >fx/fast.tmp && mv fx/fast.tmp fx/fast.json
python3 "$report" fx >r.md
grep -q '^| tpcc | no | no | no | no |$' r.md || fail "broken p99 order: $(grep '^| tpcc |' r.md)"
grep -q 'drops beyond the allowance: 40 % 6.00 ms -> 80 % 4.00 ms (-33 %)' r.md || fail "the drop named"
python3 "$report" --p99-noise 40 fx >r.md
grep -q '^| tpcc | no | no | no | yes |$' r.md || fail "--p99-noise 40 allows a drop of 33 %"

# With the arrivals drawn (as `run` writes them), the drive kept up within 2 % of them.
jq '.curve.points[1].achieved_tps = 324.1 | .curve.points[1].open_loop = {arrived_tps: 330, arrivals: 990}
    | .curve.points[2].open_loop = {arrived_tps: 650, arrivals: 1950}' fx/fast.json >fx/fast.tmp
mv fx/fast.tmp fx/fast.json
rm fx/slow.json fx/slower.json
python3 "$report" fx >r.md
grep -q '^| tpcc | yes | yes | yes | no |$' r.md || fail "kept up with the arrivals: $(grep '^| tpcc |' r.md)"
grep -q 'against the arrivals drawn largest -1.79 %, the arrivals at most +0.5 standard deviations' r.md ||
  fail "the arrivals' figures: $(grep '^  - fast:' r.md)"

rc=0; mkdir empty; python3 "$report" empty >/dev/null 2>err.txt || rc=$?
[ $rc -eq 2 ] || fail "empty directory: exit $rc, not 2"
grep -q 'no result with a curve' err.txt || fail "empty directory: $(cat err.txt)"
echo "oltp_curves_bench: ok"
