#!/bin/bash
# Comparator state through qsort_r, never through file-scope variables
# (issue 14 item 9): a comparator that reads a static set just before the
# qsort call is state shared by every caller (not reentrant, and the next
# reader must find where it is set). Checked on the sources of the offline
# tools: for every qsort/qsort_r/bsearch call, the comparator's body must
# not name a mutable file-scope variable of its file.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 not installed"
cd "$VPROF_ROOT" || exit 2
cat > "$TMP/lint.py" <<'EOF'
import re, sys
bad, seen = [], 0
for path in sys.argv[1:]:
    src = open(path).read()
    code = re.sub(r'/\*.*?\*/|//[^\n]*', ' ', src, flags=re.S)
    code = re.sub(r'"(\\.|[^"\\])*"', '""', code)
    # mutable file-scope variables: a line at column 0 declaring a static
    # object (no parameter list before '=', ';' or '['), not const-qualified
    # at the top level
    globs = set()
    for m in re.finditer(r'^static\s+([^;{(]*?)\b([A-Za-z_]\w*)\s*(=|;|\[)', code, re.M):
        decl = m.group(1)
        if re.search(r'\bconst\s*$', decl) or (re.match(r'\s*const\b', decl) and '*' not in decl):
            continue
        globs.add(m.group(2))
    for m in re.finditer(r'\b(qsort_r|qsort|bsearch)\s*\(', code):
        # the comparator: the 4th argument of qsort/qsort_r, the 5th of bsearch
        depth, args, cur = 0, [], ''
        for ch in code[m.end():]:
            if ch in '([{': depth += 1
            if ch in ')]}':
                if depth == 0: args.append(cur); break
                depth -= 1
            if ch == ',' and depth == 0: args.append(cur); cur = ''; continue
            cur += ch
        k = 4 if m.group(1) == 'bsearch' else 3
        if len(args) <= k: continue
        for name in re.findall(r'[A-Za-z_]\w*', args[k]):
            body = re.search(r'\bint\s+' + name + r'\s*\([^)]*\)\s*\{', code)
            if not body: continue
            seen += 1
            depth, i = 1, body.end()
            while depth and i < len(code):
                depth += {'{': 1, '}': -1}.get(code[i], 0); i += 1
            used = set(re.findall(r'[A-Za-z_]\w*', code[body.end():i])) & globs
            if used:
                bad.append('%s:%s reads %s' % (path, name, ','.join(sorted(used))))
print(seen)
for b in sorted(set(bad)): print(b)
EOF
out=$(python3 "$TMP/lint.py" vprof-report/*.c vprof-report/tools/*.c dwarf-meta/*.c \
        libvprof/format/*.c libvprof/format/offline/*.c)
n=$(echo "$out" | head -1)
bad=$(echo "$out" | tail -n +2)
[ -n "$bad" ] && echo "$bad" | sed "s/^/# /"
check "the comparators were found ($n)" test "${n:-0}" -ge 30
check "no comparator reads a file-scope variable (state through qsort_r)" test -z "$bad"

# the check itself: a comparator with a static context is caught
mkdir -p "$TMP/x"
cat > "$TMP/x/probe.c" <<'EOF'
#include <stdlib.h>
static const int *ctx_v;
static int cmp(const void *a, const void *b) { return ctx_v[*(const int *)a] - ctx_v[*(const int *)b]; }
void f(int *o, size_t n, const int *v) { ctx_v = v; qsort(o, n, sizeof *o, cmp); }
EOF
probe=$(python3 "$TMP/lint.py" "$TMP/x/probe.c")
check "the check catches a comparator with a static context" \
    test "$(echo "$probe" | tail -n +2)" = "$TMP/x/probe.c:cmp reads ctx_v"
finish
