#!/usr/bin/env bash
# One rule for a missing --target directory, through the real binary: every command that
# writes to its target (io, replay, sysbench, precondition, vdi) creates it when its
# parent exists and leaves it only if it put something in it; a missing parent is
# refused (a mistyped path is not made); commands that only read or remove (check,
# cleanup, info) refuse a missing target. precondition's --whole and --size are one
# choice, and the help states the bounded default on a directory.
set -u
fail() { echo "FAIL: $*"; exit 1; }
T=$APPSIM_TMP
rm -rf "$T"; mkdir -p "$T"
A="$APPSIM"

refuse() { # expected words, then the command line
  local want=$1; shift
  local err rc
  err=$("$A" "$@" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] || fail "$* must exit 2 (got $rc: $err)"
  echo "$err" | grep -qF -- "$want" || fail "$*: message must say '$want': $err"
}

"$A" io --target "$T/io" --file-size 4M --size 1M --duration 0.1 --warmup 0 --quiet \
  --json "$T/io.json" >/dev/null 2>"$T/err" || fail "io on a missing directory: $(cat "$T/err")"
[ -f "$T/io/io.data" ] || fail "io must create the directory and its data file"

printf 'fio version 3 iolog\n0 f add\n0 f write 0 4096\n10 f read 0 4096\n' >"$T/t.log"
"$A" replay "$T/t.log" --target "$T/rp" --timing afap --quiet --json "$T/rp.json" \
  >/dev/null 2>"$T/err" || fail "replay on a missing directory: $(cat "$T/err")"
[ -d "$T/rp" ] || fail "replay must create the directory"

"$A" sysbench prepare --target "$T/sb" --table-size 100 --quiet >/dev/null 2>"$T/err" ||
  fail "sysbench prepare on a missing directory: $(cat "$T/err")"
[ -d "$T/sb" ] || fail "sysbench prepare must create the directory"

"$A" precondition --target "$T/pc" --size 1M --quiet >/dev/null 2>"$T/err" ||
  fail "precondition on a missing directory: $(cat "$T/err")"
[ -d "$T/pc" ] || fail "precondition must create the directory"

# A run that refuses after opening takes away the directory it made.
refuse "not prepared" sysbench run --target "$T/empty" --table-size 100
[ ! -e "$T/empty" ] || fail "a refused sysbench run must not leave the directory it made"

# Only the last part is made: a missing parent is a mistyped path.
refuse "parent" io --target "$T/no/such" --file-size 4M --size 1M
refuse "parent" sysbench prepare --target "$T/no/such"
refuse "parent" precondition --target "$T/no/such" --size 1M
[ ! -e "$T/no" ] || fail "a missing parent must not be created"
# A missing path under /dev is a device that is not there, never a directory to make.
refuse "under /dev" io --target /dev/appsim-no-such-device --file-size 4M --size 1M
refuse "under /dev" suite review --target /dev/appsim-no-such-device -o "$T/suite-out"
[ ! -e "$T/suite-out" ] || fail "a refused suite must create nothing"

# Reading or removing needs something there.
refuse "nothing there" sysbench check --target "$T/absent"
refuse "nothing there" sysbench cleanup --target "$T/absent"
refuse "nothing there" tpcc check --target "$T/absent"
refuse "nothing there" cleanup --target "$T/absent"
refuse "does not exist" info --target "$T/absent"
[ ! -e "$T/absent" ] || fail "check, cleanup and info must create nothing"

# precondition: a bounded default on a directory, --whole for all the free space.
"$A" precondition --help | grep -q -- "--whole " || fail "precondition --help lists --whole"
"$A" precondition --help | grep -qF "at most 64 GiB" || fail "the help states the default bound"
refuse "give one" precondition --target "$T/pc" --whole --size 1M

# --target is declared once: the same line shape in every command that takes it.
for cmd in io replay sysbench tpcc vdi precondition info cleanup suite; do
  "$A" $cmd --help | grep -qP '^  --target (PATH|DIR) ' || fail "$cmd --help: no --target PATH|DIR line"
done
echo "targets: ok"
