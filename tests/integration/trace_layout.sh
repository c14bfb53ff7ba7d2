#!/usr/bin/env bash
# tests/integration/trace_layout.sh: trace/ keeps to its layout (trace/trace.h states it).
# - trace/ itself holds trace/trace.h and the folders lib/, replay/, io/, vdi/ and
#   capture/, nothing else: a file that belongs in a folder is not left beside them;
# - a file whose name says it belongs to another folder (replay_*, io_*, vdi_*,
#   capture_*) is in that folder;
# - each folder has the header that states its contract;
# - a file in a folder includes its own folder's headers, trace/lib/lib.h (the trace
#   library's header), trace/trace.h and the public headers of the floors below trace/
#   (sim/, storage/): never another folder's private header, never a folder above;
# - outside trace/ (tests aside) nothing includes more of trace/ than trace/trace.h.
set -u
: "${APPSIM_SRC:?}"
cd "$APPSIM_SRC" || exit 1
errors=0
fail() {
  echo "FAIL: $*"
  errors=$((errors + 1))
}
folders="lib replay io vdi capture"
declare -A contract=([lib]=lib.h [replay]=replay_internal.h [io]=io_internal.h
  [vdi]=vdi_internal.h [capture]=capture_internal.h)

# The folder a file's name ties it to, or nothing (the trace library's files have no
# common prefix: formats, input, source, scan, writer, ...).
folder_of_name() {
  case "$1" in
  replay_*) echo replay ;;
  io_*) echo io ;;
  vdi_*) echo vdi ;;
  capture_*) echo capture ;;
  esac
}

for p in trace/*; do
  name=${p#trace/}
  case " trace.h $folders " in
  *" $name "*) continue ;;
  esac
  home=$(folder_of_name "$name")
  fail "$p stands at trace/'s top level, which holds only trace.h and the folders" \
    "($folders); move it into trace/${home:-lib}/"
done

for d in $folders; do
  [ -f "trace/$d/${contract[$d]}" ] || fail "trace/$d/${contract[$d]} (the folder's contract) is missing"
done

for d in $folders; do
  for f in $(find "trace/$d" -name '*.[ch]' | sort); do
    name=${f##*/}
    home=$(folder_of_name "$name")
    if [ -n "$home" ] && [ "$home" != "$d" ]; then
      fail "$f belongs in trace/$home/ (its name says so)"
    fi
    while IFS=: read -r line inc; do
      case "$inc" in
      "trace/$d/"* | trace/lib/lib.h | trace/trace.h) ;;
      trace/*/*_internal.h) fail "$f:$line includes $inc, another folder's private header" ;;
      trace/*) fail "$f:$line includes $inc: trace/$d/ includes only its own headers, trace/lib/lib.h and trace/trace.h" ;;
      *_internal.h | storage/sqlite/*) fail "$f:$line includes $inc, private to another folder" ;;
      sim/* | storage/*) ;;
      *) fail "$f:$line includes $inc: of the folders outside trace/ only sim/ and storage/ stand below it" ;;
      esac
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
      sed -E 's/^([0-9]+):[^"]*"([^"]*)".*/\1:\2/')
  done
done

for f in $(find sim storage oltp kv -name '*.[ch]' | sort); do
  while IFS= read -r l; do
    fail "$f includes $l: outside trace/ only trace/trace.h is included"
  done < <(grep -nE '#[[:space:]]*include[[:space:]]*"trace/' "$f" | grep -v '"trace/trace\.h"')
done

[ "$errors" -eq 0 ] || exit 1
echo "trace layout: ok"
