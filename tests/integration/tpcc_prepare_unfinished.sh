#!/usr/bin/env bash
# A tpcc prepare that does not finish (SIGINT, SIGTERM, SIGKILL, the filesystem filling
# up mid-load) never says it loaded: its result has "loaded": false, "complete": false
# and the top-level "interrupted" (signals) or "failed" with the cause (ENOSPC, exit 1);
# then `run` and `check` refuse with exit 2, saying the database is incomplete and to
# prepare again (not SQLite's "malformed"), and the next prepare loads it again.
# The ENOSPC case needs root (a small tmpfs); it is left out otherwise.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
W=$APPSIM_TMP
BG="" MNT=""
cleanup() {
  [ -n "$BG" ] && kill -9 "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
  [ -n "$MNT" ] && mountpoint -q "$MNT" && umount "$MNT"
  true
}
trap cleanup EXIT
SCALE=(--scale 2 --buffered --keep-free 0)

# Starts a prepare into $1 and waits until its load is writing rows.
start_prepare() {
  local t=$1 name=$2
  "$APPSIM" tpcc prepare --target "$t" "${SCALE[@]}" --json "$W/$name.json" >"$W/$name.out" 2>"$W/$name.err" &
  BG=$!
  for _ in $(seq 1 300); do
    [ -e "$t/tpcc-1.db" ] && [ "$(stat -c %s "$t/tpcc-1.db")" -gt $((1 << 20)) ] && return
    kill -0 "$BG" 2>/dev/null || fail "$name: prepare ended before its load got going: $(cat "$W/$name.err")"
    sleep 0.05
  done
  fail "$name: the load wrote nothing in 15 s"
}
# target, name, expected exit: the refusals after an unfinished load
expect_incomplete() {
  local t=$1 name=$2 rc
  for action in run check; do
    rc=0
    "$APPSIM" tpcc $action --target "$t" "${SCALE[@]}" --duration 1 --pacing off --quiet \
      >"$W/$name-$action.out" 2>&1 || rc=$?
    [ $rc = 2 ] || fail "$name: $action after it: exit $rc, want 2: $(tail -3 "$W/$name-$action.out")"
    grep -q "database is incomplete: its load was interrupted or failed; run \`appsim tpcc prepare" \
      "$W/$name-$action.out" || fail "$name: $action does not say the load is unfinished: $(cat "$W/$name-$action.out")"
    ! grep -qi malformed "$W/$name-$action.out" || fail "$name: $action says malformed"
  done
}
prepare_result() { # name, jq condition on the document
  jq -e '.prepare.loaded == false and .prepare.complete == false and .prepare.instances_loaded == 0 and ('"$2"')' \
    "$W/$1.json" >/dev/null || fail "$1: result: $(jq -c '{interrupted, failed, failure, prepare}' "$W/$1.json")"
}

for sig in INT TERM; do
  T=$W/t-$sig
  start_prepare "$T" "$sig"
  kill -$sig "$BG"; rc=0; wait "$BG" || rc=$?; BG=""
  want=$([ $sig = INT ] && echo 130 || echo 143)
  [ $rc = "$want" ] || fail "SIG$sig during prepare: exit $rc, want $want"
  prepare_result "$sig" '.interrupted == true and .prepare.interrupted == true'
  expect_incomplete "$T" "$sig"
done

# Killed outright: no result, but the database is still known to be unfinished.
T=$W/t-KILL
start_prepare "$T" KILL
kill -KILL "$BG"; wait "$BG" 2>/dev/null || true; BG=""
expect_incomplete "$T" KILL

# The filesystem fills up during the load (a small tmpfs; root only).
if [ "$(id -u)" = 0 ] && mkdir -p "$W/small" && mount -t tmpfs -o size=400m tmpfs "$W/small" 2>/dev/null; then
  MNT=$W/small
  T=$MNT/t
  start_prepare "$T" nospc
  dd if=/dev/zero of="$MNT/ballast" bs=1M status=none 2>/dev/null || true
  rc=0; wait "$BG" || rc=$?; BG=""
  [ $rc = 1 ] || fail "ENOSPC during prepare: exit $rc, want 1: $(tail -3 "$W/nospc.err")"
  grep -q "failed: no space left on device" "$W/nospc.err" || fail "ENOSPC: stderr: $(cat "$W/nospc.err")"
  prepare_result nospc '.failed == true and .failure.cause == "no space left on device"'
  rm "$MNT/ballast"
  expect_incomplete "$T" nospc
  # with the space back, prepare loads it again and check passes
  "$APPSIM" tpcc prepare --target "$T" "${SCALE[@]}" --quiet --json "$W/again.json" >/dev/null 2>"$W/again.err" ||
    fail "prepare after an unfinished load: $(cat "$W/again.err")"
  jq -e '.prepare.loaded == true and .prepare.complete == true and .prepare.instances_loaded == 1' \
    "$W/again.json" >/dev/null || fail "prepare again: $(jq -c .prepare "$W/again.json")"
  "$APPSIM" tpcc check --target "$T" "${SCALE[@]}" >"$W/check.out" 2>&1 ||
    fail "check after the new load: $(tail -3 "$W/check.out")"
  [ ! -e "$T/tpcc-1.db-loading" ] || fail "the marker of an unfinished load outlived a complete one"
else
  echo "note: the ENOSPC case needs root and a tmpfs; not run"
fi
echo ok
