#!/usr/bin/env bash
# tests/integration/tpcc_e2e.sh: `appsim tpcc` end to end at scale 1 through the real
# binary and the direct-I/O VFS: prepare (with a pristine copy), check after load, runs
# with each pacing mode and a short --cycle (TPS = N / (Z + R) within 10 %), the mix,
# check after a run, two instances, bad input, space refusal, cleanup.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "jq is not installed (scripts/deps.sh lists it)"; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
T="$APPSIM_TMP/target"
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- prepare, then check on the fresh database (condition 11 applies)
"$APPSIM" tpcc prepare --target "$T" --keep-pristine --quiet --json "$APPSIM_TMP/prep.json"
jq -e '.prepare.loaded == true and .prepare.rows > 590000' "$APPSIM_TMP/prep.json" >/dev/null ||
  fail "prepare result"
"$APPSIM" tpcc check --target "$T" --integrity off > "$APPSIM_TMP/check0.txt" ||
  { cat "$APPSIM_TMP/check0.txt"; fail "check after load"; }
grep -q "as loaded" "$APPSIM_TMP/check0.txt" || fail "fresh database not recognised"
grep -E "^ *11\." "$APPSIM_TMP/check0.txt" | grep -q pass || fail "condition 11 not run after load"
# A second prepare reuses the complete database.
"$APPSIM" tpcc prepare --target "$T" --quiet --json "$APPSIM_TMP/prep2.json"
jq -e '.prepare.loaded == false' "$APPSIM_TMP/prep2.json" >/dev/null || fail "reload of a complete db"

# A run (NAME, options...) repeated until it measured some transactions (a stall of the
# shared disk may take a whole short run), at most 10 times, none with an error; the
# caller checks every run (NAME-1.json ...).
until_work() {
  local name=$1 i; shift
  for i in $(seq 1 10); do
    "$APPSIM" tpcc run --target "$T" "$@" --quiet --json "$APPSIM_TMP/$name-$i.json" > /dev/null
    jq -e '.summary.errors == 0' "$APPSIM_TMP/$name-$i.json" >/dev/null || fail "$name: errors"
    jq -e '.summary.count > 0' "$APPSIM_TMP/$name-$i.json" >/dev/null && return 0
  done
  fail "$name: no transaction in 10 runs"
}

# --- pacing off: the drive and the engine set the rate; mix by the deck.
# The checks below count transactions, not seconds: 5 s runs repeat until they hold
# 1,000 measured transactions between them (one run on an idle machine; a busy one
# takes more, up to 25 runs; on a shared disk a run may even stall through its 5 s),
# none with an error; the run with the most transactions is checked in detail.
runs=0 total=0 most=-1
while [ "$total" -lt 1000 ]; do
  [ "$runs" -lt 25 ] || fail "pacing off: only $total transactions in $runs runs of 5 s"
  runs=$((runs + 1))
  "$APPSIM" tpcc run --target "$T" --pacing off --duration 5 --warmup 0.5 --quiet \
    --json "$APPSIM_TMP/off-$runs.json" > /dev/null
  jq -e '.summary.errors == 0' "$APPSIM_TMP/off-$runs.json" >/dev/null ||
    fail "pacing off: errors (run $runs)"
  n=$(jq .summary.count "$APPSIM_TMP/off-$runs.json")
  total=$((total + n))
  if [ "$n" -gt "$most" ]; then most=$n; cp "$APPSIM_TMP/off-$runs.json" "$APPSIM_TMP/off.json"; fi
done
# Shares of the mix (45/43/4/4/4) within a few points over those transactions.
jq -s -e 'map(.per_type) as $p | ($p | map(.new_order.count + .payment.count +
  .order_status.count + .delivery.count + .stock_level.count) | add) as $n |
  def share(t): ($p | map(.[t].count) | add) / $n;
  (share("new_order") > 0.38) and (share("new_order") < 0.52) and
  (share("payment") > 0.36) and (share("payment") < 0.50) and
  (share("order_status") > 0.015) and (share("order_status") < 0.07) and
  (share("delivery") > 0.015) and (share("delivery") < 0.07) and
  (share("stock_level") > 0.015) and (share("stock_level") < 0.07)' \
  "$APPSIM_TMP"/off-[0-9]*.json >/dev/null || { jq -c .per_type "$APPSIM_TMP"/off-[0-9]*.json; fail "mix"; }
# Deferred deliveries ran in the measured phases (about 4 % of the transactions).
jq -s -e 'map(.tpcc.delivery_deferred.count) | add > 0' "$APPSIM_TMP"/off-[0-9]*.json >/dev/null ||
  fail "no deferred delivery in $total transactions"
