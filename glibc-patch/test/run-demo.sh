#!/bin/bash
# run-demo.sh OUT CC: links test/vprof-static-demo.c statically with -pg
# against the patched OUT/lib/libc.a, runs it three ways and checks what it
# wrote, printing one "ok - ..." / "not ok - ..." line per check:
#   1. no VPROF_OUT, no metadata: plain glibc behaviour (gmon.out only);
#   2. VPROF_OUT and metadata, with a forked child: per-process gmon, layout
#      and value files; values equal what the program held; a caller's
#      variable is sampled through the unwinder; binutils gprof reads both
#      gmon files; the child's profile is its own;
#   3. corrupt metadata: one message, profiling without values.
# Exits non-zero if any check fails.
set -u
out=$1 cc=$2
here=$(cd "$(dirname "$0")" && pwd)
d=$out/demo
bin=$d/vprof-static-demo
rounds=40 per=6000000
fails=0
ok()   { echo "ok - $*"; }
bad()  { echo "not ok - $*"; fails=$((fails + 1)); }
check() { local n=$1; shift; if "$@"; then ok "$n"; else bad "$n"; fi; }

rm -rf "$d" && mkdir -p "$d"
# -L puts the patched libc.a ahead of the installed one; gcc's driver adds
# the installed gcrt1.o (the patch does not touch csu/).
if ! "$cc" -static -pg -O2 -g -L"$out/lib" -Wl,-Map="$d/link.map" \
        -o "$bin" "$here/vprof-static-demo.c" 2> "$d/link.log"; then
    cat "$d/link.log"; bad "link the static -pg demo"; exit 1
fi
check "the demo links the patched libc.a" grep -q "$out/lib/libc.a(vprof-core.o)" "$d/link.map"
check "the demo is static" sh -c "! readelf -l '$bin' | grep -q INTERP"

# ---- 1. plain glibc ----
mkdir -p "$d/plain" && (cd "$d/plain" && "$bin" 10 1000000 > /dev/null 2> stderr)
check "without vprof settings: only gmon.out is written" \
    sh -c "cd '$d/plain' && [ -s gmon.out ] && [ -z \"\$(ls | grep -v -e '^gmon.out\$' -e '^stderr\$')\" ] && [ ! -s stderr ]"
gprof -b -q "$bin" "$d/plain/gmon.out" > "$d/plain/gprof.txt" 2>&1
check "without vprof settings: gprof counts 10 calls of work" \
    grep -Eq '^ +[0-9.]+ +[0-9.]+ +10/10 +work' "$d/plain/gprof.txt"

# The same program on Debian's own libc.a: the call graph gprof prints (who
# calls whom, how often) must be identical. Only entries with a call count
# (7 fields): a tick that lands in an uninstrumented libc function adds a
# count-less entry in one run and not in another.
calls() { gawk '/^\[[0-9]+\]/ && NF == 7 { print $(NF-1), $(NF-2) }' "$1" | sort; }
if "$cc" -static -pg -O2 -g -o "$d/vprof-static-demo.stock" "$here/vprof-static-demo.c" 2>> "$d/link.log"; then
    mkdir -p "$d/stock" && (cd "$d/stock" && "$d/vprof-static-demo.stock" 10 1000000 > /dev/null)
    gprof -b -q "$d/vprof-static-demo.stock" "$d/stock/gmon.out" > "$d/stock/gprof.txt" 2>&1
    check "without vprof settings: the same call graph as Debian's unpatched libc.a" \
        test -n "$(calls "$d/stock/gprof.txt")" -a "$(calls "$d/stock/gprof.txt")" = "$(calls "$d/plain/gprof.txt")"
else
    bad "link the demo against the installed libc.a"
fi

