#!/usr/bin/env bash
# `appsim export` through the real binary: the interval series as CSV and the histograms
# as an HdrHistogram interval log, read back by HdrHistogram's own HistogramLogProcessor
# (Debian's libhdrhistogram-java, in scripts/deps.sh): its total count and percentiles
# must be the result's.
set -euo pipefail
source "$(dirname "$0")/compare_fixtures.bash"
: "${APPSIM:?}" "${APPSIM_TMP:?}"
rm -rf "$APPSIM_TMP"; mkdir -p "$APPSIM_TMP"; cd "$APPSIM_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 400 samples of 100, 101, ... 499 us: the 200th smallest (p50) is 299 us, the 396th
# (p99) 495 us.
fx_result r.json tpcc "Fast Drive" F1 10 2 $(fx_seq 100000 1000 400)
"$APPSIM" export r.json --csv r.csv --hlog r.hlog
head -1 r.csv | grep -qx 'series,t,seconds,phase,rate,count,errors_per_s,mean_us,p50_us,p90_us,p95_us,p99_us,p999_us,max_us' \
  || fail "csv header: $(head -1 r.csv)"
[ "$(grep -c '^run,' r.csv)" = 2 ] || fail "csv rows: $(cat r.csv)"
grep -q '^run,20,,measure,200,' r.csv || fail "csv values: $(cat r.csv)"
head -1 r.hlog | grep -qx '#\[Histogram log format version 1.3\]' || fail "hlog version line"
grep -q '^#\[StartTime: 1795978800.000 (seconds since epoch), ' r.hlog || fail "start time: $(grep StartTime r.hlog)"
[ "$(grep -c '^[0-9]' r.hlog)" = 1 ] || fail "one untagged histogram line expected: $(cat r.hlog)"
grep -Eq '^0\.000,2\.000,0\.499,HISTF[A-Za-z0-9+/=]+$' r.hlog || fail "line: $(tail -1 r.hlog)"

# Refusals.
set +e
"$APPSIM" export r.json >/dev/null 2>err.txt; rc1=$?
"$APPSIM" export r.json --csv - --hlog - >/dev/null 2>>err.txt; rc2=$?
"$APPSIM" export >/dev/null 2>>err.txt; rc3=$?
set -e
[ "$rc1$rc2$rc3" = 222 ] || fail "refusals: $rc1 $rc2 $rc3 $(cat err.txt)"

JAR=/usr/share/java/hdrhistogram.jar
if ! command -v java >/dev/null || [ ! -r "$JAR" ]; then
  echo "SKIPPED: HdrHistogram's reader is not installed (Debian packages libhdrhistogram-java" \
       "and default-jre-headless, in scripts/deps.sh); the log was not read back" >&2
  exit 77
fi
java -cp "$JAR" org.HdrHistogram.HistogramLogProcessor -i r.hlog -csv -outputValueUnitRatio 1000 \
  >dist.csv 2>java.log || fail "HistogramLogProcessor: $(cat java.log)"
# Value (us), Percentile, TotalCount, ...: every row of the distribution must count
# exactly the samples at or below its value (samples are 1 us apart and HdrHistogram
# reports a bucket's highest equivalent value, less than 256 ns above it), and the
# total must be the result's.
python3 - <<'PY' || fail "HdrHistogram read back other figures: $(head -5 dist.csv)"
import csv, math
rows = [r for r in csv.reader(open("dist.csv")) if r and r[0][0].isdigit()]
assert len(rows) > 20, rows
assert int(rows[-1][2]) == 400, rows[-1]
for r in rows:
    v, total = float(r[0]), int(r[2])
    want = min(400, max(0, math.floor(v) - 99))
    assert total == want, (r, want)
PY
echo "export_cli: ok"
