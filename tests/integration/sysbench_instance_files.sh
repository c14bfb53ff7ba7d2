#!/usr/bin/env bash
# tests/integration/sysbench_instance_files.sh: sysbench's instance files carry the
# instance's number from 1, as the text and the result count (SQLite's
# sbtest-sqlite-iN.db and -iN-tables.db, LMDB's sbtest-lmdb-iN.mdb). A target holding the
# layout of an older appsim, numbered from 0 (made here by renaming the files and their
# manifest lines, which keeps each file's recorded identity), is never read as the new
# one: run, prepare and check are refused (exit 2) with a message naming the old file
# and the cleanup command, nothing is written, and that cleanup removes the old files.
set -euo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"
mkdir -p "$APPSIM_TMP"
fail() {
  echo "FAIL: $*"
  exit 1
}
SB=(--tables 2 --table-size 500 --keep-free 0 --quiet)

for engine in sqlite lmdb; do
  T=$APPSIM_TMP/$engine
  "$APPSIM" sysbench prepare --engine $engine --target "$T" --instances 2 "${SB[@]}" >/dev/null
  case $engine in
  sqlite) want="i1.db i1-tables.db i2.db i2-tables.db" ;;
  lmdb) want="i1.mdb i1.mdb-lock i2.mdb i2.mdb-lock" ;;
  esac
  for f in $want; do [ -e "$T/sbtest-$engine-$f" ] || fail "$engine: no sbtest-$engine-$f: $(ls "$T")"; done
  ! ls "$T" | grep -q -- -i0 || fail "$engine: a file numbered 0: $(ls "$T")"
  "$APPSIM" sysbench run --engine $engine --target "$T" --instances 2 "${SB[@]}" --time 0.3 \
    --warmup 0 --json "$T.json" >/dev/null
  python3 - "$T.json" <<'EOF' || fail "$engine: the result's instances"
import json, sys
d = json.load(open(sys.argv[1]))
assert [i["instance"] for i in d["instances"]] == [1, 2], d["instances"]
EOF

  # An older appsim's layout: one instance, numbered 0.
  "$APPSIM" sysbench cleanup --engine $engine --target "$T" --quiet >/dev/null
  "$APPSIM" sysbench prepare --engine $engine --target "$T" "${SB[@]}" >/dev/null
  for f in "$T"/sbtest-*-i1*; do mv "$f" "${f/-i1/-i0}"; done
  sed -i 's/^\(sbtest-[a-z]*-i\)1/\10/' "$T/.appsim-manifest"
  before=$(cd "$T" && ls -l --time-style=+%s.%N sbtest-* | md5sum)
  for action in run prepare check ""; do
    rc=0
    "$APPSIM" sysbench $action --engine $engine --target "$T" "${SB[@]}" >/dev/null 2>"$T.err" ||
      rc=$?
    [ $rc = 2 ] || fail "$engine ${action:-(no action)} on a 0-based layout: exit $rc: $(cat "$T.err")"
    grep -q "numbered the instance files from 0 (sbtest-$engine-i0.*appsim sysbench cleanup --engine $engine --target $T" "$T.err" ||
      fail "$engine ${action:-(no action)}: the message does not say what to do: $(cat "$T.err")"
  done
  [ "$(cd "$T" && ls -l --time-style=+%s.%N sbtest-* | md5sum)" = "$before" ] ||
    fail "$engine: a refused action changed the files"
  "$APPSIM" sysbench cleanup --engine $engine --target "$T" >"$T.out"
  grep -q "removed [1-9]" "$T.out" || fail "$engine cleanup: $(cat "$T.out")"
  [ -z "$(cd "$T" && ls sbtest-* 2>/dev/null)" ] || fail "$engine cleanup left $(ls "$T")"
done
rm -rf "$APPSIM_TMP"
echo ok
