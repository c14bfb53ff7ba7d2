#!/usr/bin/env bash
# Small input gaps closed through the real binary: --report-interval below 10 ms is
# refused; numbers are decimal everywhere (hexadecimal refused for sizes, durations and
# whole numbers alike); a suite step's options are checked by its command's parser before
# any step runs (--dry-run too); compare refuses a result with a negative count or rate as
# damaged input; a device target's lock file is gone from /run/lock after the run.
set -uo pipefail
source "$(dirname "$0")/compare_fixtures.bash"
: "${APPSIM:?}" "${APPSIM_TMP:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP/io"
W=$APPSIM_TMP
# usage NAME MESSAGE-REGEXP command...: exit 2 at once with the message.
usage() {
  local name=$1 msg=$2; shift 2
  local rc=0 t0
  t0=$(date +%s)
  timeout 20 "$@" >"$W/$name.out" 2>"$W/$name.err" || rc=$?
  [ $rc = 2 ] || fail "$name: exit $rc, want 2: $(head -c 300 "$W/$name.err")"
  [ $(($(date +%s) - t0)) -lt 3 ] || fail "$name: refused only after running"
  grep -Eq -- "$msg" "$W/$name.err" || fail "$name: message: $(cat "$W/$name.err")"
}
IO=("$APPSIM" io --target "$W/io" --file-size 8M --duration 2 --warmup 0 --quiet)
usage interval-1us "report-interval .* too short: give at least 10ms" "${IO[@]}" --report-interval 1us
usage interval-5ms "at least 10ms" "${IO[@]}" --report-interval 5ms
usage hex-size "invalid value '0x10M' for --file-size: expected a decimal size" \
  "$APPSIM" io --target "$W/io" --file-size 0x10M --duration 1
usage hex-duration "invalid value '0x2' for --duration" "${IO[@]}" --duration 0x2
usage hex-whole "invalid value '0x4' for --threads" "${IO[@]}" --threads 0x4
"$APPSIM" io --target "$W/io" --file-size 8M --duration 0.3 --warmup 0 --quiet --report-interval 10ms \
  --json "$W/io.json" >/dev/null 2>"$W/io.err" || fail "--report-interval 10ms: $(cat "$W/io.err")"

for dry in --dry-run ""; do
  usage "suite-bogus$dry" "tpcc: unknown option '--bogus'.*|step tpcc: its command line is refused" \
    "$APPSIM" suite review --target "$W/suite-t" -o "$W/suite-o" $dry "tpcc=--bogus"
  usage "suite-hex$dry" "invalid value '0x2' for --scale" \
    "$APPSIM" suite review --target "$W/suite-t" -o "$W/suite-o" $dry "tpcc=--scale 0x2"
done
[ ! -e "$W/suite-t" ] && [ ! -e "$W/suite-o" ] || fail "a refused suite created its directories"

fx_result "$W/good.json" tpcc "Good Drive" G1 10 2 $(fx_seq 100000 1000 40)
sed -e 's/"tps":[0-9.]*/"tps":-50/' -e 's/"count":40,"errors"/"count":-100,"errors"/' "$W/good.json" >"$W/neg.json"
usage compare-negative "neg.json: summary.tps is negative" "$APPSIM" compare "$W/good.json" "$W/neg.json"

if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null && [ -d /run/lock ]; then
  truncate -s 8M "$W/disk.img"
  if DEV=$(losetup -f --show "$W/disk.img" 2>/dev/null); then
    trap 'losetup -d "$DEV"' EXIT
    lock="/run/lock/appsim-dev-$(stat -c '%t-%T' "$DEV" | { IFS=- read -r a b; echo "$((16#$a))-$((16#$b))"; }).lock"
    for i in $(seq 0 7); do echo "$((128166385295514663 + i * 1000)),hm,0,Write,$((i * 65536)),4096,100"; done >"$W/w.csv"
    "$APPSIM" replay "$W/w.csv" --target "$DEV" --allow-destroy --timing afap --quiet >/dev/null 2>"$W/r.err" ||
      fail "replay on $DEV: $(cat "$W/r.err")"
    [ ! -e "$lock" ] || fail "the device's lock file $lock stayed after the run"
  fi
fi
echo "small gaps: ok"