jq -e '(.per_type.new_order.count > 0) == (.tpcc.rates.tpmC > 0) and
  .tpcc.rates.nopm <= .tpcc.rates.tpmC and .tpcc.p90_limits.new_order.pass != false and
  (.device_io | type == "object") and (.database | length == 1) and
  (.target | type == "object") and (.intervals | length >= 1) and
  ((.tpcc.per_instance[0].data | (.c_run.c_last - .c_load.c_last) | fabs) as $d |
   $d >= 65 and $d <= 119 and $d != 96 and $d != 112)' \
  "$APPSIM_TMP/off.json" >/dev/null || fail "tpcc section"
# Prefetch and group commit are on by default: every committed write transaction was
# made durable (commits) by fewer or as many WAL syncs; reads were counted per type.
jq -e '.tpcc.setup.prefetch == "on" and .tpcc.setup.group_commit == true and
  .tpcc.setup.cpu_sched == "batch" and
  (.tpcc.per_instance[0].group_commit | .commits > 0 and .wal_syncs > 0 and
   .wal_syncs <= .commits and .wal_writes_ahead <= .commits and
   .wal_blocks_written_ahead >= .wal_writes_ahead) and
  .tpcc.reads_per_txn.new_order.transactions > 0 and
  .tpcc.reads_per_txn.new_order.db_reads > 0 and (.db_pool.io_in_flight >= 0)' \
  "$APPSIM_TMP/off.json" >/dev/null ||
  { jq '.tpcc.setup, .tpcc.per_instance[0].group_commit' "$APPSIM_TMP/off.json"; fail "prefetch/group commit"; }
until_work plain --pacing off --duration 2 --warmup 0 --prefetch off --group-commit off
jq -s -e 'all(.tpcc.setup.prefetch == "off" and .tpcc.setup.group_commit == false and
  (.tpcc.per_instance[0].group_commit == null))' \
  "$APPSIM_TMP"/plain-*.json >/dev/null || fail "--prefetch off --group-commit off"

