#!/usr/bin/env bash
# `appsim compare` ranks what is comparable, through the real binary: a `tpcc run`
# result and a one-shot `tpcc` result that differ only in --integrity (a check after
# the measured phase) share one table; so do results that differ in --keep-free, io
# results that name a pattern by fio's --rw or by --read-pct and --random-pct, and io
# results written while fio's and vdbench's names were options of their own; a
# difference in what was measured (scale) still splits. The CSV prints the shortest
# number that reads back the same (2237.6, not 2237.5999999999999).
set -euo pipefail
source "$(dirname "$0")/compare_fixtures.bash"
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }

config() { # FILE JQ-EXPRESSION: edits the result's config in place
  jq "$2" "$1" >"$1.tmp" && mv "$1.tmp" "$1"
}

fx_result run.json tpcc "Drive A" A1 10 5 $(fx_seq 100000 10 40)
fx_result oneshot.json tpcc "Drive B" B1 10 5 $(fx_seq 200000 10 20)
# 11,188 transactions in 5 s: 2237.6 TPS, whose double prints as 2237.5999999999999 with
# 17 digits.
config run.json '.summary.count = 11188 | .config += {"integrity": "quick", "keep-free": 1073741824}'
config oneshot.json '.config += {"integrity": "off", "keep-free": 0}'
"$APPSIM" compare run.json oneshot.json >out.txt 2>err.txt
grep -q "not ranked" out.txt err.txt && fail "--integrity or --keep-free split the table: $(cat err.txt)"
grep -Eq "^rank \(runs\) +1 \(1\) +2 \(1\)" out.txt || fail "one ranking expected: $(cat out.txt)"

# CSV: the shortest form that reads back the same.
"$APPSIM" compare --format csv run.json oneshot.json >out.csv
grep -q '^1,tpcc,rate,TPS,tps,Drive A,1,1,2237.6,2237.6,2237.6,' out.csv ||
  fail "csv number: $(grep ',rate,' out.csv)"
grep -qE '[0-9]\.[0-9]*(99999|00000)[0-9]' out.csv && fail "a long decimal tail in: $(cat out.csv)"

# io: --rw randread is --read-pct 100 --random-pct 100; an older result also recorded the
# same values under xfersize, rdpct, rwmixread, seekpct and iodepth.
fx_result io_new.json io "Drive A" A1 0 5 $(fx_seq 100000 10 400)
fx_result io_old.json io "Drive B" B1 0 5 $(fx_seq 200000 10 300)
config io_new.json '.config = {"bs": "4k", "read-pct": 100, "random-pct": 100, "threads": 8,
  "rw": "randread", "duration": 5}'
config io_old.json '.config = {"bs": "4k", "xfersize": "4k", "read-pct": 100, "rdpct": 100,
  "rwmixread": 100, "random-pct": 100, "seekpct": 100, "threads": 8, "iodepth": 8,
  "duration": 5}'
"$APPSIM" compare io_new.json io_old.json >out.txt 2>err.txt
grep -q "not ranked" out.txt err.txt && fail "io results split by alias keys: $(cat err.txt)"

# What was measured still splits: another scale.
fx_result big.json tpcc "Drive C" C1 100 5 $(fx_seq 100000 10 100)
"$APPSIM" compare run.json big.json >out.txt 2>err.txt
grep -q "not ranked against" err.txt || fail "another scale must not be ranked together"
echo "compare_comparable: ok"
