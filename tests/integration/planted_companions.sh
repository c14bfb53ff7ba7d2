#!/usr/bin/env bash
# A link or a foreign file planted as a database's -wal or -journal is named with exit 2
# in direct-I/O mode as with --buffered (run and check alike), nothing outside the
# target is written; the empty -wal and the -shm that a read-only sqlite3 inspection
# leaves beside appsim's database are taken over (they hold no data) and the run passes.
set -uo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
W=$APPSIM_TMP
T=$W/t
"$APPSIM" tpcc prepare --target "$T" --scale 1 --quiet >"$W/prep.out" 2>&1 || fail "prepare: $(cat "$W/prep.out")"
echo "the user's file" >"$W/victim"
RUN=(tpcc run --target "$T" --duration 1 --warmup 0 --quiet)
# planted NAME KIND MESSAGE-REGEXP [--buffered]: run and check both exit 2 naming it.
planted() {
  local name=$1 kind=$2 msg=$3; shift 3
  rm -f "$T/$name"
  case $kind in
    symlink) ln -s "$W/victim" "$T/$name" ;;
    hardlink) ln "$W/victim" "$T/$name" ;;
    foreign) echo "another program's data" >"$T/$name" ;;
  esac
  for cmd in run check; do
    local rc=0 args=("${RUN[@]}")
    [ $cmd = check ] && args=(tpcc check --target "$T" --quiet)
    "$APPSIM" "${args[@]}" "$@" >"$W/$cmd.out" 2>"$W/$cmd.err" || rc=$?
    [ $rc = 2 ] || fail "$kind $name ($cmd $*): exit $rc: $(cat "$W/$cmd.err")"
    grep -Eq -- "$T/$name.*$msg" "$W/$cmd.err" || fail "$kind $name ($cmd $*): $(cat "$W/$cmd.err")"
  done
  [ "$(cat "$W/victim")" = "the user's file" ] || fail "$kind $name: the file outside was written"
  rm -f "$T/$name"
}
for mode in "" --buffered; do
  planted tpcc-1.db-wal symlink "symbolic link to $W/victim" $mode
  planted tpcc-1.db-journal symlink "symbolic link" $mode
  planted tpcc-1.db-wal foreign "appsim did not create it|not the file appsim created" $mode
  planted tpcc-1.db-journal hardlink "appsim did not create it|not the file appsim created" $mode
done
"$APPSIM" tpcc check --target "$T" --quiet >"$W/c.out" 2>&1 || fail "check after the planted files: $(cat "$W/c.out")"

if command -v sqlite3 >/dev/null; then
  for mode in "" --buffered; do
    sqlite3 -readonly "$T/tpcc-1.db" "select count(*) from warehouse" >/dev/null || fail "sqlite3"
    [ -e "$T/tpcc-1.db-wal" ] || fail "sqlite3 left no -wal (the case this test is about)"
    "$APPSIM" "${RUN[@]}" $mode >"$W/r.out" 2>"$W/r.err" || fail "run after sqlite3 ($mode): $(cat "$W/r.err")"
    grep -q "tpcc-1.db-wal is a file another program left" "$W/r.err" || fail "no note: $(cat "$W/r.err")"
  done
  "$APPSIM" tpcc check --target "$T" --quiet >"$W/c.out" 2>&1 || fail "check after sqlite3: $(cat "$W/c.out")"
  # A non-empty -wal of another program may hold its changes: refused, named.
  rm -f "$T/tpcc-1.db-shm"
  echo "changes" >"$T/tpcc-1.db-wal"
  rc=0; "$APPSIM" "${RUN[@]}" >"$W/r.out" 2>"$W/r.err" || rc=$?
  [ $rc = 2 ] && grep -q "may hold that program's changes" "$W/r.err" || fail "non-empty -wal: exit $rc: $(cat "$W/r.err")"
else
  echo "sqlite3 inspection case skipped: sqlite3 is not installed"
fi
echo "planted companions: ok"
