# tests/integration/compare_fixtures.bash: sourced by compare_*.sh, report_*.sh and
# suite_*.sh. Writes appsim result files with known contents from bash alone: the
# histogram buckets follow the fixed layout of docs/result-schema.md (index = value in
# ns below 2048; above, 1,024 buckets per power of two).

fx_bucket() { # VALUE_NS -> bucket index
  local v=$1 b=0 t
  if ((v < 2048)); then echo "$v"; return; fi
  t=$v
  while ((t > 1)); do t=$((t >> 1)); b=$((b + 1)); done
  echo $((2048 + (b - 11) * 1024 + (v >> (b - 10)) - 1024))
}

# fx_result FILE WORKLOAD MODEL SERIAL SCALE SECONDS VALUE_NS...
# One sample per VALUE_NS; tps = samples / SECONDS.
fx_result() {
  local file=$1 wl=$2 model=$3 serial=$4 scale=$5 secs=$6
  shift 6
  local n=$# sum=0 min=$1 max=$1 v buckets="" idx
  declare -A cnt=()
  for v in "$@"; do
    sum=$((sum + v)); ((v < min)) && min=$v; ((v > max)) && max=$v
    idx=$(fx_bucket "$v"); cnt[$idx]=$(( ${cnt[$idx]:-0} + 1 ))
  done
  for idx in $(printf '%s\n' "${!cnt[@]}" | sort -n); do
    buckets+="${buckets:+,}[$idx,${cnt[$idx]}]"
  done
  local tps mean
  tps=$(awk -v n="$n" -v s="$secs" 'BEGIN{printf "%.6f", n/s}')
  mean=$(awk -v n="$n" -v s="$sum" 'BEGIN{printf "%.3f", s/n/1000}')
  local hist="{\"layout\":\"loglinear-ns-1024x42\",\"count\":$n,\"sum_ns\":$sum,\"min_ns\":$min,\"max_ns\":$max,\"clamped\":0,\"buckets\":[$buckets]}"
  cat >"$file" <<JSON
{"schema":"appsim-result/1","tool":{"name":"appsim","version":"test"},
 "command":"appsim $wl --scale $scale","workload":"$wl",
 "config":{"scale":$scale,"duration":60,"target":"/mnt/$serial"},
 "host":{"cpu":"test","cores":2},
 "target":{"path":"/mnt/$serial","model":"$model","serial":"$serial"},
 "started_at":"2026-11-29T19:00:00Z","interrupted":false,
 "summary":{"unit":"tps","tps":$tps,"count":$n,"errors":0,"seconds":$secs,
            "latency_us":{"count":$n,"mean_us":$mean}},
 "intervals":[{"t":10,"phase":"measure","rate":$tps,"latency_us":{"p99_us":$mean}},
              {"t":20,"phase":"measure","rate":$tps,"latency_us":{"p99_us":$mean}}],
 "histograms":{"all":$hist}}
JSON
}

fx_seq() { # START STEP COUNT -> values
  local i
  for ((i = 0; i < $3; i++)); do echo $(($1 + i * $2)); done
}
