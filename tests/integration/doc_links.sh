#!/usr/bin/env bash
# tests/integration/doc_links.sh: the manuals hold together. Every relative Markdown
# link in README.md and docs/ names a file that exists (and a heading of it, when the
# link has an #anchor); every "docs/NAME.md" a source file, script or doc mentions
# exists, and where the mention quotes a section (docs/NAME.md, "Section" or
# docs/NAME.md "Section"), that file has a heading or a bold run-in title containing
# it. The manuals stay manuals: no user doc in docs/ is over 600 lines, and none of the docs tells
# development history ("round N", "the Nth session", "issue N").
set -u
: "${APPSIM_SRC:?}"
cd "$APPSIM_SRC" || exit 1
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }

python3 - <<'EOF'
import os, re, subprocess, sys

errors = []
# docs/fidelity.md is kept apart from the manuals and may land after the README's link
# to it: a link to it is checked once the file exists.
MAY_FOLLOW = {"docs/fidelity.md"}

def headings(path, bold=False):
    """The headings of a Markdown file; with bold, also its **bold** run-in titles."""
    out = []
    with open(path, encoding="utf-8") as f:
        in_code = False
        for line in f:
            if line.startswith("```"):
                in_code = not in_code
            elif not in_code and line.startswith("#"):
                out.append(line.lstrip("#").strip())
            elif not in_code and bold:
                out.extend(re.findall(r"\*\*([^*]+)\*\*", line))
    return out

def slug(h):
    s = h.lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")

docs = ["README.md"] + sorted(
    os.path.join(d, f) for d, _, fs in os.walk("docs") for f in fs if f.endswith(".md"))

link_re = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
for doc in docs:
    text = open(doc, encoding="utf-8").read()
    for target in link_re.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(doc), path))
        if not os.path.exists(full):
            if full in MAY_FOLLOW:
                print(f"note: {doc} links to {full}, not there yet")
                continue
            errors.append(f"{doc}: link to {target}: {full} does not exist")
            continue
        if anchor and full.endswith(".md"):
            if anchor not in [slug(h) for h in headings(full)]:
                errors.append(f"{doc}: link to {target}: no heading #{anchor} in {full}")

# Mentions of docs in every tracked text file, with a quoted section when one follows:
# docs/NAME.md and docs/measurements/NAME.md anywhere, and measurements/NAME.md in docs/.
files = subprocess.run(["git", "ls-files"], capture_output=True, text=True).stdout.split()
if not files:  # not a git checkout: walk the tree
    files = [os.path.relpath(os.path.join(d, f)) for d, _, fs in os.walk(".") for f in fs]
mention_re = re.compile(r'(?<![\w/.-])((?:docs/)?measurements/[a-z][a-z0-9_-]*\.md|docs/[a-z][a-z0-9_-]*\.md)'
                        r'(?:,? "([A-Za-z0-9][^"\n]*)"|, ([A-Z][A-Za-z0-9 ]*[a-z])(?=\)))?')
for src in files:
    if not re.search(r"\.(c|h|sh|bash|md|ini|txt|cmake)$|CMakeLists\.txt$", src):
        continue
    try:
        text = open(src, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError):
        continue
    text = re.sub(r"[ \t]*\n[ \t]*(?:\*(?!/)|#|//)?[ \t]*", " ", text)  # join wrapped lines
    for name, quoted, bare in mention_re.findall(text):
        section = quoted or bare
        if name.startswith("measurements/"):
            if not src.startswith("docs/") or src.startswith("docs/measurements/"):
                continue
            full = "docs/" + name
        else:
            full = name
        if not os.path.exists(full):
            if full not in MAY_FOLLOW:
                errors.append(f"{src}: mentions {name}: {full} does not exist")
            continue
        if section:
            want = section.lower()
            if not any(want in h.lower() for h in headings(full, bold=True)):
                errors.append(f'{src}: mentions {name}, "{section}": no such heading in {full}')

history_re = re.compile(
    r"(?<!steady-)(?<!steady-state )round [0-9]|\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|"
    r"eighteenth|nineteenth|twentieth) session|\bissue [0-9]+", re.I)
for doc in docs:
    lines = open(doc, encoding="utf-8").read().splitlines()
    if doc.startswith("docs/") and not doc.startswith("docs/measurements/") and len(lines) > 600:
        errors.append(f"{doc}: {len(lines)} lines (a manual stays under 600)")
    for n, line in enumerate(lines, 1):
        if history_re.search(line):
            errors.append(f"{doc}:{n}: development history: {line.strip()[:100]}")

for e in errors:
    print("FAIL:", e)
print(f"{len(docs)} docs checked, {len(errors)} problem(s)")
sys.exit(1 if errors else 0)
EOF