# --- the connections' threads run as SCHED_BATCH (policy 3 in /proc's stat), the rest
# (the user scheduler, the reporter, the WAL flusher) as SCHED_OTHER (0); with
# --cpu-sched normal every thread is SCHED_OTHER. Sampled while a run is measuring.
thread_policies() { # PID: the distinct scheduling policies of its threads, one per line
  local st
  for st in /proc/"$1"/task/*/stat; do
    sed 's/.*) //' "$st" 2>/dev/null | awk '{print $39}'
  done | sort -u
}
for sched in batch normal; do
  "$APPSIM" tpcc run --target "$T" --pacing off --connections 4 --duration 4 --warmup 0 \
    --cpu-sched "$sched" --quiet --json "$APPSIM_TMP/sched-$sched.json" > /dev/null &
  pid=$!
  policies=""
  for _ in $(seq 1 40); do
    sleep 0.1
    policies=$(thread_policies "$pid" | tr '\n' ' ')
    [ "$sched" = normal ] && [ -n "$policies" ] && [ "$(ls /proc/$pid/task | wc -l)" -gt 6 ] && break
    [ "$sched" = batch ] && [[ " $policies" == *" 3 "* ]] && break
  done
  wait "$pid" || fail "--cpu-sched $sched: the run failed"
  case $sched in
    batch) [[ " $policies" == *" 3 "* && " $policies" == *" 0 "* ]] ||
             fail "--cpu-sched batch: thread policies seen: $policies (want 3 and 0)" ;;
    normal) [ "$policies" = "0 " ] || fail "--cpu-sched normal: thread policies seen: $policies" ;;
  esac
  jq -e --arg s "$sched" '.tpcc.setup.cpu_sched == $s' "$APPSIM_TMP/sched-$sched.json" >/dev/null ||
    fail "--cpu-sched $sched not recorded"
done

# --- closed loop with a short cycle: TPS = N / (Z + R) within 10 %. The law holds
# whatever the speed (R counts every wait), but a stall of the shared disk at the end
# of the phase leaves its transactions out of R: up to 3 runs, one must follow it.
N=10; Z=0.1
for i in 1 2 3; do
  "$APPSIM" tpcc run --target "$T" --vusers $N --cycle ${Z}s --duration 8 --warmup 1 --quiet \
    --json "$APPSIM_TMP/cycle.json" > /dev/null
  jq -e --argjson n $N --argjson z $Z '
    (.summary.latency_us.mean_us / 1e6) as $r | ($n / ($z + $r)) as $law |
    (.summary.tps / $law) as $q | $q > 0.9 and $q < 1.1' "$APPSIM_TMP/cycle.json" >/dev/null &&
    break
  jq -c '{tps: .summary.tps, mean_us: .summary.latency_us.mean_us}' "$APPSIM_TMP/cycle.json"
  [ $i -lt 3 ] || fail "TPS does not follow N / (Z + R) in 3 runs"
done

# --- review pacing: 100 users offer at most 100 / 4.74 = 21 TPS
until_work review --vusers 100 --duration 3 --warmup 0
jq -s -e 'all(.summary.tps < 30 and .tpcc.setup.mean_cycle_s == 4.74)' \
  "$APPSIM_TMP"/review-*.json >/dev/null || fail "review pacing"

# --- spec pacing: keying + think times; each user's first transaction waits >= 2 s
until_work spec --pacing spec --vusers 300 --duration 3 --warmup 0
jq -s -e 'all(.summary.tps < 150 and .tpcc.setup.pacing == "spec")' \
  "$APPSIM_TMP"/spec-*.json >/dev/null || fail "spec pacing"

# --- check after the runs (condition 11 skipped)
"$APPSIM" tpcc check --target "$T" --integrity off > "$APPSIM_TMP/check1.txt" ||
  { cat "$APPSIM_TMP/check1.txt"; fail "check after run"; }
grep -E "^ *11\." "$APPSIM_TMP/check1.txt" | grep -q skipped || fail "condition 11 after a run"

# --- keep-pristine: the run starts from the loaded state again
"$APPSIM" tpcc run --target "$T" --keep-pristine --pacing off --duration 1 --warmup 0 --quiet \
  --json "$APPSIM_TMP/pristine.json" > /dev/null
jq -e '.tpcc.per_instance[0].pristine.restored.bytes > 1000000' "$APPSIM_TMP/pristine.json" \
  >/dev/null || fail "pristine restore"

# --- two instances (the second is loaded now): TPS summed, per-instance figures
"$APPSIM" tpcc --target "$T" --instances 2 --pacing off --duration 2 --warmup 0 --quiet \
  --json "$APPSIM_TMP/two.json" > /dev/null
jq -e '(.tpcc.per_instance | length == 2) and (.instances | length == 2) and
  ((.tpcc.per_instance[0].tps + .tpcc.per_instance[1].tps) - .summary.tps | fabs < 0.01) and
  .check.pass == true' "$APPSIM_TMP/two.json" >/dev/null || fail "two instances"

# --- bad input: usage errors with exit status 2
set +e
"$APPSIM" tpcc run --target "$T" --mix 50,40,4,4,2 2>/dev/null; [ $? -eq 2 ] || fail "bad --mix"
"$APPSIM" tpcc run --target "$T" --scale 2 --duration 1 2>"$APPSIM_TMP/err.txt"
[ $? -eq 2 ] && grep -q "scale" "$APPSIM_TMP/err.txt" || fail "scale mismatch"
"$APPSIM" tpcc run --target "$APPSIM_TMP/empty" --duration 1 2>"$APPSIM_TMP/err.txt"
[ $? -eq 2 ] && grep -q "prepare" "$APPSIM_TMP/err.txt" || fail "run without prepare"
"$APPSIM" tpcc frobnicate --target "$T" 2>/dev/null; [ $? -eq 2 ] || fail "bad action"
"$APPSIM" tpcc run --target /dev/null 2>"$APPSIM_TMP/err.txt"
[ $? -eq 2 ] || fail "a non-directory target"
"$APPSIM" tpcc run --target "$T" --vusers 4 --connections 5 2>/dev/null
[ $? -eq 2 ] || fail "more connections than users"
"$APPSIM" tpcc run --target "$T" --sync off --group-commit on 2>"$APPSIM_TMP/err.txt"
[ $? -eq 2 ] && grep -q "needs --sync full" "$APPSIM_TMP/err.txt" || fail "group commit without sync full"
set -e

# --- space refusal with the estimate, before anything is loaded
if mkdir -p "$APPSIM_TMP/small" && mount -t tmpfs -o size=40m tmpfs "$APPSIM_TMP/small" 2>/dev/null; then
  set +e
  "$APPSIM" tpcc prepare --target "$APPSIM_TMP/small/d" 2>"$APPSIM_TMP/err.txt"; rc=$?
  set -e
  ls "$APPSIM_TMP/small/d" > "$APPSIM_TMP/small.ls" 2>/dev/null || true
  umount "$APPSIM_TMP/small"
  [ $rc -eq 2 ] && grep -q "not enough space" "$APPSIM_TMP/err.txt" || fail "space refusal"
  ! grep -q "tpcc-1.db" "$APPSIM_TMP/small.ls" || fail "files created despite the refusal"
fi

# --- cleanup removes exactly our files
"$APPSIM" tpcc cleanup --target "$T" > /dev/null
[ -z "$(ls "$T" | grep tpcc || true)" ] || fail "cleanup left files"
echo "tpcc e2e: ok"