# ---- 2. values, per-process files, fork ----
sym() { nm -S "$bin" | awk -v s="$1" '$4 == s {print $1, $2}'; }
read -r phase_addr phase_size <<< "$(sym demo_phase)"
read -r round_addr round_size <<< "$(sym demo_round)"
read -r rounds_lo rounds_size <<< "$(sym rounds)"
rounds_hi=$(printf '%x' $((0x$rounds_lo + 0x$rounds_size)))
# demo_phase: readable everywhere; demo_round: only while rounds() runs, so
# with the time spent in work() its samples come from unwound frames.
"$out/bin/vprof-mkmeta" "$d/demo.vmeta" \
    "demo_phase:$phase_addr:$((0x$phase_size)):0:ffffffffffffffff" \
    "demo_round:$round_addr:$((0x$round_size)):$rounds_lo:$rounds_hi" \
    || { bad "write the demo metadata"; exit 1; }

VPROF_OUT=$d/run VPROF_META=$d/demo.vmeta "$bin" $rounds $per 1 > "$d/run.stdout" 2> "$d/run.stderr"
check "the demo runs and exits 0 under vprof" grep -q "sink parity" "$d/run.stdout"
check "nothing on stderr" test ! -s "$d/run.stderr"
ids=$(cd "$d/run" 2>/dev/null && ls layout.* 2>/dev/null | sed 's/^layout\.//')
check "two processes, two layout logs" test "$(echo "$ids" | wc -w)" -eq 2
for id in $ids; do
    f=$d/run
    check "$id: gmon.$id.out, values.$id, layout.$id all present" \
        test -s "$f/gmon.$id.out" -a -s "$f/values.$id" -a -s "$f/layout.$id"
    check "$id: layout says the metadata loaded and the run ended" \
        sh -c "grep -q '^meta	.*	ok\$' '$f/layout.$id' && grep -q '^end	ticks=' '$f/layout.$id' && grep -q '^var	1	.*demo_round' '$f/layout.$id'"
    ppid=$(awk '$1 == "ppid" {print $2}' "$f/layout.$id")
    "$out/bin/vprof-vdump" "$f/values.$id" > "$f/values.$id.txt" 2>&1 \
        || { bad "$id: read values.$id"; continue; }
    is_child=0
    echo "$ids" | grep -qx "$ppid" && is_child=1
    want_phase=$((is_child + 1))
    gawk -v want="$want_phase" -v lo=$((0x$rounds_lo)) -v hi=$((0x$rounds_hi)) -v n=$rounds \
        -v tag="$id" '
        NR == 1 { clean = $NF; next }
        $1 == 0 { phase++; if ($4 != want) badphase++ }
        $1 == 1 { round++; pc = strtonum("0x" $3)
                  if ($2 >= 1) deep++
                  if (pc < lo || pc >= hi) badpc++
                  if ($4 < 0 || $4 >= n) badval++
                  if ($4 < last) backwards++; last = $4 }
        END {
            printf "%s: %d demo_phase samples, %d demo_round samples (%d unwound)\n", tag, phase, round, deep > "/dev/stderr"
            exit !(clean == 1 && phase > 0 && !badphase && round > 0 && deep > 0 && !badpc && !badval && !backwards)
        }' "$f/values.$id.txt" 2> "$f/values.$id.summary"
    rc=$?
    cat "$f/values.$id.summary"
    [ $rc -eq 0 ] && ok "$id: values are the ones the program held (demo_phase = $want_phase, demo_round in rounds(), unwound, in [0,$rounds), never backwards), file closed cleanly" \
                 || bad "$id: value samples (see $f/values.$id.txt)"
    gprof -b "$bin" "$f/gmon.$id.out" > "$f/gprof.$id.txt" 2>&1
    check "$id: binutils gprof reads gmon.$id.out: work has time and $rounds calls from rounds" \
        sh -c "grep -Eq '^ *[0-9.]+ +[0-9.]+ +[0-9.]*[1-9][0-9.]* +$rounds +.* +work\$' '$f/gprof.$id.txt' && grep -Eq '^ +[0-9.]+ +[0-9.]+ +$rounds/$rounds +work' '$f/gprof.$id.txt'"
