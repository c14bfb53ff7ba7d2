#!/usr/bin/env bash
# `appsim cleanup` and `sysbench cleanup` delete a listed name only while it holds the
# file appsim created (inode and birth time as the manifest recorded them, the check
# every run makes): a user's file, a hard link or a symlink put in its place is left,
# named with the reason, with exit 2; appsim's own files are still removed.
set -uo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/r" "$APPSIM_TMP/s"
W=$APPSIM_TMP

# replay.data replaced by the user's own file, then `appsim cleanup`.
{ echo "fio version 3 iolog"; echo "0 f add"
  for i in $(seq 0 15); do echo "$((i * 100)) f write $((i * 65536)) 4096"; done; } >"$W/t.log"
"$APPSIM" replay "$W/t.log" --target "$W/r" --timing afap --quiet >/dev/null 2>"$W/r.err" ||
  fail "replay: $(cat "$W/r.err")"
mv "$W/r/replay.data" "$W/moved.data"
echo "the user's own data" >"$W/r/replay.data"
rc=0; out=$("$APPSIM" cleanup --target "$W/r" 2>&1) || rc=$?
[ $rc = 2 ] || fail "cleanup of a replaced replay.data: exit $rc: $out"
grep -q "the user's own data" "$W/r/replay.data" || fail "cleanup deleted the user's replay.data"
echo "$out" | grep -q "left .*replay.data is not the file appsim created" || fail "message: $out"
grep -q "^replay.data" "$W/r/.appsim-manifest" || fail "the left name must stay listed"
# Once the user's file is moved away, cleanup finishes.
rm "$W/r/replay.data"
"$APPSIM" cleanup --target "$W/r" >"$W/c2.out" 2>&1 || fail "second cleanup: $(cat "$W/c2.out")"
[ -z "$(ls -A "$W/r")" ] || fail "second cleanup left $(ls -A "$W/r")"

# A symlink in place of replay.data: left, its target untouched.
"$APPSIM" replay "$W/t.log" --target "$W/s" --timing afap --quiet >/dev/null 2>&1 || fail "replay 2"
echo keep >"$W/elsewhere"
rm "$W/s/replay.data"; ln -s "$W/elsewhere" "$W/s/replay.data"
rc=0; out=$("$APPSIM" cleanup --target "$W/s" 2>&1) || rc=$?
[ $rc = 2 ] && [ -L "$W/s/replay.data" ] && grep -q keep "$W/elsewhere" || fail "symlink: exit $rc: $out"
echo "$out" | grep -q "symbolic link" || fail "symlink message: $out"

# sysbench cleanup (LMDB): the data file replaced by a hard link to the user's file.
SB=(--engine lmdb --tables 1 --table-size 200 --keep-free 0 --quiet)
"$APPSIM" sysbench prepare --target "$W/sb" "${SB[@]}" >"$W/sb.out" 2>&1 || fail "prepare: $(cat "$W/sb.out")"
echo "user" >"$W/user.mdb"
rm "$W/sb/sbtest-lmdb-i1.mdb"; ln "$W/user.mdb" "$W/sb/sbtest-lmdb-i1.mdb"
rc=0; out=$("$APPSIM" sysbench cleanup --target "$W/sb" "${SB[@]}" 2>&1) || rc=$?
[ $rc = 2 ] || fail "sysbench cleanup of a planted file: exit $rc: $out"
[ -e "$W/sb/sbtest-lmdb-i1.mdb" ] && grep -q user "$W/user.mdb" || fail "sysbench cleanup deleted the user's file"
[ ! -e "$W/sb/sbtest-lmdb-i1.mdb-lock" ] || fail "sysbench cleanup kept appsim's own lock file"
echo "$out" | grep -q "sbtest-lmdb-i1.mdb is not the file appsim created" || fail "sysbench message: $out"
echo "cleanup by identity: ok"
