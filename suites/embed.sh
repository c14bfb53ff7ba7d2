#!/usr/bin/env bash
# Regenerates sim/review/suite_builtin.c from the suite files in suites/ (the binary carries
# them so that `appsim suite review` works wherever it is copied). Run after editing a
# suite file; tests/unit/test_compare_suite.c fails while the two differ.
set -euo pipefail
cd "$(dirname "$0")/.."
out=sim/review/suite_builtin.c
{
  # clang-format off: each line of a suite file stays one string line (scripts/format.sh).
  cat <<'HEAD'
/* clang-format off */
/*
 * sim/review/suite_builtin.c: the suites built into the binary, so `appsim suite review` works
 * wherever the binary is copied. Generated from the .ini files in suites/ by suites/embed.sh (a unit
 * test, test_compare_suite, checks the two are identical): edit the .ini, then run it.
 */
#include "sim/review/suite_internal.h"

#include <string.h>

HEAD
  names=()
  for f in suites/*.ini; do
    n=$(basename "$f" .ini)
    names+=("$n")
    echo "static const char suite_${n//-/_}[] ="
    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$/\\n"/' "$f"
    echo "    ;"
    echo
  done
  echo "static const struct {"
  echo "    const char *name;"
  echo "    const char *text;"
  echo "} builtins[] = {"
  for n in "${names[@]}"; do echo "    {\"$n\", suite_${n//-/_}},"; done
  echo "};"
  echo
  echo "static const char *const names[] = {"
  for n in "${names[@]}"; do echo "    \"$n\","; done
  echo "    NULL,"
  echo "};"
  cat <<'TAIL'

const char *suite_builtin(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (!strcmp(builtins[i].name, name))
            return builtins[i].text;
    return NULL;
}

const char *const *suite_builtin_names(void)
{
    return names;
}
TAIL
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