done

# ---- 2b. metadata from vprof-meta (DWARF, schema-less): register-resident
# locals read from the signal context of a static binary ----
meta_tool=${VPROF_META_TOOL:-$(dirname "$out")/../bin/vprof-meta}
[ -x "$meta_tool" ] || meta_tool=$(cd "$here/../.." && pwd)/build/bin/vprof-meta
if [ -x "$meta_tool" ]; then
    "$meta_tool" --quiet --all --files '*vprof-static-demo.c' -o "$d/auto.vmeta" "$bin" \
        || bad "vprof-meta on the static demo"
    VPROF_OUT=$d/auto VPROF_META=$d/auto.vmeta "$bin" 20 $per > /dev/null 2> "$d/auto.stderr"
    lay=$(ls "$d"/auto/layout.* 2>/dev/null | head -1)
    vid() { gawk -F'\t' -v f="$1" -v n="$2" '$1 == "var" && $4 == f && $6 == n {print $2}' "$lay"; }
    w_n=$(vid work n) w_i=$(vid work i) g_p=$(vid '#global' demo_phase)
    "$out/bin/vprof-vdump" "${lay/layout./values.}" > "$d/auto/values.txt" 2>&1
    gawk -v wn="$w_n" -v wi="$w_i" -v gp="$g_p" -v per=$per '
        NR == 1 { next }
        $1 == wn && $2 == 0 { n++; if ($4 != per) badn++ }
        $1 == wi && $2 == 0 { i++; if ($4 < 0 || $4 >= per) badi++ }
        $1 == gp { p++; if ($4 != 1) badp++ }
        END {
            printf "vprof-meta metadata: work.n %d samples, work.i %d, demo_phase %d\n", n, i, p > "/dev/stderr"
            exit !(n > 0 && !badn && i > 0 && !badi && p > 0 && !badp)
        }' "$d/auto/values.txt" 2> "$d/auto/summary"
    rc=$?
    cat "$d/auto/summary"
    [ $rc -eq 0 ] && [ -n "$w_n" ] && [ ! -s "$d/auto.stderr" ] \
        && ok "vprof-meta metadata: work's n (= $per) and i (in [0,$per)) read from registers at the tick, demo_phase = 1" \
        || bad "vprof-meta metadata: register-resident locals (see $d/auto/values.txt)"
    # static-pie: the same, loaded at a random address (grcrt1.o).
    if "$cc" -static-pie -pg -O2 -g -L"$out/lib" -o "$bin.pie" "$here/vprof-static-demo.c" 2>> "$d/link.log" &&
       "$meta_tool" --quiet --all --files '*vprof-static-demo.c' -o "$d/pie.vmeta" "$bin.pie"; then
        VPROF_OUT=$d/pie VPROF_META=$d/pie.vmeta "$bin.pie" 20 $per > /dev/null 2> "$d/pie.stderr"
        lay=$(ls "$d"/pie/layout.* 2>/dev/null | head -1)
        "$out/bin/vprof-vdump" "${lay/layout./values.}" > "$d/pie/values.txt" 2>&1
        w_n=$(vid work n)
        check "static-pie: load bias applied, work's n read correctly, gprof reads the gmon file" \
            sh -c "! grep -q '^load_bias	0x0\$' '$lay' && grep -q '^meta	.*	ok\$' '$lay' &&
                   gawk -v wn='$w_n' -v per=$per 'NR > 1 && \$1 == wn && \$2 == 0 { n++; if (\$4 != per) bad++ }
                        END { exit !(n > 0 && !bad) }' '$d/pie/values.txt' &&
                   gprof -b -p '$bin.pie' '$d'/pie/gmon.*.out | grep -Eq ' 20 .* work\$'"
    else
        bad "static-pie: link and vprof-meta"
    fi
    # Threads: ticks land in whichever thread runs; each sample carries it.
    VPROF_OUT=$d/threads VPROF_META=$d/auto.vmeta "$bin" 10 $per 0 2 > /dev/null 2> "$d/threads.stderr"
    check "two threads: the program exits normally" test $? -eq 0
    lay=$(ls "$d"/threads/layout.* 2>/dev/null | head -1)
    "$out/bin/vprof-vdump" "${lay/layout./values.}" > "$d/threads/values.txt" 2>&1
    w_n=$(vid work n)
    tids=$(gawk -v wn="$w_n" -v per=$per 'NR > 1 && $1 == wn && $2 == 0 { if ($4 != per) bad = 1; t[$5] = 1 }
              END { if (bad) print "bad"; else print length(t) }' "$d/threads/values.txt")
    echo "threads: work.n sampled in $tids thread(s)"
    check "two threads: work's n sampled correctly in at least 2 threads" test "$tids" != bad -a "${tids:-0}" -ge 2
else
    echo "skip: no vprof-meta binary (make vprof-meta); DWARF-derived metadata not tried"
fi

# ---- 2b'. metadata without VPROF_OUT: glibc's naming, values beside it ----
mkdir -p "$d/pfx"
(cd "$d" && GMON_OUT_PREFIX=pfx/prof VPROF_META=$d/demo.vmeta "$bin" 5 1000000 > /dev/null 2>&1)
pid=$(ls "$d/pfx" | sed -n 's/^prof\.\([0-9]*\)$/\1/p')
check "metadata, no VPROF_OUT: GMON_OUT_PREFIX.<pid>, values.<pid>, layout.<pid> side by side" \
    test -n "$pid" -a -s "$d/pfx/values.$pid" -a -s "$d/pfx/layout.$pid"

# ---- 2c. SIGKILL mid-run: the samples taken so far are on disk ----
VPROF_OUT=$d/killed VPROF_META=$d/demo.vmeta "$bin" 100000 $per > /dev/null 2>&1 &
victim=$!
for _ in $(seq 50); do                  # until some ticks were recorded
    v=$(ls "$d"/killed/values.* 2>/dev/null | head -1)
    [ -n "$v" ] && [ "$("$out/bin/vprof-vdump" "$v" 2>/dev/null | wc -l)" -gt 5 ] && break
    sleep 0.1
done
kill -KILL $victim 2>/dev/null; wait $victim 2>/dev/null
v=$(ls "$d"/killed/values.* 2>/dev/null | head -1)
"$out/bin/vprof-vdump" "$v" > "$d/killed/values.txt" 2>&1
check "SIGKILL: the value samples taken before the kill are readable (file not marked clean)" \
    gawk 'NR == 1 { clean = $NF; next } { n++ } END { exit !(clean == 0 && n > 0) }' "$d/killed/values.txt"
check "SIGKILL: the layout log has no end line" sh -c "! grep -q '^end' '$d'/killed/layout.*"

# ---- 3. corrupt metadata ----
head -c 100 "$d/demo.vmeta" > "$d/bad.vmeta"
mkdir -p "$d/bad" && (cd "$d/bad" && VPROF_OUT=$d/bad/run VPROF_META=$d/bad.vmeta "$bin" 5 1000000 > /dev/null 2> stderr; echo $? > rc)
check "corrupt metadata: the program still exits 0" test "$(cat "$d/bad/rc")" = 0
check "corrupt metadata: one vprof message naming the file" \
    sh -c "[ \$(wc -l < '$d/bad/stderr') -eq 1 ] && grep -q '^vprof: $d/bad.vmeta: ' '$d/bad/stderr'"
check "corrupt metadata: gmon and layout written, no values" \
    sh -c "ls '$d/bad/run'/gmon.*.out >/dev/null && grep -q '^meta	.*	error ' '$d/bad/run'/layout.* && ! ls '$d/bad/run'/values.* 2>/dev/null"

echo "demo output in $d"
[ $fails -eq 0 ]
