#!/usr/bin/env bash
# LMDB with --buffer smaller than the data: the run is placed in a memory cgroup of
# that size (root only; skipped with the reason otherwise), the cached pages of the
# data file are dropped first, so the drive serves the reads: major page faults are
# taken, the resident share of the file stays within the limit, and the cgroup is
# gone after the run.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
if [ "$(id -u)" != 0 ]; then echo "skipped: creating a memory cgroup needs root"; exit 77; fi
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
T="$APPSIM_TMP/lmdb"
SHAPE=(--engine lmdb --target "$T" --tables 2 --table-size 60000)
"$APPSIM" sysbench prepare "${SHAPE[@]}" --quiet >/dev/null
# A limit below what the process itself needs in the cgroup is refused up front (the
# OOM killer would end the run with 137 and no result): 4 MiB + 512 KiB per connection.
for b in 1 16 4096 64K 4M; do
  rc=0; "$APPSIM" sysbench run "${SHAPE[@]}" --buffer $b --time 1 --quiet --json "$T.small.json" \
    >/dev/null 2>"$T.err" || rc=$?
  [ $rc = 2 ] || fail "--buffer $b: exit $rc, want 2: $(tail -2 "$T.err")"
  grep -q "minimum is 4.50 MiB" "$T.err" || fail "--buffer $b: no minimum named: $(cat "$T.err")"
  [ ! -e "$T.small.json" ] || fail "--buffer $b: refused, yet a result was written"
done
rc=0; "$APPSIM" sysbench run "${SHAPE[@]}" --buffer 5M --threads 16 --time 1 --quiet >/dev/null 2>"$T.err" || rc=$?
[ $rc = 2 ] && grep -q "minimum is 12.0 MiB" "$T.err" || fail "--buffer 5M at 16 threads: exit $rc: $(cat "$T.err")"

"$APPSIM" sysbench run "${SHAPE[@]}" --buffer 5M --threads 1 --time 2 --sync off \
  --workload oltp_point_select --quiet --json "$T.json" >/dev/null
jq -e '.engine.memory.applied == true and .engine.memory.limit_bytes == 5242880' "$T.json" >/dev/null \
  || fail "limit not applied: $(jq -c .engine.memory "$T.json")"
file=$(jq '.engine.memory.resident_at_end[0].file_bytes' "$T.json")
[ "$file" -gt $((4 * 5242880)) ] || fail "data ($file bytes) is not much larger than the buffer"
jq -e '.page_faults.major > 0' "$T.json" >/dev/null || fail "no major faults: $(jq -c .page_faults "$T.json")"
jq -e '.engine.memory.resident_at_end[0].resident_bytes <= 1.1 * .engine.memory.limit_bytes' "$T.json" >/dev/null \
  || fail "resident beyond the limit: $(jq -c .engine.memory.resident_at_end "$T.json")"
cg=$(jq -r .engine.memory.path "$T.json")
[ ! -e "$cg" ] || fail "cgroup $cg left behind"
# without --buffer nothing is limited and the result says so
"$APPSIM" sysbench run "${SHAPE[@]}" --time 1 --sync off --workload oltp_point_select --quiet --json "$T.2.json" >/dev/null
jq -e '.engine.memory.applied == false and (.engine.memory.reason | length) > 0' "$T.2.json" >/dev/null || fail "no-buffer case"
"$APPSIM" sysbench cleanup "${SHAPE[@]}" --quiet >/dev/null

# Without permission for a cgroup (an unprivileged user) the run goes on, says so on
# stderr and in the result, and reports the resident share of the data file.
if command -v setpriv >/dev/null && [ -x "$APPSIM" ]; then
  U="$APPSIM_TMP/nobody"
  mkdir -p "$U"; chmod 777 "$U" "$APPSIM_TMP"
  AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  if "${AS_NOBODY[@]}" test -x "$APPSIM"; then
    "${AS_NOBODY[@]}" "$APPSIM" sysbench prepare --engine lmdb --target "$U/t" --table-size 5000 --quiet >/dev/null
    "${AS_NOBODY[@]}" "$APPSIM" sysbench run --engine lmdb --target "$U/t" --table-size 5000 --buffer 5M \
      --time 1 --sync off --workload oltp_point_select --json "$U/r.json" >"$U/out" 2>"$U/err"
    grep -q "NOT applied" "$U/err" || fail "no warning without a cgroup: $(cat "$U/err")"
    grep -q "resident in page cache" "$U/out" || fail "no resident share in the output"
    jq -e '.engine.memory.applied == false and (.engine.memory.reason | test("cgroup"))
           and .engine.memory.resident_at_end[0].resident_share >= 0' "$U/r.json" >/dev/null \
      || fail "unprivileged result: $(jq -c .engine.memory "$U/r.json")"
  else
    echo "note: the unprivileged case was not run (appsim is not executable by nobody)"
  fi
fi
echo ok
