#!/usr/bin/env bash
# Both engines end to end at a small size through the real binary: prepare, every one
# of the eight workloads runs without errors with the statements per transaction of
# sysbench's mix, the row count stays constant under read_write and the secondary
# index matches the table (check), insert and delete change the row count, cleanup
# removes exactly what prepare created.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }

SHAPE=(--tables 2 --table-size 2000)
for engine in sqlite lmdb; do
  T="$APPSIM_TMP/$engine"
  "$APPSIM" sysbench prepare --engine "$engine" --target "$T" "${SHAPE[@]}" --quiet --json "$T.prepare.json" >/dev/null
  [ "$(jq .prepare.rows "$T.prepare.json")" = 4000 ] || fail "$engine prepare rows"
  # preparing twice is refused (usage error), nothing is overwritten
  set +e; "$APPSIM" sysbench prepare --engine "$engine" --target "$T" "${SHAPE[@]}" --quiet >/dev/null 2>&1; rc=$?; set -e
  [ $rc = 2 ] || fail "$engine second prepare exit $rc"

  for wl in oltp_read_write oltp_read_only oltp_write_only oltp_point_select \
            oltp_update_index oltp_update_non_index oltp_insert oltp_delete; do
    J="$T.$wl.json"
    "$APPSIM" sysbench run --engine "$engine" --target "$T" "${SHAPE[@]}" --workload "$wl" \
      --threads 2 --time 1 --sync off --quiet --json "$J" >/dev/null
    jq -e '.summary.count > 0 and .summary.errors == 0' "$J" >/dev/null || fail "$engine $wl ran nothing or had errors"
    # statements per transaction as sysbench's mix (1 % slack: a transaction that ends
    # exactly at the phase boundary may be split across it)
    jq -e '.sysbench as $s | ["reads","writes","other"] | all(. as $k |
            (($s.per_transaction[$k] - $s.expected_per_transaction[$k]) | fabs)
              <= 0.01 * $s.expected_per_transaction[$k] + 0.001)' "$J" >/dev/null \
      || fail "$engine $wl statements per transaction $(jq -c '.sysbench | [.per_transaction, .expected_per_transaction]' "$J")"
    jq -e '.device_io != null and .sysbench.qps.total > 0' "$J" >/dev/null || fail "$engine $wl result lacks device_io/qps"
    if [ "$wl" = oltp_read_write ]; then
      jq -e '.sysbench.expected_per_transaction == {"reads":14,"writes":4,"other":2}' "$J" >/dev/null || fail "read_write mix"
      "$APPSIM" sysbench check --engine "$engine" --target "$T" "${SHAPE[@]}" --quiet --json "$T.check.json" >/dev/null \
        || fail "$engine check after read_write"
      jq -e '[.check[0].rows[]] == [2000,2000] and .check[0].index_consistent' "$T.check.json" >/dev/null \
        || fail "$engine rows not constant under read_write: $(jq -c .check "$T.check.json")"
    fi
    if [ "$wl" = oltp_insert ]; then
      "$APPSIM" sysbench check --engine "$engine" --target "$T" "${SHAPE[@]}" --quiet --json "$T.check.json" >/dev/null
      ins=$(jq .summary.count "$J"); warm=$(jq .warmup.count "$J")
      jq -e --argjson n "$ins" '([.check[0].rows[]] | add) >= 4000 + $n and .check[0].index_consistent' "$T.check.json" >/dev/null \
        || fail "$engine rows after insert $(jq -c .check "$T.check.json")"
    fi
  done
  "$APPSIM" sysbench check --engine "$engine" --target "$T" "${SHAPE[@]}" --quiet --json "$T.check.json" >/dev/null \
    || fail "$engine final check"
  [ "$(jq '.check[0].index_consistent' "$T.check.json")" = true ] || fail "$engine index after all workloads"

  # LMDB reports page faults and its memory policy
  if [ "$engine" = lmdb ]; then
    jq -e '.page_faults.minor >= 0 and (.engine.memory.applied == false) and
           (.engine.memory.resident_at_end[0].resident_share >= 0)' "$T.oltp_read_write.json" >/dev/null \
      || fail "lmdb page faults / memory section"
  fi
  "$APPSIM" sysbench cleanup --engine "$engine" --target "$T" --quiet >/dev/null
  left=$(find "$T" -name 'sbtest-*' | wc -l)
  [ "$left" = 0 ] || fail "$engine cleanup left $left files"
done
echo "ok"
