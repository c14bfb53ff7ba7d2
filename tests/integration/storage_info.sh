#!/usr/bin/env bash
# `appsim info`: describes a directory on this machine's disk (text and --json result
# file with the identity fields), refuses bad targets with exit 2 without creating
# anything, and never writes into the target.
set -u
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$APPSIM_TMP"
T=$(mktemp -d "$APPSIM_TMP/info.XXXXXX")
trap 'rm -rf "$T"' EXIT

out=$("$APPSIM" info --target "$T" 2>&1) || fail "info on a directory: $out"
echo "$out" | grep -q "kind  *directory" || fail "no kind line: $out"
echo "$out" | grep -q "mount_point" || fail "no filesystem section: $out"
"$APPSIM" info --target "$T" --json "$T.json" >/dev/null 2>&1 || fail "info --json"
[ -z "$(ls -A "$T")" ] || fail "info wrote into the target: $(ls -A "$T")"
jq -e '.target.kind == "directory" and (.target.filesystem.type | type == "string")' "$T.json" >/dev/null ||
  fail "result lacks target.kind/filesystem: $(cat "$T.json")"
if jq -e '.target.device | type == "object"' "$T.json" >/dev/null; then
  jq -e '.target.device | (.name | length > 0) and .capacity_bytes > 0 and .logical_block_size >= 512
         and (.rotational | type == "boolean") and (.scheduler | type == "string")
         and (.unknown | type == "array")' "$T.json" >/dev/null ||
    fail "device identity incomplete: $(jq -c .target.device "$T.json")"
fi
rm -f "$T.json"

# Bad targets: exit 2, a message that says what to do, nothing created.
out=$("$APPSIM" info --target "$T/missing" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "missing path exit $rc"
echo "$out" | grep -q "does not exist" || fail "missing path message: $out"
[ ! -e "$T/missing" ] || fail "info created the missing path"
echo data >"$T/file"
out=$("$APPSIM" info --target "$T/file" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "regular file exit $rc"
echo "$out" | grep -q "regular file" || fail "regular file message: $out"
"$APPSIM" info >/dev/null 2>&1; [ $? -eq 2 ] || fail "info without --target must exit 2"
echo "storage info: ok"
