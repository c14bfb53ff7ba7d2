#!/usr/bin/env bash
# tests/integration/alloc_policy.sh: one allocation policy (sim/sim.h, "memory"). No
# source file calls malloc, calloc, realloc, reallocarray, strdup, strndup, asprintf,
# vasprintf, posix_memalign, aligned_alloc, memalign or valloc itself: appsim's memory
# comes from sim_x*, which never return NULL. The allowed calls (the wrapper itself,
# sizes from user options whose caller names the option to lower) carry
# `appsim-alloc: <reason>` on their line or in the comment just above; the list of them,
# with reasons, is printed. The detector is first shown to catch a raw call.
set -u
: "${APPSIM_SRC:?}"
cd "$APPSIM_SRC" || exit 1

# Prints "file:line: text" for each raw call without a marker, "ALLOWED file:line: reason"
# for each marked one, and "NOREASON file:line" for a marker without a reason.
scan() {
  perl -ne '
    BEGIN { @prev = ("", "", ""); $in_comment = 0; }
    my $raw = $_;
    my $code = $_;
    # Drop comments and string literals, so that prose and messages do not count.
    if ($in_comment) {
      if ($code =~ s{^.*?\*/}{}) { $in_comment = 0; } else { $code = ""; }
    }
    $code =~ s{/\*.*?\*/}{}g;
    if ($code =~ s{/\*.*$}{}) { $in_comment = 1; }
    $code =~ s{//.*$}{};
    $code =~ s{"(?:\\.|[^"\\])*"}{""}g;
    $code =~ s{\x27(?:\\.|[^\x27\\])*\x27}{0}g;
    if ($code =~ /(?<![\w.>])(malloc|calloc|realloc|reallocarray|strdup|strndup|v?asprintf|posix_memalign|aligned_alloc|memalign|valloc)\s*\(/) {
      my $call = $1;
      # The marker: on the line, else in the comment lines just above it.
      my $near = $raw;
      if ($raw !~ /appsim-alloc:/) {
        for my $p (reverse @prev) {
          last unless $p =~ m{^\s*(/\*|\*|//)};
          $near = $p . $near;
        }
      }
      if ($near =~ /appsim-alloc:\s*(\w[^\n]*)/) {
        my $why = $1; $why =~ s{\s*\*/\s*$}{};
        print "ALLOWED $ARGV:$.: $call: $why\n";
      } elsif ($near =~ /appsim-alloc:/) {
        print "NOREASON $ARGV:$.\n";
      } else {
        chomp $raw; $raw =~ s/^\s+//;
        print "$ARGV:$.: $raw\n";
      }
    }
    @prev = (@prev[1, 2], $raw);
    if (eof) { close ARGV; @prev = ("", "", ""); $in_comment = 0; }
  ' "$@"
}

errors=0
# The detector catches a raw call, accepts a marked one, and refuses a bare marker.
probe=$(mktemp "${TMPDIR:-/tmp}/alloc_policy.XXXXXX.c")
trap 'rm -f "$probe"' EXIT
printf '%s\n' 'void f(void) {' '    char *s = strdup(x); /* "malloc(" in a comment */' \
  '    /* appsim-alloc: sized from --buffer; the caller names it */' \
  '    if (posix_memalign(&p, 4096, n)) return;' '    p = calloc(1, 2); /* appsim-alloc: */' \
  '    sim_xmalloc(3); q->malloc(4); puts("realloc(");' '}' >"$probe"
got=$(scan "$probe" | sed "s|$probe|probe|")
want="probe:2: char *s = strdup(x); /* \"malloc(\" in a comment */
ALLOWED probe:4: posix_memalign: sized from --buffer; the caller names it
NOREASON probe:5"
if [ "$got" != "$want" ]; then
  echo "FAIL: the detector itself: got"
  echo "$got"
  errors=$((errors + 1))
fi

mapfile -t files < <(find sim storage oltp kv trace -name '*.[ch]' | sort)
[ ${#files[@]} -gt 100 ] || { echo "FAIL: only ${#files[@]} source files found"; exit 1; }
report=$(scan "${files[@]}")
while IFS= read -r l; do
  [ -n "$l" ] || continue
  case "$l" in
  ALLOWED*) ;;
  NOREASON*) echo "FAIL: ${l#NOREASON } marks an allocation as allowed without a reason"
    errors=$((errors + 1)) ;;
  *) echo "FAIL: raw allocation (use sim_x*, sim/sim.h \"memory\"): $l"
    errors=$((errors + 1)) ;;
  esac
done <<<"$report"
allowed=$(grep -c '^ALLOWED' <<<"$report")
echo "allowed raw allocations ($allowed):"
grep '^ALLOWED' <<<"$report" | sed 's/^ALLOWED /  /'
[ "$errors" -eq 0 ] || exit 1
echo "allocation policy: ok (${#files[@]} files)"
