#!/usr/bin/env bash
# Run modes of `appsim sysbench` on both engines: closed loop obeys Little's law
# (TPS = threads / mean latency within 5 %, the issue's one timing assertion), open
# loop with --rate runs and records latency from the arrival, --instances N keeps N
# independent table sets whose counts add up to the summary, the default action
# prepares when needed and then runs, and bad input is refused with exit status 2.
# APPSIM_TEST_RUN_SERIAL: the Little's law check is a timing measurement.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
SHAPE=(--tables 2 --table-size 3000)

for engine in sqlite lmdb; do
  T="$APPSIM_TMP/$engine"
  # no action: prepares (absent), then runs; instances 2
  "$APPSIM" sysbench --engine "$engine" --target "$T" "${SHAPE[@]}" --instances 2 --threads 2 \
    --time 1 --sync off --workload oltp_read_only --quiet --json "$T.auto.json" >/dev/null
  jq -e '.prepare.rows == 12000 and .summary.count > 0' "$T.auto.json" >/dev/null || fail "$engine auto prepare+run"
  jq -e '(.instances | length) == 2 and ([.instances[].summary.count] | add) == .summary.count
         and all(.instances[]; .summary.count > 0)' "$T.auto.json" >/dev/null || fail "$engine instances"
  # second time: already prepared, runs only
  "$APPSIM" sysbench --engine "$engine" --target "$T" "${SHAPE[@]}" --instances 2 --threads 1 \
    --time 1 --sync off --workload oltp_point_select --quiet --json "$T.auto2.json" >/dev/null
  jq -e '.prepare == null and .summary.count > 0' "$T.auto2.json" >/dev/null || fail "$engine second auto run prepared again"

  # Little's law, closed loop, no think time: TPS = threads / mean latency
  "$APPSIM" sysbench run --engine "$engine" --target "$T" "${SHAPE[@]}" --instances 2 --threads 4 \
    --time 4 --warmup 1 --sync off --workload oltp_read_write --quiet --json "$T.ll.json" >/dev/null
  jq -e '(.summary.tps) as $x | (8 / (.summary.latency_us.mean_us / 1e6)) as $y |
         (($x - $y) | fabs) / $x < 0.05' "$T.ll.json" >/dev/null \
    || fail "$engine Little's law: tps $(jq .summary.tps "$T.ll.json") vs 8/mean $(jq '8/(.summary.latency_us.mean_us/1e6)' "$T.ll.json")"
  jq -e '.warmup.count > 0 and .summary.errors == 0' "$T.ll.json" >/dev/null || fail "$engine warmup"

  # open loop: arrivals at --rate, intervals reported
  "$APPSIM" sysbench run --engine "$engine" --target "$T" "${SHAPE[@]}" --instances 2 --threads 2 \
    --rate 100 --time 2 --report-interval 1 --sync off --workload oltp_point_select --quiet \
    --json "$T.open.json" >/dev/null
  jq -e '.summary.count > 0 and (.intervals | length) >= 2 and .config.rate == 100' "$T.open.json" >/dev/null \
    || fail "$engine open loop"

  # --skip-trx and custom counts: no BEGIN/COMMIT, the counts as given, synced commits.
  # One thread per instance: without transactions two threads may delete and re-insert
  # the same id in between each other's statements (a duplicate-key error, as in
  # sysbench on MySQL).
  "$APPSIM" sysbench run --engine "$engine" --target "$T" "${SHAPE[@]}" --instances 2 --threads 1 \
    --time 1 --skip-trx --point-selects 3 --range-selects off --delete-inserts 2 --sync full \
    --quiet --json "$T.skip.json" >/dev/null
  jq -e '.sysbench.expected_per_transaction == {"reads":3,"writes":6,"other":0} and
         .summary.errors == 0 and .summary.count > 0 and
         ((.sysbench.per_transaction.writes - 6) | fabs) < 0.06' "$T.skip.json" >/dev/null \
    || fail "$engine skip-trx: $(jq -c '.sysbench | [.per_transaction, .expected_per_transaction]' "$T.skip.json")"

  # rand types are accepted and recorded
  for rt in zipfian pareto gaussian special; do
    "$APPSIM" sysbench run --engine "$engine" --target "$T" "${SHAPE[@]}" --instances 2 --time 1 \
      --rand-type $rt --sync off --workload oltp_point_select --quiet --json "$T.rt.json" >/dev/null
    [ "$(jq -r .sysbench.rand_type "$T.rt.json")" = $rt ] || fail "$engine rand-type $rt not recorded"
  done

  # refusals: exit status 2 with a message
  expect2() { set +e; "$@" >/dev/null 2>"$T.err"; rc=$?; set -e; [ $rc = 2 ] || fail "exit $rc for: $*"; [ -s "$T.err" ] || fail "no message for: $*"; }
  expect2 "$APPSIM" sysbench run --engine "$engine" --target "$T" --tables 3 --table-size 3000 --instances 2 --time 1
  expect2 "$APPSIM" sysbench run --engine "$engine" --target "$T" "${SHAPE[@]}" --instances 3 --time 1
  expect2 "$APPSIM" sysbench run --engine "$engine" --target "$T" "${SHAPE[@]}" --rand-type normal
  expect2 "$APPSIM" sysbench frobnicate --engine "$engine" --target "$T"
  expect2 "$APPSIM" sysbench run --engine "$engine" "${SHAPE[@]}"
  expect2 "$APPSIM" sysbench run --engine "$engine" --target "$APPSIM_TMP/none" "${SHAPE[@]}" --time 1
  expect2 "$APPSIM" sysbench run --engine "$engine" --target "$T" "${SHAPE[@]}" --workload oltp_read_only \
    --point-selects 0 --range-selects off --instances 2
  if [ "$engine" = lmdb ]; then
    expect2 "$APPSIM" sysbench run --engine lmdb --target "$T" "${SHAPE[@]}" --instances 2 --buffered
    expect2 "$APPSIM" sysbench run --engine lmdb --target "$T" "${SHAPE[@]}" --instances 2 --group-commit off
    jq -e '.config["group-commit"] == null' "$T.ll.json" >/dev/null || fail "lmdb reports a group commit"
    # prefetch on by default, off when asked; the waits without timed reads (page faults)
    for pf in on off; do
      "$APPSIM" sysbench run --engine lmdb --target "$T" "${SHAPE[@]}" --instances 2 --threads 4 \
        --time 2 --prefetch "$pf" --quiet --json "$T.w.json" >/dev/null
      jq -e --arg pf "$pf" '.sysbench.waits as $w | $w.share as $s |
        ($s.writer_lock_queue + $s.writer_lock_held + $s.group_commit_sync +
         $s.reads_outside_writer_lock + $s.other - 1 | fabs) < 0.001 and $s.other > -0.01 and
        $w.thread_seconds > 7 and $s.reads_under_writer_lock == 0 and
        $s.reads_outside_writer_lock == 0 and $s.group_commit_sync == 0 and
        $s.commit_under_writer_lock <= $s.writer_lock_held and $s.writer_lock_held > 0 and
        .sysbench.prefetch == $pf and (($s.prefetch > 0) == ($pf == "on")) and
        $w.prefetch_failed == 0 and ($w.note | test("page faults")) and
        ($w.major_faults_per_transaction as $f |
         ($f.under_writer_lock + $f.prefetch + $f.elsewhere - $f.total | fabs) < 0.001 and
         $f.under_writer_lock >= 0 and (($f.prefetch == 0) or ($pf == "on")))' \
        "$T.w.json" >/dev/null || fail "lmdb waits with prefetch $pf: $(jq -c '.sysbench.waits' "$T.w.json")"
    done
  else
    # group commit shares WAL syncs that only --sync full makes
    expect2 "$APPSIM" sysbench run --target "$T" "${SHAPE[@]}" --instances 2 --sync off --group-commit on
    # the waits of the threads' time: disjoint parts adding up to it; group commit and
    # prefetch on by default with --sync full, each off when asked
    for v in "on on" "off on" "on off"; do
      set -- $v
      "$APPSIM" sysbench run --target "$T" "${SHAPE[@]}" --instances 2 --threads 4 --time 2 \
        --group-commit "$1" --prefetch "$2" --quiet --json "$T.w.json" >/dev/null
      jq -e --arg gc "$1" --arg pf "$2" '.sysbench.waits as $w | $w.share as $s |
        ($s.writer_lock_queue + $s.writer_lock_held + $s.group_commit_sync +
         $s.reads_outside_writer_lock + $s.other - 1 | fabs) < 0.001 and $s.other > -0.01 and
        $w.thread_seconds > 7 and $s.reads_under_writer_lock <= $s.writer_lock_held and
        $s.commit_under_writer_lock <= $s.writer_lock_held and .sysbench.prefetch == $pf and
        (($s.prefetch > 0) == ($pf == "on")) and $w.major_faults_per_transaction == null and
        (.engine.instances | all(.group_commit.on == ($gc == "on"))) and
        (($s.group_commit_sync > 0) == ($gc == "on")) and
        ($gc == "off" or (.engine.instances | all(.group_commit.wal_syncs > 0 and
                                                  .group_commit.commits >= .group_commit.wal_syncs)))' \
        "$T.w.json" >/dev/null || fail "waits with group commit $1, prefetch $2: $(jq -c '[.sysbench.waits.share, .engine.instances[0].group_commit]' "$T.w.json")"
    done
  fi
  "$APPSIM" sysbench cleanup --engine "$engine" --target "$T" --quiet >/dev/null
done
"$APPSIM" sysbench --help | grep -q -- "--rand-type" || fail "help"
set +e; "$APPSIM" sysbench run --engine mysql --target "$APPSIM_TMP" >/dev/null 2>&1; rc=$?; set -e
[ $rc = 2 ] || fail "unknown engine exit $rc"
echo ok
