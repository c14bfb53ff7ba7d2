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
"$APPSIM" sysbench run "${SHAPE[@]}" --buffer 4M --threads 4 --time 2 --sync off \
  --workload oltp_point_select --quiet --json "$T.json" >/dev/null
jq -e '.engine.memory.applied == true and .engine.memory.limit_bytes == 4194304' "$T.json" >/dev/null \
  || fail "limit not applied: $(jq -c .engine.memory "$T.json")"
file=$(jq '.engine.memory.resident_at_end[0].file_bytes' "$T.json")
[ "$file" -gt $((4 * 4194304)) ] || fail "data ($file bytes) is not much larger than the buffer"
jq -e '.page_faults.major > 0' "$T.json" >/dev/null || fail "no major faults: $(jq -c .page_faults "$T.json")"
jq -e '.engine.memory.resident_at_end[0].resident_bytes <= 1.1 * .engine.memory.limit_bytes' "$T.json" >/dev/null \
  || fail "resident beyond the limit: $(jq -c .engine.memory.resident_at_end "$T.json")"
cg=$(jq -r .engine.memory.path "$T.json")
[ ! -e "$cg" ] || fail "cgroup $cg left behind"
# without --buffer nothing is limited and the result says so
"$APPSIM" sysbench run "${SHAPE[@]}" --time 1 --sync off --workload oltp_point_select --quiet --json "$T.2.json" >/dev/null
jq -e '.engine.memory.applied == false and (.engine.memory.reason | length) > 0' "$T.2.json" >/dev/null || fail "no-buffer case"
"$APPSIM" sysbench cleanup "${SHAPE[@]}" --quiet >/dev/null
echo ok
