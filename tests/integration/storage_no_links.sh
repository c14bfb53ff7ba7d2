#!/usr/bin/env bash
# tests/integration/storage_no_links.sh: appsim never writes outside its target through
# a link, and never writes a file that replaced the one it created.
# Each of appsim's files in turn is replaced by a symlink to a file outside the target
# (LMDB's lock and data files, SQLite's database with the direct-I/O VFS and with
# --buffered, its -wal and -shm, tpcc's database, replay's data file), or by a copy:
# every command is refused with exit 2, says what it found and what to do (never
# "--buffered"), and the outside file keeps its bytes. Also: a refusal leaves no directory it created.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"
W="$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }

# refused WHAT -- appsim args: exit 2, a message naming the link (or the replaced file)
# and no --buffered advice, and $W/outside untouched.
refused() {
  local what=$1; shift; shift
  local before after rc=0
  before=$(md5sum <"$W/outside")
  "$APPSIM" "$@" >"$W/out.txt" 2>&1 || rc=$?
  after=$(md5sum <"$W/outside")
  [ "$rc" -eq 2 ] || { cat "$W/out.txt"; fail "$what: exit $rc, expected 2"; }
  [ "$before" = "$after" ] || fail "$what: the file outside the target was written"
  grep -q -e "is a symbolic link to $W/outside" -e "is not the file appsim created" \
    "$W/out.txt" || { cat "$W/out.txt"; fail "$what: the message does not say what it found"; }
  if grep -q -- "--buffered" "$W/out.txt"; then
    cat "$W/out.txt"; fail "$what: the message offers --buffered as a way round"
  fi
  echo "ok: $what"
}

# link_out DIR NAME: DIR/NAME becomes a symlink to a copy of itself outside the target;
# restore puts appsim's own file back.
link_out() {
  mv "$1/$2" "$W/orig"
  cp "$W/orig" "$W/outside"
  ln -s "$W/outside" "$1/$2"
}
restore() { rm "$1/$2"; mv "$W/orig" "$1/$2"; }

# ---- LMDB: the lock file and the data file, through run and check
L="$W/lmdb"
"$APPSIM" sysbench prepare --engine lmdb --target "$L" --table-size 1000 --quiet
sb_lmdb=(--engine lmdb --target "$L" --table-size 1000)
for f in sbtest-lmdb-i1.mdb-lock sbtest-lmdb-i1.mdb; do
  link_out "$L" "$f"
  refused "lmdb run, $f a symlink" -- sysbench run "${sb_lmdb[@]}" --time 1 --quiet
  refused "lmdb check, $f a symlink" -- sysbench check "${sb_lmdb[@]}" --quiet
  restore "$L" "$f"
done
# A copy in place of the data file (same name, another file): not appsim's.
cp "$L/sbtest-lmdb-i1.mdb" "$W/outside"
cp "$L/sbtest-lmdb-i1.mdb" "$W/copy" && rm "$L/sbtest-lmdb-i1.mdb" && mv "$W/copy" "$L/sbtest-lmdb-i1.mdb"
refused "lmdb run, data file replaced by a copy" -- sysbench run "${sb_lmdb[@]}" --time 1 --quiet
rm -rf "$L"

# ---- SQLite (sysbench): the database and its companions, direct I/O and --buffered
S="$W/sqlite"
"$APPSIM" sysbench prepare --engine sqlite --target "$S" --table-size 1000 --quiet
sb_sq=(--engine sqlite --target "$S" --table-size 1000)
link_out "$S" sbtest-sqlite-i1.db
refused "sqlite run, db a symlink" -- sysbench run "${sb_sq[@]}" --time 1 --quiet
refused "sqlite run --buffered, db a symlink" -- sysbench run "${sb_sq[@]}" --buffered --time 1 --quiet
refused "sqlite check via a symlink" -- sysbench check "${sb_sq[@]}" --quiet
restore "$S" sbtest-sqlite-i1.db
# --buffered lists and creates -wal and -shm; each replaced by a link is refused.
"$APPSIM" sysbench run "${sb_sq[@]}" --buffered --time 1 --quiet >/dev/null
for f in sbtest-sqlite-i1.db-wal sbtest-sqlite-i1.db-shm; do
  [ -f "$S/$f" ] || fail "--buffered did not create $f"
  link_out "$S" "$f"
  refused "sqlite run --buffered, $f a symlink" -- sysbench run "${sb_sq[@]}" --buffered --time 1 --quiet
  restore "$S" "$f"
done
# A rollback journal appsim did not create would be replayed (and deleted) by SQLite.
echo "not appsim's" >"$S/sbtest-sqlite-i1.db-journal"
rc=0; "$APPSIM" sysbench run "${sb_sq[@]}" --buffered --time 1 --quiet >"$W/out.txt" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "appsim did not create it" "$W/out.txt" || { cat "$W/out.txt"; fail "foreign journal: exit $rc"; }
[ "$(cat "$S/sbtest-sqlite-i1.db-journal")" = "not appsim's" ] || fail "foreign journal touched"
rm "$S/sbtest-sqlite-i1.db-journal"
"$APPSIM" sysbench check "${sb_sq[@]}" --quiet >/dev/null || fail "intact database fails check"
rm -rf "$S"

# ---- TPC-C: tpcc-1.db a symlink, with and without --buffered
T="$W/tpcc"
"$APPSIM" tpcc prepare --target "$T" --quiet
link_out "$T" tpcc-1.db
tp=(--target "$T" --duration 1 --warmup 0 --pacing off --quiet)
refused "tpcc run, tpcc-1.db a symlink" -- tpcc run "${tp[@]}"
refused "tpcc run --buffered, tpcc-1.db a symlink" -- tpcc run "${tp[@]}" --buffered
rm -rf "$T"

# ---- Trace replay's data file in a directory target
R="$W/replay"
mkdir "$R"
for i in $(seq 0 15); do echo "$((128166385295514663 + i * 1000)),hm,0,Write,$((i * 65536)),4096,100"; done >"$W/w.csv"
"$APPSIM" replay "$W/w.csv" --target "$R" --timing afap --quiet >/dev/null
link_out "$R" replay.data
refused "replay, replay.data a symlink" -- replay "$W/w.csv" --target "$R" --timing afap --quiet
restore "$R" replay.data
rm -rf "$R"

# ---- A refusal leaves nothing behind: no directory it made.
rc=0; "$APPSIM" tpcc run --target "$W/new" --duration 1 --quiet >"$W/out.txt" 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "tpcc run without prepare succeeded"
[ ! -e "$W/new" ] || fail "the refused run left $W/new behind: $(ls -A "$W/new")"
echo "storage no links: ok"
