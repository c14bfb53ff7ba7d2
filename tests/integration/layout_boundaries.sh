#!/usr/bin/env bash
# tests/integration/layout_boundaries.sh: the folders keep to their contracts. SQLite is
# storage/sqlite/'s and oltp/'s business: storage/storage.h, trace/, kv/ and sim/ must
# not include sqlite3.h or storage/sqlite/ (so that trace/ never sees SQLite), and only
# storage/sqlite/ includes its private header.
set -u
: "${APPSIM_SRC:?}"
cd "$APPSIM_SRC" || exit 1
errors=0
fail() {
  echo "FAIL: $*"
  errors=$((errors + 1))
}
for f in storage/storage.h $(find trace -name '*.[ch]'; ls kv/*.[ch] sim/*.[ch] sim/review/*.[ch]); do
  while IFS= read -r l; do
    fail "$f includes SQLite: $l"
  done < <(grep -nE '#include [<"](sqlite3\.h|storage/sqlite/)' "$f")
done
for f in $(grep -rlE '#include "storage/sqlite/sqlite_internal\.h"' --include='*.[ch]' . | grep -v '^\./storage/sqlite/' | grep -v '^\./tests/' | grep -v '^\./build'); do
  fail "$f includes storage/sqlite/'s private header"
done
[ -f storage/sqlite/sqlite.h ] || fail "storage/sqlite/sqlite.h is missing"
[ "$errors" -eq 0 ] || exit 1
echo "layout boundaries: ok"
