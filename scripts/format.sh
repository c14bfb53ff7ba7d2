#!/usr/bin/env bash
# Checks that every C source and header tracked by git follows .clang-format; lists the
# files that drift and exits 1. `scripts/format.sh --fix` rewrites them in place.
# The style is pinned to Debian 12's clang-format (14): other versions format a few
# constructs differently, so the check refuses to judge with another major version.
set -euo pipefail
cd "$(dirname "$0")/.."
want=14
cf=$(command -v clang-format-$want || command -v clang-format || true)
if [ -z "$cf" ]; then
  echo "format: clang-format not found; install Debian's clang-format (scripts/deps.sh)" >&2
  exit 2
fi
major=$("$cf" --version | sed -n 's/.*clang-format version \([0-9]*\).*/\1/p')
if [ "$major" != "$want" ]; then
  echo "format: $cf is version $major; the style is checked with clang-format $want (Debian 12)" >&2
  exit 2
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.h')
else # an unpacked source tree without git
  mapfile -t files < <(find sim storage oltp kv trace tests -name '*.[ch]' | sort)
fi
if [ "${1:-}" = "--fix" ]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
# One run over all files; the diagnostics name each file that drifts.
rc=0
out=$("$cf" --dry-run --Werror "${files[@]}" 2>&1) || rc=$?
[ "$rc" -eq 0 ] && { echo "format: ${#files[@]} files follow .clang-format"; exit 0; }
mapfile -t drift < <(printf '%s\n' "$out" |
  sed -n 's/^\([^: ]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ ${#drift[@]} -eq 0 ]; then
  printf 'format: clang-format failed (exit %s):\n%s\n' "$rc" "$out" >&2
  exit 2
fi
if [ ${#drift[@]} -gt 0 ]; then
  echo "format: ${#drift[@]} file(s) differ from .clang-format; run scripts/format.sh --fix:" >&2
  for f in "${drift[@]}"; do
    echo "  $f" >&2
    "$cf" "$f" | diff -u "$f" - | sed -n '3,20p' >&2 || true
  done
  exit 1
fi
