#!/usr/bin/env bash
# A large result through the real binary: an io result with a 10 ms series, its series
# grown to about 50 MB as a long run writes it. compare, report and export read it within
# a 160 MB address-space limit (built whole, the document needs about 400 MB), compare
# gives the same figures as for the original (it reads no series), export writes every
# interval; in 50 MB report says the result is too large to load (exit 2), and a result
# cut short is refused with its line, exit 2.
set -uo pipefail
: "${APPSIM:?}" "${APPSIM_TMP:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "SKIPPED: python3 grows the series" >&2; exit 77; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/io"; cd "$APPSIM_TMP"

"$APPSIM" io --target io --file-size 8M --duration 0.5 --warmup 0 --report-interval 10ms --quiet \
  --json small.json >/dev/null 2>io.err || fail "io: $(cat io.err)"
python3 - small.json big.json <<'PY' || fail "growing the series"
import json, sys
d = json.load(open(sys.argv[1]))
base, span, grown = d["intervals"], d["intervals"][-1]["t"], []
# as many copies as make 50 MB, however many intervals the short run wrote
for r in range(-(-50_000_000 // len(json.dumps(base, indent=1)))):
    for iv in base:
        x = dict(iv)
        x["t"] = iv["t"] + r * span
        grown.append(x)
d["intervals"] = grown
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
[ "$(stat -c %s big.json)" -gt 40000000 ] || fail "big.json is only $(stat -c %s big.json) bytes"
n=$(python3 -c 'import json,sys; print(len(json.load(open("big.json"))["intervals"]))')

limited() { (ulimit -v 160000; "$@"); }
limited "$APPSIM" compare big.json >big.txt 2>big.err || fail "compare: $(head -c 300 big.err)"
"$APPSIM" compare small.json >small.txt 2>small.err || fail "compare small: $(cat small.err)"
sed 's/big\.json/small.json/g' big.txt | cmp -s - small.txt ||
  fail "compare's figures differ from the original's: $(diff big.txt small.txt | head)"
limited "$APPSIM" report big.json -o big.html >/dev/null 2>rep.err || fail "report: $(head -c 300 rep.err)"
grep -q 'data-chart="[^"]*time' big.html || fail "report: no chart over time"
limited "$APPSIM" export big.json --csv big.csv 2>exp.err || fail "export: $(head -c 300 exp.err)"
[ "$(grep -c '^run,' big.csv)" = "$n" ] || fail "export: $(grep -c '^run,' big.csv) rows for $n intervals"

# Where even what is kept does not fit, the command says so (exit 2), never crashes.
rc=0; (ulimit -v 50000; "$APPSIM" report big.json -o tight.html) >/dev/null 2>tight.err || rc=$?
[ $rc = 2 ] && grep -q "big.json: too large to load: out of memory" tight.err ||
  fail "report in 50 MB: exit $rc: $(head -c 300 tight.err)"
[ ! -e tight.html ] || fail "report in 50 MB wrote a report"

head -c 30000000 big.json >cut.json
lines=$(wc -l <cut.json)
for cmd in compare report export; do
  rc=0
  case $cmd in
    report) "$APPSIM" report cut.json -o cut.html >/dev/null 2>cut.err || rc=$? ;;
    export) "$APPSIM" export cut.json --csv cut.csv >/dev/null 2>cut.err || rc=$? ;;
    *) "$APPSIM" compare cut.json >/dev/null 2>cut.err || rc=$? ;;
  esac
  [ $rc = 2 ] || fail "$cmd of a cut result: exit $rc: $(cat cut.err)"
  grep -Eq "cut.json: not JSON \(line $((lines + 1)): unexpected end of file\)" cut.err ||
    fail "$cmd of a cut result: $(cat cut.err)"
done
echo "compare of a large result: ok"
